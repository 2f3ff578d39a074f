// Commits (format.md sections 2, 3 and 6): ids, positions, and the codec.
//
// The model, as the spec's fixtures write it: an id is its 16-character
// base64url text; a ref is {kind: 'object'|'array'|'map', key}, the key
// being text, a position in lowercase hex, or an id's text; a value is
// null, a boolean, a number, a string, a Uint8Array, or a reference
// {ref: id, kind, edge: 'attach'|'alias'}; a delta is {type: 'add'|
// 'replace'|'remove', id, ref, value?}; a commit is {deltas, tag?}.

import { AweftError, decode, encode, fromBase64url, fromHex, toBase64url, toHex } from './cbor.js';

export const TYPES = ['add', 'replace', 'remove'];
export const KINDS = ['object', 'array', 'map'];
export const EDGES = ['attach', 'alias'];

/** A fresh id from the platform's cryptographic source (identity.md 1). */
export function newId() {
  return toBase64url(globalThis.crypto.getRandomValues(new Uint8Array(12)));
}

function idBytes(id) {
  const b = typeof id === 'string' && id.length === 16 ? fromBase64url(id) : null;
  if (!b || b.length !== 12) throw new AweftError('invalid-id', `an id is 16 base64url characters: ${id}`);
  return b;
}

/** A position strictly between lo and hi (hex, or null for either end), with randomness so two ends inserting at one place do not collide. */
export function between(lo, hi) {
  const a = lo == null ? new Uint8Array(0) : fromHex(lo);
  const b = hi == null ? null : fromHex(hi);
  const rand = () => 1 + (globalThis.crypto.getRandomValues(new Uint8Array(1))[0] % 255);
  const out = [];
  let bounded = b !== null;
  for (let i = 0; ; i++) {
    const l = i < a.length ? a[i] : 0;
    const h = bounded ? (i < b.length ? b[i] : 0) : 256;
    if (h - l > 1) {
      out.push(l + 1 + Math.floor((rand() - 1) / 255 * (h - l - 1)), rand(), rand());
      return toHex(Uint8Array.from(out));
    }
    out.push(l);
    if (l < h) bounded = false;
  }
}

export function validPosition(hex) {
  return hex.length >= 2 && !hex.endsWith('00');
}

function wireRef(ref) {
  const k = KINDS.indexOf(ref.kind);
  if (k < 0) throw new AweftError('unknown-ref-kind', `ref kind ${ref.kind}`);
  if (k === 0) return [0, ref.key];
  if (k === 1) {
    if (!validPosition(ref.key)) throw new AweftError('invalid-position', 'a position is non-empty and does not end in a zero byte');
    return [1, fromHex(ref.key)];
  }
  return [2, idBytes(ref.key)];
}

function wireValue(v) {
  if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array)) {
    const e = EDGES.indexOf(v.edge), k = KINDS.indexOf(v.kind);
    if (e < 0) throw new AweftError('unknown-edge-kind', `edge ${v.edge}`);
    if (k < 0) throw new AweftError('invalid-reference', `reference kind ${v.kind}`);
    return [e, k, idBytes(v.ref)];
  }
  return v;
}

// slotKey is the encoding of a delta's id followed by its ref, as hex: the
// canonical order (format.md 6.9) compares it as bytes, and hex of equal
// bytes compares the same way.
export function slotKey(d) {
  return toHex(encode(idBytes(d.id))) + toHex(encode(wireRef(d.ref)));
}

/** Encodes a commit, in canonical order whatever order its deltas come in. */
export function encodeCommit(c) {
  if (!c.deltas || c.deltas.length === 0) throw new AweftError('empty-commit', 'a commit carries at least one delta');
  const keyed = c.deltas.map((d) => [slotKey(d), d]).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  for (let i = 1; i < keyed.length; i++) {
    if (keyed[i][0] === keyed[i - 1][0]) throw new AweftError('duplicate-slot', 'two deltas address one slot');
  }
  const deltas = keyed.map(([, d]) => {
    const t = TYPES.indexOf(d.type);
    if (t < 0) throw new AweftError('unknown-delta-type', `delta type ${d.type}`);
    const w = [t, idBytes(d.id), wireRef(d.ref)];
    if (t !== 2) {
      if (!('value' in d)) throw new AweftError('missing-value', `an ${d.type} carries a value`);
      w.push(wireValue(d.value));
    }
    return w;
  });
  const parts = [deltas];
  if (c.tag) parts.push(c.tag);
  return encode(parts);
}

