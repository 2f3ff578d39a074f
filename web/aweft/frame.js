// Frames (replication.md section 5): each an array whose element 0 is its
// kind, encoded with format.md section 6. A frame that is not one of the
// six shapes is refused as bad-frame.

import { AweftError, decode, encode, fromBase64url, toBase64url } from './cbor.js';
import { KINDS, decodeCommit, encodeCommit } from './commit.js';

export const FRAMES = ['open', 'state', 'commits', 'refused', 'leave', 'fault'];

/** Encodes a frame object ({kind: 'open', topic, ...}) to the bytes of one binary message. */
export function encodeFrame(f) {
  switch (f.kind) {
    case 'open': {
      const root = f.root ? [fromBase64url(f.root.id), KINDS.indexOf(f.root.kind)] : [null, null];
      return encode([0, f.topic, f.name, ...root, f.want]);
    }
    case 'state': return encode([1, f.topic, f.commit ? encodeCommit(f.commit) : null]);
    case 'commits': return encode([2, f.topic, f.first, f.commits.map((c) => (c instanceof Uint8Array ? c : encodeCommit(c)))]);
    case 'refused': return encode([3, f.topic, f.seq, f.reasons.map((r) => [r.code, r.message, r.path ?? null])]);
    case 'leave': return encode([4, f.topic]);
    case 'fault': return encode([5, f.topic, f.reason, f.message]);
    default: throw new TypeError(`no frame kind ${f.kind}`);
  }
}

const bad = (why) => { throw new AweftError('bad-frame', why); };
const count = (x, min) => (typeof x === 'number' && Number.isInteger(x) && x >= min ? x : bad(`${x} is not an integer from ${min}`));
const text = (x) => (typeof x === 'string' ? x : bad('expected text'));
const list = (x) => (Array.isArray(x) && x.length > 0 ? x : bad('expected a non-empty list'));

/**
 * Decodes one frame. Bytes that are no value at all are refused with their
 * byte-level reason, a value of the wrong shape with bad-frame, and a commit
 * inside a frame with its own decode reason; any of them ends the link.
 */
export function decodeFrame(bytes) {
  const w = decode(bytes);
  if (!Array.isArray(w) || w.length === 0) bad('a frame is a non-empty array');
  const arity = [6, 3, 4, 4, 2, 4][w[0]];
  if (arity === undefined || !Number.isInteger(w[0])) bad(`unknown frame kind ${w[0]}`);
  if (w.length !== arity) bad(`a ${FRAMES[w[0]]} frame has ${arity} elements`);
  const kind = FRAMES[w[0]];
  const topic = count(w[1], kind === 'fault' ? 0 : 1);
  switch (kind) {
    case 'open': {
      const [, , name, id, rk, want] = w;
      text(name);
      if (typeof want !== 'boolean') bad('want is a boolean');
      if (id === null && rk === null) {
        if (!want) bad('an end that holds nothing wants the other end\'s state');
        return { kind, topic, name, root: null, want };
      }
      if (!(id instanceof Uint8Array) || id.length !== 12) bad('a root id is a 12-byte string');
      if (!Number.isInteger(rk) || rk < 0 || rk > 2) bad(`root kind ${rk}`);
      return { kind, topic, name, root: { id: toBase64url(id), kind: KINDS[rk] }, want };
    }
    case 'state':
      if (w[2] !== null && !(w[2] instanceof Uint8Array)) bad('a state carries a commit as bytes, or null');
      return { kind, topic, commit: w[2] === null ? null : decodeCommit(w[2]) };
    case 'commits': {
      const first = count(w[2], 1);
      const commits = list(w[3]).map((c) => (c instanceof Uint8Array ? decodeCommit(c) : bad('a commit is bytes')));
      return { kind, topic, first, commits };
    }
    case 'refused': {
      const seq = count(w[2], 1);
      const reasons = list(w[3]).map((r) => {
        if (!Array.isArray(r) || r.length !== 3) bad('a reason is [code, message, path]');
        const out = { code: text(r[0]), message: text(r[1]) };
        if (r[2] !== null) {
          if (!Array.isArray(r[2])) bad('a path is a list of text');
          out.path = r[2].map(text);
        }
        return out;
      });
      return { kind, topic, seq, reasons };
    }
    case 'leave': return { kind, topic };
    default: return { kind, topic, reason: text(w[2]), message: text(w[3]) };
  }
}
