// The authority stream: Hello, claims, questions answered by id, and a new
// stream with backoff whenever one ends.
import type * as grpc from '@grpc/grpc-js';
import { backoffMs } from './backoff';
import { errText, log } from './log';
import type { Answer } from './gen/weftgate/v1/Answer';
import type { AuthorityRequest } from './gen/weftgate/v1/AuthorityRequest';
import type { AuthorityResponse__Output } from './gen/weftgate/v1/AuthorityResponse';
import type { Claim } from './gen/weftgate/v1/Claim';
import type { GatewayServiceClient } from './gen/weftgate/v1/GatewayService';
import type { Question__Output } from './gen/weftgate/v1/Question';

// An answer without its question_id: one kind of the Answer oneof.
export type Reply = Omit<Answer, 'question_id'>;

// Handler answers one question. A rejected promise answers with a Failure,
// so a bug fails closed.
export type Handler = (q: Question__Output) => Promise<Reply> | Reply;

export interface AuthorityOptions {
  backend: string;
  // The most questions unanswered at once (Hello.max_in_flight).
  maxInFlight: number;
  claims: Claim[];
  handler: Handler;
  metadata: () => grpc.Metadata;
  // Called on every stream once all its claims are granted.
  onClaimed: () => void;
  // Called when the gateway refuses a claim: retrying will not help.
  onRefused: (err: Error) => void;
}

// A gateway that does not answer Hello in this long is dialled again.
const welcomeTimeoutMs = 10_000;
// Answers per Answers message; the rest go in the next.
const maxAnswersPerMessage = 64;

export class Authority {
  private failures = 0;
  private stopping = false;
  private call: grpc.ClientDuplexStream<AuthorityRequest, AuthorityResponse__Output> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private ended: (() => void) | null = null;

  constructor(
    private readonly client: GatewayServiceClient,
    private readonly o: AuthorityOptions,
  ) {}

  start(): void {
    this.open();
  }

  // stop half-closes the stream, the graceful end: claims end at once and
  // the gateway asks our unanswered questions elsewhere. It resolves when
  // the gateway has ended the stream.
  stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    const call = this.call;
    if (!call) return Promise.resolve();
    return new Promise((resolve) => {
      this.ended = resolve;
      call.end();
    });
  }

  private open(): void {
    const call = this.client.Authority(this.o.metadata());
    this.call = call;
    // Questions sent and not answered or withdrawn: an answer for anything
    // else is dropped (the gateway would ignore it anyway).
    const open = new Set<string>();
    const pending: Answer[] = [];
    let flushing = false;
    let granted = 0;
    let done = false;
    const flush = () => {
      flushing = false;
      while (pending.length > 0 && !done) {
        call.write({ answers: { answers: pending.splice(0, maxAnswersPerMessage) } });
      }
    };
    const answer = (id: string, r: Reply) => {
      if (!open.delete(id)) return;
      pending.push({ question_id: id, ...r });
      // Answers ready in the same turn share one message.
      if (!flushing) {
        flushing = true;
        setImmediate(flush);
      }
    };
    const welcomeTimer = setTimeout(() => call.cancel(), welcomeTimeoutMs);
    const end = (err: Error | null) => {
      if (done) return;
      done = true;
      clearTimeout(welcomeTimer);
      this.call = null;
      if (this.stopping) {
        log('authority stream ended', { err: err ? errText(err) : null });
        this.ended?.();
        return;
      }
      this.failures++;
      const wait = backoffMs(this.failures);
      log('authority stream ended', { err: err ? errText(err) : 'the gateway ended the stream', failures: this.failures, retry_in_ms: wait });
      this.timer = setTimeout(() => this.open(), wait);
    };
    call.on('error', (err) => end(err));
    call.on('end', () => end(null));
    call.on('data', (m: AuthorityResponse__Output) => {
      switch (m.message) {
        case 'welcome':
          clearTimeout(welcomeTimer);
          this.failures = 0;
          log('welcome', { stream_id: m.welcome?.stream_id, node: m.welcome?.node, limits: m.welcome?.limits });
          for (const c of this.o.claims) call.write({ claim: c });
          return;
        case 'claim_result': {
          const r = m.claim_result!;
          if (!r.granted) {
            this.o.onRefused(new Error(`claim ${r.claim_id} refused: ${r.reasons.map((x) => `${x.code}: ${x.message}`).join('; ')}`));
            return;
          }
          log('claimed', { claim_id: r.claim_id });
          if (++granted === this.o.claims.length) this.o.onClaimed();
          return;
        }
        case 'questions':
          for (const q of m.questions!.questions) {
            open.add(q.id);
            Promise.resolve()
              .then(() => this.o.handler(q))
              .then(
                (r) => answer(q.id, r),
                (err) => answer(q.id, { failure: { message: errText(err) } }),
              );
          }
          return;
        case 'withdrawn':
          for (const id of m.withdrawn!.question_ids) open.delete(id);
          log('withdrawn', { question_ids: m.withdrawn!.question_ids, reason: m.withdrawn!.reason });
          return;
        default:
          // released and write_ack: this authority sends neither Release nor Write.
          return;
      }
    });
    call.write({ hello: { backend: this.o.backend, max_in_flight: this.o.maxInFlight } });
  }
}
