// Bytes from anywhere: decoding either gives a value or refuses with a
// named reason, never another exception, whatever the input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AweftError, decodeCommit, decodeFrame, encodeCommit, encodeFrame, fromHex } from '../index.js';

const spec = process.env.AWEFT_SPEC ?? new URL('../../../testdata/aweft/spec', import.meta.url).pathname;
const seeds = ['fixtures', 'fixtures/invalid', 'frames'].flatMap((dir) => readdirSync(join(spec, dir))
  .filter((f) => f.endsWith('.json')).map((f) => JSON.parse(readFileSync(join(spec, dir, f), 'utf8')))
  .flatMap((fx) => (fx.commits ? fx.commits.map((c) => c.bytes) : [fx.bytes])).map(fromHex));

// A small deterministic generator, so a failure names an input that comes back.
function rng(seed) {
  let x = seed >>> 0 || 1;
  return (n) => { x ^= x << 13; x >>>= 0; x ^= x >> 17; x ^= x << 5; x >>>= 0; return x % n; };
}

function mutate(b, r) {
  const out = [...b];
  for (let k = 1 + r(4); k > 0; k--) {
    const i = r(out.length + 1);
    switch (r(3)) {
      case 0: out[i] = r(256); break; // flip a byte
      case 1: out.splice(i, 0, r(256)); break; // insert one
      default: out.splice(i, 1); // drop one
    }
  }
  return Uint8Array.from(out.filter((x) => x !== undefined));
}

for (const [name, decode, encode] of [['commit', decodeCommit, encodeCommit], ['frame', decodeFrame, encodeFrame]]) {
  test(`a ${name} decoder refuses by name, and what it takes re-encodes to the same bytes`, () => {
    const r = rng(name.length);
    let taken = 0, refused = 0;
    for (let n = 0; n < 20000; n++) {
      const input = n % 10 === 0 ? Uint8Array.from({ length: r(24) }, () => r(256)) : mutate(seeds[r(seeds.length)], r);
      let v;
      try {
        v = decode(input);
      } catch (e) {
        assert.ok(e instanceof AweftError && /^[a-z0-9-]+$/.test(e.reason), `input ${Buffer.from(input).toString('hex')}: ${e}`);
        refused++;
        continue;
      }
      taken++;
      assert.deepEqual(encode(v), input, `input ${Buffer.from(input).toString('hex')} decodes to a value with another spelling`);
    }
    assert.ok(taken > 100 && refused > 100, `${taken} taken, ${refused} refused: the inputs reach both outcomes`);
  });
}
