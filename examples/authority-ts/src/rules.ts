// The commit rules, as examples/authority's: who may write under a
// protected path, and how big a text or byte value may be.
import type { AcceptQuestion__Output } from './gen/weftgate/v1/AcceptQuestion';
import type { Reason } from './gen/weftgate/v1/Reason';

// Refusal codes this authority sends.
export const ReasonForbidden = 'forbidden';
export const ReasonValueTooLarge = 'value-too-large';

export interface Rules {
  // A path from the root (["admin"]); empty protects nothing.
  protected: string[];
  // What a peer needs to write under `protected`.
  role: string;
  // Bound on text and byte values; 0 is none.
  maxValueBytes: number;
}

function under(path: string[], prefix: string[]): boolean {
  return path.length >= prefix.length && prefix.every((step, i) => path[i] === step);
}

// accept returns the reasons to refuse q's commit with, one per offending
// slot; none accepts. Backend writes are trusted with the protected path but
// not with the size bound, which protects every browser that receives them.
export function accept(r: Rules, q: AcceptQuestion__Output): Reason[] {
  const out: Reason[] = [];
  const origin = q.origin;
  const trusted = origin?.source === 'backend' || (origin?.peer?.identity?.roles ?? []).includes(r.role);
  for (const d of q.commit?.deltas ?? []) {
    // No path: no attach edge reaches the slot, so it is under nothing.
    const path = d.path ? d.path.steps : null;
    if (path && r.protected.length > 0 && !trusted && under(path, r.protected)) {
      out.push({ code: ReasonForbidden, message: `writing under /${r.protected.join('/')} needs the role "${r.role}"`, path: { steps: path } });
    }
    if (r.maxValueBytes > 0 && d.type !== 'DELTA_TYPE_REMOVE' && d.value) {
      let n = -1;
      if (d.value.kind === 'text_value') n = Buffer.byteLength(d.value.text_value ?? '', 'utf8');
      if (d.value.kind === 'bytes_value') n = Buffer.from(d.value.bytes_value ?? '', 'base64').length;
      if (n > r.maxValueBytes) {
        out.push({ code: ReasonValueTooLarge, message: `a ${n}-byte value is over the ${r.maxValueBytes}-byte bound`, path: path ? { steps: path } : null });
      }
    }
  }
  return out;
}
