// Against a running gateway (WEFTGATE_URL, a ws:// URL; web/node_test.go
// starts one): two ends converge, a refusal reaches only its origin, and a
// link that ends is resynced on the next one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, newId } from '../index.js';

const url = process.env.WEFTGATE_URL;
if (!url && process.env.CI) throw new Error('WEFTGATE_URL is not set: CI runs these tests against a gateway (go test ./web)');
const opts = { skip: url ? false : 'WEFTGATE_URL is not set (go test ./web starts a gateway and sets it)' };
const WAIT = 10_000;

// until resolves once check() holds, re-checking on every event of the
// shares; it fails after WAIT with what it was waiting for.
function until(shares, what, check) {
  return new Promise((resolve, reject) => {
    const offs = [];
    const done = (err) => { clearTimeout(timer); offs.forEach((off) => off()); err ? reject(err) : resolve(); };
    const timer = setTimeout(() => done(new Error(`timed out waiting for ${what}`)), WAIT);
    const probe = () => { if (check()) done(); };
    for (const s of shares) for (const ev of ['change', 'status', 'refused', 'fault']) offs.push(s.on(ev, probe));
    probe();
  });
}

const title = (doc, key) => doc?.get(doc.root).slots.get(key);
const set = (s, key, value) => s.commit({ deltas: [{ type: title(s.doc, key) === undefined ? 'add' : 'replace', id: s.doc.root, ref: { kind: 'object', key }, value }] });

async function pair(t) {
  const name = `node:${newId()}`;
  const a = new Client(url), b = new Client(url);
  t.after(() => { a.close(); b.close(); });
  const sa = a.share(name, { create: true });
  await until([sa], 'the first end to create the document', () => sa.status === 'live');
  const sb = b.share(name);
  await until([sb], 'the second end to join', () => sb.status === 'live');
  assert.equal(sb.doc.root, sa.doc.root, 'one document, one root');
  return { a, b, sa, sb };
}

test('two ends converge', opts, async (t) => {
  const { sa, sb } = await pair(t);
  set(sa, 'title', 'from a');
  set(sb, 'count', 1);
  const list = newId();
  sa.commit({ deltas: [{ type: 'add', id: sa.doc.root, ref: { kind: 'object', key: 'list' }, value: { ref: list, kind: 'array', edge: 'attach' } }] });
  await until([sb], 'b to see the list', () => sb.doc.get(list));
  sa.commit({ deltas: [{ type: 'add', id: list, ref: { kind: 'array', key: '40' }, value: 'a' }] });
  sb.commit({ deltas: [{ type: 'add', id: list, ref: { kind: 'array', key: '80' }, value: 'b' }] });
  await until([sa, sb], 'both ends to hold every edit', () =>
    JSON.stringify(sa.doc.toJSON()) === JSON.stringify(sb.doc.toJSON()) && sa.doc.get(list).slots.size === 2 && title(sa.doc, 'count') === 1);
  assert.deepEqual(sa.doc.toJSON(), { count: 1, list: ['a', 'b'], title: 'from a' });
});

test('one link carries several documents', opts, async (t) => {
  const { a, b, sa, sb } = await pair(t);
  const name = `node:${newId()}`;
  const sa2 = a.share(name, { create: true });
  await until([sa2], 'a second document on a\'s link', () => sa2.status === 'live');
  const sb2 = b.share(name);
  await until([sb2], 'b to join it on its link', () => sb2.status === 'live');
  assert.notEqual(sa.topic, sa2.topic, 'two topics on a\'s link');
  assert.notEqual(sb.topic, sb2.topic, 'two topics on b\'s link');
  set(sa, 'doc', 'first');
  set(sa2, 'doc', 'second');
  await until([sb, sb2], 'each document to reach b on its own topic', () => title(sb.doc, 'doc') === 'first' && title(sb2.doc, 'doc') === 'second');
});

test('a refusal reaches only its origin', opts, async (t) => {
  const { sa, sb } = await pair(t);
  const heardByB = [];
  sb.on('refused', (r) => heardByB.push(r));
  // a drifts: a slot only it holds, then a commit the gateway cannot apply.
  sa.doc.apply({ deltas: [{ type: 'add', id: sa.doc.root, ref: { kind: 'object', key: 'ghost' }, value: 1 }] });
  const refused = [];
  sa.on('refused', (r) => refused.push(r));
  const bad = { deltas: [{ type: 'replace', id: sa.doc.root, ref: { kind: 'object', key: 'ghost' }, value: 2 }] };
  sa.commit(bad);
  set(sa, 'after', true); // the next commit still lands
  await until([sa, sb], 'the refusal at a and the next commit at b', () => refused.length === 1 && title(sb.doc, 'after') === true);
  assert.equal(refused[0].mine, true);
  assert.equal(refused[0].reasons[0].code, 'slot-missing');
  assert.deepEqual(refused[0].commit, bad, 'the refused commit comes back with its report');
  assert.deepEqual(refused[0].undo.deltas[0], { type: 'replace', id: sa.doc.root, ref: { kind: 'object', key: 'ghost' }, value: 1 });
  assert.deepEqual(heardByB, [], 'the other end hears nothing of it');
  assert.equal(title(sb.doc, 'ghost'), undefined);
});

test('a link that ends is resynced on the next one', opts, async (t) => {
  const { a, sa, sb } = await pair(t);
  set(sa, 'before', 1);
  await until([sb], 'b to see a\'s edit', () => title(sb.doc, 'before') === 1);
  const links = [];
  a.on('status', (s) => links.push(s));
  a.drop();
  await until([sa], 'a to go offline', () => sa.status === 'offline');
  set(sb, 'while-away', 'b wrote this');
  set(sb, 'before', 2);
  await until([sa], 'a to reconnect and take the gateway\'s state', () => sa.status === 'live' && title(sa.doc, 'while-away') === 'b wrote this');
  assert.equal(title(sa.doc, 'before'), 2);
  assert.deepEqual(links.slice(0, 3), ['closed', 'connecting', 'open']);
  set(sa, 'back', true);
  await until([sb], 'b to see a\'s edit after the reconnect', () => title(sb.doc, 'back') === true);
  assert.deepEqual(sa.doc.toJSON(), sb.doc.toJSON());
});
