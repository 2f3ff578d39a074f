// The commit stream of the claimed documents, resumed from the last cursor
// saved for each, and re-opened with backoff whenever it ends.
import * as grpc from '@grpc/grpc-js';
import { backoffMs } from './backoff';
import { errText, log } from './log';
import { Doc } from './mirror';
import type { DirStore } from './store';
import type { GatewayServiceClient } from './gen/weftgate/v1/GatewayService';
import type { SubscribeResponse__Output } from './gen/weftgate/v1/SubscribeResponse';

// Events waiting to be applied before the stream is paused: gRPC flow
// control then holds the rest at the gateway.
const maxQueued = 64;

export class Follower {
  private readonly docs = new Map<string, Doc>();
  private failures = 0;
  private stopping = false;
  private call: grpc.ClientReadableStream<SubscribeResponse__Output> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private started = false;

  constructor(
    private readonly client: GatewayServiceClient,
    private readonly store: DirStore,
    private readonly prefix: string,
    private readonly metadata: () => grpc.Metadata,
  ) {
    for (const s of store.all()) this.docs.set(s.document, Doc.fromState(s.document, s.state, BigInt(s.cursor)));
  }

  // start subscribes, once: later calls (a claim granted again) do nothing.
  start(): void {
    if (this.started) return;
    this.started = true;
    this.open();
  }

  stop(): void {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.call?.cancel();
  }

  private open(): void {
    const resume: Record<string, string> = {};
    for (const d of this.docs.values()) resume[d.name] = d.cursor.toString();
    const call = this.client.Subscribe(
      { pattern: { prefix: this.prefix }, resume, start: 'START_POSITION_SNAPSHOT' },
      this.metadata(),
    );
    this.call = call;
    log('subscribed', { prefix: this.prefix, resume });
    let queue = Promise.resolve();
    let queued = 0;
    let done = false;
    const end = (err: Error | null) => {
      if (done) return;
      done = true;
      this.call = null;
      if (this.stopping) return;
      this.failures++;
      const wait = backoffMs(this.failures);
      log('subscription ended', { err: err ? errText(err) : 'the gateway ended the stream', failures: this.failures, retry_in_ms: wait });
      // Resume only once every event received is applied.
      queue.then(() => {
        if (!this.stopping) this.timer = setTimeout(() => this.open(), wait);
      });
    };
    call.on('error', (err: grpc.ServiceError) => {
      if (err.code === grpc.status.CANCELLED && this.stopping) return end(null);
      end(err);
    });
    call.on('end', () => end(null));
    call.on('data', (ev: SubscribeResponse__Output) => {
      this.failures = 0;
      if (++queued >= maxQueued) call.pause();
      queue = queue
        .then(() => this.event(ev))
        .catch((err) => {
          // The store failed or the gateway would not give the state:
          // start again from what is saved.
          log('event failed', { err: errText(err) });
          call.cancel();
        })
        .finally(() => {
          if (--queued < maxQueued && !done) call.resume();
        });
    });
  }

  private async event(ev: SubscribeResponse__Output): Promise<void> {
    switch (ev.event) {
      case 'caught_up':
        log('caught up');
        return;
      case 'snapshot': {
        const s = ev.snapshot!;
        log('event', { kind: 'snapshot', document: s.document, cursor: s.cursor, reason: s.reason });
        this.hold(Doc.fromState(s.document, s.state!, BigInt(s.cursor)));
        return;
      }
      case 'commit': {
        const c = ev.commit!;
        const cursor = BigInt(c.cursor);
        log('event', { kind: 'commit', document: c.document, cursor: c.cursor });
        const d = this.docs.get(c.document);
        if (d && cursor <= d.cursor) return; // what we hold already has it
        if (!d || cursor !== d.cursor + 1n) return this.refetch(c.document, d ? 'a gap in cursors' : 'first seen');
        try {
          d.apply(c.commit?.deltas ?? []);
        } catch (err) {
          return this.refetch(c.document, errText(err));
        }
        d.cursor = cursor;
        this.save(d);
        return;
      }
    }
  }

  // refetch replaces a document with the gateway's state of it.
  private async refetch(name: string, why: string): Promise<void> {
    log('reading the document whole', { document: name, why });
    const res = await new Promise<{ state: unknown; cursor: string }>((resolve, reject) =>
      this.client.GetState({ document: name }, this.metadata(), { deadline: Date.now() + 10_000 }, (err, r) =>
        err || !r ? reject(err ?? new Error('no response')) : resolve({ state: r.state, cursor: r.cursor }),
      ),
    );
    this.hold(Doc.fromState(name, res.state as Parameters<typeof Doc.fromState>[1], BigInt(res.cursor)));
  }

  private hold(d: Doc): void {
    this.docs.set(d.name, d);
    this.save(d);
  }

  private save(d: Doc): void {
    this.store.save(d.stored());
    log('saved', { document: d.name, cursor: d.cursor.toString() });
  }
}
