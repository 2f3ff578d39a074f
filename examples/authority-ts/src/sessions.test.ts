import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { identify, loadSessions, ReasonUnknownSession } from './sessions';

test('peers are identified by their session cookie', () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sessions-')), 's.json');
  fs.writeFileSync(file, '{"s3cret": {"id": "alice", "roles": ["admin"]}}');
  const s = loadSessions(file);
  const hs = (...cookies: string[]) => ({ remote_addr: '', host: '', path: '/', raw_query: '', connection_id: '0', headers: cookies.length ? [{ name: 'cookie', values: cookies }] : [] });
  assert.deepEqual(identify(s, hs('other=1; session=s3cret')), { admitted: true, identity: { id: 'alice', roles: ['admin'] } });
  assert.deepEqual(identify(s, hs()), { admitted: true });
  const refused = identify(s, hs('session=guess'));
  assert.equal(refused.admitted, false);
  assert.equal(refused.reasons?.[0]?.code, ReasonUnknownSession);
  fs.writeFileSync(file, '{"x": {"roles": []}}');
  assert.throws(() => loadSessions(file), /no id/);
});
