// Peers identified by their `session` cookie, from a JSON file of
// {"<cookie value>": {"id": ..., "roles": [...]}}.
import fs from 'node:fs';
import type { IdentifyAnswer } from './gen/weftgate/v1/IdentifyAnswer';
import type { Handshake__Output } from './gen/weftgate/v1/Handshake';

export const ReasonUnknownSession = 'unknown-session';

export type Sessions = Map<string, { id: string; roles: string[] }>;

export function loadSessions(file: string): Sessions {
  const raw: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (typeof raw !== 'object' || raw === null) throw new Error(`${file}: not a JSON object`);
  const out: Sessions = new Map();
  for (const [k, v] of Object.entries(raw as Record<string, { id?: unknown; roles?: unknown }>)) {
    if (typeof v?.id !== 'string' || v.id === '') throw new Error(`${file}: a session with no id`);
    const roles = Array.isArray(v.roles) ? v.roles.filter((x): x is string => typeof x === 'string') : [];
    out.set(k, { id: v.id, roles });
  }
  return out;
}

// cookie is the first value of a cookie in the handshake's headers (names
// come lowercase from the gateway).
function cookie(h: Handshake__Output | null, name: string): string | undefined {
  for (const header of h?.headers ?? []) {
    if (header.name !== 'cookie') continue;
    for (const line of header.values) {
      for (const part of line.split(';')) {
        const eq = part.indexOf('=');
        if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
      }
    }
  }
  return undefined;
}

// identify admits a peer without a session cookie as anonymous (identity
// unset), one with a known session as its identity, and refuses the rest.
export function identify(s: Sessions, h: Handshake__Output | null): IdentifyAnswer {
  const value = cookie(h, 'session');
  if (value === undefined) return { admitted: true };
  const who = s.get(value);
  if (!who) return { admitted: false, reasons: [{ code: ReasonUnknownSession, message: 'the session cookie names no session' }] };
  return { admitted: true, identity: { id: who.id, roles: who.roles } };
}
