import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Doc } from './mirror';
import type { Delta__Output } from './gen/weftgate/v1/Delta';

const id = (c: string) => ({ value: Buffer.alloc(12, c).toString('base64') });
const root = { id: id('r'), kind: 'KIND_OBJECT' as const };

function add(obs: string, key: string, value: Delta__Output['value']): Delta__Output {
  return { type: 'DELTA_TYPE_ADD', id: id(obs), ref: { object_key: key, key: 'object_key' }, value, path: null };
}
const text = (s: string) => ({ text_value: s, kind: 'text_value' as const });
const ref = (obs: string, edge: 'EDGE_ATTACH' | 'EDGE_ALIAS') => ({
  reference: { edge, kind: 'KIND_OBJECT' as const, id: id(obs) },
  kind: 'reference' as const,
});

function keys(d: Doc): string[] {
  return (d.state().commit?.deltas ?? []).map((x) => `${Buffer.from(String(x.id?.value), 'base64').toString()[0]}.${x.ref?.object_key}`).sort();
}

test('the state holds what the root reaches by attach edges, not aliases', () => {
  const d = new Doc('board:1', root, 0n);
  d.apply([add('r', 'title', text('plan')), add('r', 'child', ref('c', 'EDGE_ATTACH')), add('c', 'x', text('1')), add('r', 'link', ref('a', 'EDGE_ALIAS')), add('a', 'y', text('2'))]);
  assert.deepEqual(keys(d), ['c.x', 'r.child', 'r.link', 'r.title']);
  d.apply([{ type: 'DELTA_TYPE_REMOVE', id: id('r'), ref: { object_key: 'child', key: 'object_key' }, value: null, path: null }]);
  assert.deepEqual(keys(d), ['r.link', 'r.title']);
  assert.equal(new Doc('e', root, 0n).state().commit, null);
});

test('a delta that does not fit the slots throws', () => {
  const d = new Doc('board:1', root, 0n);
  d.apply([add('r', 'title', text('plan'))]);
  assert.throws(() => d.apply([add('r', 'title', text('again'))]), /exists/);
  assert.throws(() => d.apply([{ ...add('r', 'nope', text('x')), type: 'DELTA_TYPE_REPLACE' }]), /does not exist/);
  assert.throws(() => d.apply([{ ...add('r', 'nope', null), type: 'DELTA_TYPE_REMOVE' }]), /does not exist/);
  d.apply([{ ...add('r', 'title', text('done')), type: 'DELTA_TYPE_REPLACE' }]);
  assert.equal(d.state().commit?.deltas?.[0]?.value?.text_value, 'done');
});

test('a state round-trips through fromState', () => {
  const d = new Doc('board:1', root, 7n);
  d.apply([add('r', 'title', text('plan'))]);
  const again = Doc.fromState('board:1', d.state(), 7n);
  assert.deepEqual(again.stored(), d.stored());
  assert.equal(d.stored().cursor, '7');
});
