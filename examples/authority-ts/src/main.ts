// A weftgate authority in TypeScript, doing what examples/authority does
// with the Go SDK, over the raw gRPC API: claim a prefix, judge commits by
// path and value size, answer loads from a directory, identify peers by
// their session cookie, answer the `whoami` call, and mirror the claimed
// documents from the commit stream, resuming from the last saved cursor.
import { parseArgs } from 'node:util';
import { dial, metadata } from './api';
import { Authority, type Reply } from './authority';
import { Follower } from './follow';
import { errText, log } from './log';
import { accept, type Rules } from './rules';
import { identify, loadSessions, type Sessions } from './sessions';
import { DirStore } from './store';
import type { Claim } from './gen/weftgate/v1/Claim';
import type { Question__Output } from './gen/weftgate/v1/Question';

// The call this authority answers: who the calling peer is.
export const whoamiCall = 'whoami';

function config() {
  const { values } = parseArgs({
    options: {
      gateway: { type: 'string', default: '127.0.0.1:9090' },
      name: { type: 'string', default: 'example-authority-ts' },
      prefix: { type: 'string', default: '' },
      data: { type: 'string', default: 'authority-data' },
      sessions: { type: 'string', default: '' },
      protect: { type: 'string', default: '/admin' },
      role: { type: 'string', default: 'admin' },
      'max-value-bytes': { type: 'string', default: String(64 << 10) },
    },
    strict: true,
  });
  const maxValueBytes = Number(values['max-value-bytes']);
  if (!Number.isInteger(maxValueBytes) || maxValueBytes < 0) throw new Error('--max-value-bytes is not a whole number ≥ 0');
  if (!values.data) throw new Error('--data is empty');
  const p = values.protect!.replace(/^\/+|\/+$/g, '');
  const rules: Rules = { protected: p ? p.split('/') : [], role: values.role!, maxValueBytes };
  return { ...values, rules, token: process.env.WEFTGATE_GRPC_TOKEN ?? '' };
}

function main(): void {
  const c = config();
  const store = new DirStore(c.data!);
  const sessions: Sessions | null = c.sessions ? loadSessions(c.sessions) : null;
  const client = dial(c.gateway!);
  const md = () => metadata(c.token);

  const claims: Claim[] = [
    { claim_id: 1, pattern: { prefix: c.prefix }, kinds: ['QUESTION_KIND_ACCEPT', 'QUESTION_KIND_LOAD', 'QUESTION_KIND_MAY_OPEN'] },
    { claim_id: 2, pattern: { exact: whoamiCall }, kinds: ['QUESTION_KIND_CALL'] },
  ];
  if (sessions) claims.push({ claim_id: 3, pattern: { prefix: '/' }, kinds: ['QUESTION_KIND_IDENTIFY'] });

  const handler = (q: Question__Output): Reply => {
    switch (q.kind) {
      case 'accept': {
        const reasons = accept(c.rules, q.accept!);
        return { accept: { accepted: reasons.length === 0, reasons } };
      }
      case 'load': {
        const s = store.load(q.load!.document);
        return { load: s ? { found: true, state: s.state, cursor: s.cursor } : { found: false } };
      }
      case 'may_open':
        // Every peer may open a claimed document (and create one): the
        // rules judge what it writes.
        return { may_open: { allowed: true } };
      case 'identify':
        return { identify: identify(sessions!, q.identify!.handshake) };
      case 'call': {
        const who = q.call!.peer?.identity;
        return { call: { result_json: JSON.stringify({ id: who?.id ?? '', anonymous: who?.anonymous ?? true, roles: who?.roles ?? [] }) } };
      }
    }
    throw new Error(`a question of kind ${String(q.kind)}`);
  };

  const follower = new Follower(client, store, c.prefix!, md);
  const authority = new Authority(client, {
    backend: c.name!,
    maxInFlight: 64,
    claims,
    handler,
    metadata: md,
    // Subscribe once the claims are in force, so that a document the
    // gateway must load to resume is answered by this authority.
    onClaimed: () => {
      log('claims in force');
      follower.start();
    },
    onRefused: (err) => {
      log('fatal', { err: errText(err) });
      process.exit(1);
    },
  });
  authority.start();
  log('started', { gateway: c.gateway, prefix: c.prefix, data: c.data });

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    follower.stop();
    const exit = setTimeout(() => process.exit(1), 10_000);
    authority.stop().then(() => {
      clearTimeout(exit);
      client.close();
      log('stopped');
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

try {
  main();
} catch (err) {
  log('fatal', { err: errText(err) });
  process.exit(1);
}
