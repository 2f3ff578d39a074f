// The spec's corpora, byte-exact: every commit fixture and rejection
// (format.md 7) and every frame fixture and rejection (replication.md 5).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decodeCommit, encodeCommit, fromHex, toHex } from '../commit.js';
import { Document } from '../document.js';
import { decodeFrame, encodeFrame } from '../frame.js';
import { encode, toBase64url } from '../cbor.js';

const spec = process.env.AWEFT_SPEC ?? new URL('../../../testdata/aweft/spec', import.meta.url).pathname;
const read = (dir) => readdirSync(join(spec, dir)).filter((f) => f.endsWith('.json')).sort()
  .map((f) => [f, JSON.parse(readFileSync(join(spec, dir, f), 'utf8'))]);

// The fixtures write bytes values as {bytes: hex}; the model holds a Uint8Array.
const value = (v) => (v && typeof v === 'object' && 'bytes' in v ? fromHex(v.bytes) : v);
const delta = (d) => ('value' in d ? { ...d, value: value(d.value) } : d);

function load(state) {
  const doc = new Document(state.root, state.observables[state.root].kind);
  const deltas = [];
  const ids = [state.root];
  for (const [id, o] of Object.entries(state.observables)) {
    if (!ids.includes(id)) ids.push(id);
    for (const [key, v] of Object.entries(o.slots)) deltas.push({ type: 'add', id, ref: { kind: o.kind, key }, value: value(v) });
  }
  if (deltas.length) doc.apply({ deltas });
  return doc;
}

// snapshot is what a fixture's final state says: every observable reachable, with its slots.
function snapshot(doc) {
  const observables = {};
  for (const id of doc.reachable()) {
    const o = doc.get(id);
    observables[id] = { kind: o.kind, slots: Object.fromEntries([...o.slots].map(([k, v]) => [k, v instanceof Uint8Array ? { bytes: toHex(v) } : v])) };
  }
  return { root: doc.root, observables };
}

const shuffled = (a) => a.map((x) => [Math.random(), x]).sort((p, q) => p[0] - q[0]).map((p) => p[1]);

const commits = read('fixtures');
assert.equal(commits.length, 16);
for (const [file, fx] of commits) {
  test(`commit fixture ${file}`, () => {
    for (const c of fx.commits) {
      const deltas = c.deltas.map(delta);
      const want = { deltas, ...(c.tag ? { tag: fromHex(c.tag) } : {}) };
      assert.deepEqual(decodeCommit(fromHex(c.bytes)), want, 'bytes decode to the stated deltas');
      for (const order of [deltas, [...deltas].reverse(), shuffled(deltas)]) {
        assert.equal(toHex(encodeCommit({ ...want, deltas: order })), c.bytes, 'deltas in any order encode to the bytes');
      }
    }
    for (const order of [(d) => d, (d) => [...d].reverse(), shuffled]) {
      const doc = load(fx.initial);
      for (const c of fx.commits) doc.apply({ deltas: order(c.deltas.map(delta)) });
      const want = snapshot(load(fx.final));
      assert.deepEqual(snapshot(doc), want, 'applying reaches the stated document');
    }
  });
}

const rejections = read('fixtures/invalid');
assert.equal(rejections.length, 38);
for (const [file, fx] of rejections) {
  test(`commit rejection ${file}: ${fx.reason}`, () => {
    const bytes = fromHex(fx.bytes);
    if (fx.stage === 'decode') {
      assert.throws(() => decodeCommit(bytes), (e) => e.reason === fx.reason, `refused for ${fx.reason}`);
      return;
    }
    const c = decodeCommit(bytes);
    const doc = load(fx.initial);
    const before = snapshot(doc);
    assert.throws(() => doc.apply(c), (e) => e.reason === fx.reason && e.reasons[0].code === fx.reason);
    assert.deepEqual(snapshot(doc), before, 'a refused commit changes nothing');
  });
}

// The frame corpus writes ids as hex: the model holds them as text.
function frameOf(f) {
  const out = { ...f };
  if (f.kind === 'open') out.root = f.root ? { id: toBase64url(fromHex(f.root.id)), kind: f.root.kind } : null;
  const commit = (c) => ({ deltas: c.deltas.map((d) => {
    const m = delta({ ...d, id: toBase64url(fromHex(d.id)) });
    if (m.ref.kind === 'map') m.ref = { ...m.ref, key: toBase64url(fromHex(m.ref.key)) };
    if (m.value && typeof m.value === 'object' && 'ref' in m.value) m.value = { ...m.value, ref: toBase64url(fromHex(m.value.ref)) };
    return m;
  }), ...(c.tag ? { tag: fromHex(c.tag) } : {}) });
  if (f.kind === 'state') out.commit = f.commit ? commit(f.commit) : null;
  if (f.kind === 'commits') out.commits = f.commits.map(commit);
  return out;
}
const wireOf = (w) => (Array.isArray(w) ? w.map(wireOf) : w && typeof w === 'object' ? fromHex(w.hex) : w);

const frames = read('frames');
assert.equal(frames.length, 30);
for (const [file, fx] of frames) {
  test(`frame fixture ${file}`, () => {
    const bytes = fromHex(fx.bytes);
    if (fx.reason) {
      assert.throws(() => decodeFrame(bytes), (e) => e.reason === fx.reason, `refused for ${fx.reason}`);
      return;
    }
    const want = frameOf(fx.frame);
    assert.equal(toHex(encode(wireOf(fx.wire))), fx.bytes, 'the wire array encodes to the bytes');
    assert.deepEqual(decodeFrame(bytes), want, 'the bytes decode to the frame');
    assert.equal(toHex(encodeFrame(want)), fx.bytes, 'the frame encodes to the bytes');
  });
}
