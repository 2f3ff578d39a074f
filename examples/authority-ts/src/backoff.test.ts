import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffMaxMs, backoffMs } from './backoff';

test('full jitter up to a doubling ceiling, capped', () => {
  const top = () => 0.999999999;
  assert.equal(backoffMs(0, top), 0);
  assert.equal(backoffMs(1, top), 100);
  assert.equal(backoffMs(4, top), 800);
  assert.equal(backoffMs(40, top), backoffMaxMs);
  assert.equal(backoffMs(3, () => 0), 0);
});