const isUint = (x) => typeof x === 'number' && Number.isInteger(x) && x >= 0;
const fail = (reason, message) => { throw new AweftError(reason, message); };

/** Decodes one commit: every byte-level rule first (INDEX.md 8.1), then the structure. */
export function decodeCommit(bytes) {
  return commitOf(decode(bytes));
}

export function commitOf(w) {
  if (!Array.isArray(w) || w.length < 1 || w.length > 2) fail('invalid-commit', 'a commit is an array of its deltas and an optional tag');
  if (!Array.isArray(w[0])) fail('invalid-commit', 'the deltas are an array');
  if (w[0].length === 0) fail('empty-commit', 'a commit carries at least one delta');
  const deltas = [];
  let order = null, prev = null;
  for (const wd of w[0]) {
    const d = deltaOf(wd);
    const key = slotKey(d);
    if (!order && prev !== null) {
      if (key === prev) order = ['duplicate-slot', 'two deltas in one commit address the same slot'];
      else if (key < prev) order = ['deltas-out-of-order', 'deltas are written in ascending order of id, then ref'];
    }
    prev = key;
    deltas.push(d);
  }
  if (order) fail(...order);
  const c = { deltas };
  if (w.length === 2) {
    if (!(w[1] instanceof Uint8Array) || w[1].length < 4 || w[1].length > 32) fail('invalid-tag', 'a tag is a byte string of 4 to 32 bytes');
    c.tag = w[1];
  }
  return c;
}

function idOf(b) {
  if (!(b instanceof Uint8Array) || b.length !== 12) fail('invalid-id', 'an id is a 12-byte string');
  return toBase64url(b);
}

function deltaOf(w) {
  if (!Array.isArray(w) || w.length < 3 || w.length > 4) fail('invalid-delta', 'a delta is an array of a type, an id, a ref and a value unless it removes');
  if (!isUint(w[0]) || w[0] > 2) fail('unknown-delta-type', 'a delta type is 0 add, 1 replace or 2 remove');
  const d = { type: TYPES[w[0]], id: idOf(w[1]), ref: refOf(w[2]) };
  if (d.type === 'remove' && w.length !== 3) fail('unexpected-value', 'a remove carries no value');
  if (d.type !== 'remove') {
    if (w.length !== 4) fail('missing-value', `an ${d.type} carries a value`);
    d.value = valueOf(w[3]);
  }
  return d;
}

function refOf(w) {
  if (!Array.isArray(w) || w.length !== 2) fail('invalid-ref', 'a ref is an array of a kind and a key');
  if (!isUint(w[0]) || w[0] > 2) fail('unknown-ref-kind', 'a ref kind is 0 object, 1 array or 2 map');
  const kind = KINDS[w[0]], key = w[1];
  if (kind === 'object') {
    if (typeof key !== 'string') fail('invalid-ref', 'an object key is text');
    return { kind, key };
  }
  if (!(key instanceof Uint8Array)) fail('invalid-ref', 'an array or map key is bytes');
  if (kind === 'array') {
    if (key.length === 0 || key[key.length - 1] === 0) fail('invalid-position', 'a position is non-empty and does not end in a zero byte');
    return { kind, key: toHex(key) };
  }
  return { kind, key: idOf(key) };
}

function valueOf(w) {
  if (!Array.isArray(w)) return w;
  if (w.length !== 3) fail('invalid-reference', 'a reference is an array of an edge, a kind and an id');
  if (!isUint(w[0]) || w[0] > 1) fail('unknown-edge-kind', 'an edge is 0 attach or 1 alias');
  if (!isUint(w[1]) || w[1] > 2) fail('unknown-ref-kind', 'a reference kind is 0 object, 1 array or 2 map');
  if (!(w[2] instanceof Uint8Array)) fail('invalid-reference', 'a reference names an id');
  return { ref: idOf(w[2]), kind: KINDS[w[1]], edge: EDGES[w[0]] };
}

/** Whether two values are the same (references by id, kind and edge; bytes by content). */
export function sameValue(a, b) {
  if (a === b) return true;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((x, i) => x === b[i]);
  if (a && b && typeof a === 'object' && typeof b === 'object' && !(a instanceof Uint8Array) && !(b instanceof Uint8Array)) {
    return a.ref === b.ref && a.kind === b.kind && a.edge === b.edge;
  }
  return false;
}

export const isRef = (v) => v !== null && typeof v === 'object' && !(v instanceof Uint8Array);
export const isAttach = (v) => isRef(v) && v.edge === 'attach';
export { fromHex, toHex };
