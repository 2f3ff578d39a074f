import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accept, ReasonForbidden, ReasonValueTooLarge, type Rules } from './rules';
import type { AcceptQuestion__Output } from './gen/weftgate/v1/AcceptQuestion';
import type { Origin__Output } from './gen/weftgate/v1/Origin';
import type { Value__Output } from './gen/weftgate/v1/Value';

const rules: Rules = { protected: ['admin'], role: 'admin', maxValueBytes: 4 };

function q(origin: Origin__Output, ...slots: [string[] | null, Value__Output | null][]): AcceptQuestion__Output {
  return {
    document: 'board:1',
    cursor: '0',
    origin,
    state: false,
    commit: {
      encoded: '',
      tag: '',
      paths: [],
      deltas: slots.map(([path, value]) => ({
        type: value ? 'DELTA_TYPE_ADD' : 'DELTA_TYPE_REMOVE',
        id: null,
        ref: null,
        value,
        path: path ? { steps: path } : null,
      })),
    },
  };
}
const peer = (...roles: string[]): Origin__Output => ({ peer: { identity: { id: 'u', anonymous: false, roles, claims: {} }, remote_addr: '', connection_id: '0' }, source: 'peer' });
const text = (s: string): Value__Output => ({ text_value: s, kind: 'text_value' });

test('writing under the protected path needs the role; a backend is trusted', () => {
  const under = q(peer(), [['admin', 'keys'], text('k')], [['title'], text('t')]);
  assert.deepEqual(accept(rules, under).map((r) => [r.code, r.path?.steps]), [[ReasonForbidden, ['admin', 'keys']]]);
  assert.deepEqual(accept(rules, q(peer('admin'), [['admin'], text('k')])), []);
  assert.deepEqual(accept(rules, q({ backend: { name: 'b', stream_id: '1', write_id: '1', label: '' }, source: 'backend' }, [['admin'], text('k')])), []);
  // A slot no attach edge reaches is under nothing; "administer" is not "admin".
  assert.deepEqual(accept(rules, q(peer(), [null, text('k')], [['administer'], text('k')])), []);
});

test('values over the bound are refused by their UTF-8 or byte length', () => {
  const rs = accept(rules, q(peer(), [['a'], text('ééé')], [['b'], { bytes_value: Buffer.alloc(5).toString('base64'), kind: 'bytes_value' }], [['c'], text('four')], [['d'], null]));
  assert.deepEqual(rs.map((r) => [r.code, r.path?.steps]), [[ReasonValueTooLarge, ['a']], [ReasonValueTooLarge, ['b']]]);
});
