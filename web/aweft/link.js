// One aweft link over a WebSocket (replication.md 1-4, and what the aweft
// page client does on the wire: notes/aweft-client-behaviour.md). A Client
// keeps one socket open, reconnecting with backoff; every socket is a new
// link on which each share is opened again and resynced from the other end.

import { AweftError } from './cbor.js';
import { newId } from './commit.js';
import { Document, Refusal } from './document.js';
import { decodeFrame, encodeFrame } from './frame.js';

/** Sent commits a share keeps, so a refusal can carry the commit and its undo. */
export const WINDOW = 256;
/** Local commits a share holds while it is not live; more are refused with too-many-pending. */
export const MAX_PENDING = 1000;
/** How often a share may retry its open after no-document or root-mismatch on one socket. */
const MAX_RETRIES = 3;

class Emitter {
  #on = new Map();
  on(event, fn) {
    if (!this.#on.has(event)) this.#on.set(event, new Set());
    this.#on.get(event).add(fn);
    return () => this.#on.get(event).delete(fn);
  }
  emit(event, arg) {
    for (const fn of this.#on.get(event) ?? []) fn(arg);
  }
}

/**
 * A reconnecting link to url. Events: 'status' with 'connecting', 'open'
 * or 'closed'.
 */
export class Client extends Emitter {
  constructor(url, { WebSocket = globalThis.WebSocket, minDelay = 500, maxDelay = 10000 } = {}) {
    super();
    if (!WebSocket) throw new Error('no WebSocket here (Node 20 needs --experimental-websocket)');
    Object.assign(this, { url, WebSocket, minDelay, maxDelay });
    this.delay = minDelay;
    this.shares = new Map(); // name -> Share
    this.status = 'closed';
    this.closed = false;
    this.#connect();
  }

  /** Shares a document by name; see Share for the options. */
  share(name, options = {}) {
    if (this.shares.has(name)) throw new Error(`${name} is shared already`);
    const s = new Share(this, name, options);
    this.shares.set(name, s);
    if (this.status === 'open') s.opened();
    return s;
  }

  /** Ends the link for good. */
  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.ws?.close(1000);
  }

  /** Cuts the current socket as a network failure would; the client reconnects. */
  drop() {
    this.ws?.close(4000, 'dropped');
  }

  #setStatus(s) {
    this.status = s;
    this.emit('status', s);
  }

  #connect() {
    this.#setStatus('connecting');
    const ws = new this.WebSocket(this.url);
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    this.queue = [];
    this.topics = 0; // this end's numbers on this link, from 1
    this.ours = new Map(); // our topic number -> share
    this.theirs = new Map(); // their topic number -> share
    ws.onopen = () => {
      this.delay = this.minDelay;
      this.#setStatus('open');
      for (const s of this.shares.values()) s.opened();
    };
    ws.onmessage = (m) => {
      if (typeof m.data === 'string') return; // the request channel, not the link
      let f;
      try {
        f = decodeFrame(new Uint8Array(m.data));
      } catch (e) {
        ws.close(1002, String(e.reason ?? 'bad-frame')); // bytes that do not decode end the link
        return;
      }
      this.#receive(f);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const s of this.shares.values()) s.ended('closed', 'the link ended');
      this.#setStatus('closed');
      if (this.closed) return;
      this.timer = setTimeout(() => this.#connect(), this.delay);
      this.delay = Math.min(this.delay * 2, this.maxDelay);
    };
  }

  #receive(f) {
    if (f.kind === 'fault' && f.topic === 0) {
      this.ws.close(1000);
      return;
    }
    if (f.kind === 'open') {
      const s = this.shares.get(f.name);
      if (s) s.peerOpen(f);
      return; // a name this end does not share: never answered (as the JS end does)
    }
    // A fault names this end's number; every other frame the sender's.
    const s = f.kind === 'fault' ? this.ours.get(f.topic) : this.theirs.get(f.topic);
    if (!s) {
      if (f.kind !== 'fault') this.send({ kind: 'fault', topic: f.topic, reason: 'no-topic', message: `nothing here is open as topic ${f.topic}` });
      return;
    }
    s.frame(f);
  }

  /** Queues a frame; queued frames go out together, consecutive commits for one topic as one frame. */
  send(f) {
    const last = this.queue.at(-1);
    if (f.kind === 'commits' && last?.kind === 'commits' && last.topic === f.topic) last.commits.push(...f.commits);
    else this.queue.push(f);
    if (this.queue.length === 1) queueMicrotask(() => this.#flush());
  }

  #flush() {
    const q = this.queue;
    this.queue = [];
    if (this.ws?.readyState !== 1) return; // the socket ended; the next link resyncs
    for (const f of q) this.ws.send(encodeFrame(f));
  }
}

/**
 * One shared document. Options: doc (a Document this end holds), create
 * (mint an object document when the other end has none), readOnly (commit
 * throws; incoming commits are still applied), accept(commit) returning a
 * list of reasons to refuse an incoming commit. Events: 'change' with
 * {commit, origin: 'local'|'remote'|'state'}, 'refused' with {mine, seq,
 * reasons, commit?, undo?}, 'fault' with {reason, message}, 'status' with
 * the share's status: 'offline', 'syncing', 'live' or 'fault'.
 */
export class Share extends Emitter {
  constructor(client, name, { doc = null, create = false, readOnly = false, accept = null } = {}) {
    super();
    Object.assign(this, { client, name, doc, create, readOnly, accept });
    this.status = 'offline';
    this.fault = null; // the last fault, while status is 'fault'
    this.synced = false; // live once: a later link pulls the other end's state
    this.pending = []; // local commits made while not live
    this.retries = 0;
  }

  #setStatus(s) {
    this.status = s;
    this.emit('status', s);
  }

  /** Applies a commit here and sends it; throws a Refusal and changes nothing if it does not apply. */
  commit(c) {
    if (this.readOnly) throw new AweftError('read-only', 'this share never writes');
    if (!this.doc) throw new AweftError('no-document', 'nothing is held yet');
    const waiting = !this.live || this.wanted;
    if (waiting && this.pending.length >= MAX_PENDING) throw new AweftError('too-many-pending', `${MAX_PENDING} commits wait for the link already`);
    const undo = this.doc.apply(c);
    this.emit('change', { commit: c, origin: 'local' });
    if (waiting) this.pending.push(c);
    else this.#sendCommit(c, undo);
    return undo;
  }

  /** Moves to the other end's state (the application yields): open again with want. */
  resync() {
    if (!this.live || !this.doc) return;
    this.wanted = true;
    this.#setStatus('syncing');
    this.client.send(this.#open(true));
  }

  #sendCommit(c, undo) {
    const seq = ++this.seq;
    this.window.set(seq, { commit: c, undo });
    if (this.window.size > WINDOW) this.window.delete(this.window.keys().next().value);
    this.client.send({ kind: 'commits', topic: this.topic, first: seq, commits: [c] });
  }

  #open(want) {
    const root = this.doc ? { id: this.doc.root, kind: this.doc.get(this.doc.root).kind } : null;
    return { kind: 'open', topic: this.topic, name: this.name, root, want };
  }

  // opened starts the share on a new link: a fresh topic number and open.
  opened() {
    const c = this.client;
    this.topic = ++c.topics;
    c.ours.set(this.topic, this);
    Object.assign(this, { peer: null, live: false, owe: false, seq: 0, window: new Map() });
    this.#setStatus('syncing');
    if (!this.doc) {
      this.wanted = true;
      c.send(this.#open(true));
    } else if (this.synced) {
      // A later link: share, then at once ask for the other end's state, as the aweft client does.
      this.wanted = true;
      c.send(this.#open(false));
      c.send(this.#open(true));
    } else {
      this.wanted = false;
      c.send(this.#open(false));
    }
  }

  ended(reason, message) {
    this.live = false;
    if (this.peer !== null) this.client.theirs.delete(this.peer);
    this.client.ours?.delete(this.topic);
    if (reason === 'closed') {
      this.#setStatus('offline');
      return;
    }
    this.fault = { reason, message };
    this.emit('fault', this.fault);
    this.#setStatus('fault');
  }

  #faultPeer(topic, reason, message) {
    this.client.send({ kind: 'fault', topic, reason, message });
    this.ended(reason, message);
  }

  peerOpen(f) {
    if (this.peer === f.topic) { // again on a live topic: "send me your state"
      if (!f.root || f.root.id !== this.doc.root || f.root.kind !== this.doc.get(this.doc.root).kind) {
        this.#faultPeer(f.topic, 'root-mismatch', 'the open names another root');
      } else if (f.want) this.#sendState();
      return;
    }
    if (this.peer !== null) return; // one peer open per share and link
    if (this.doc && f.root && (f.root.id !== this.doc.root || f.root.kind !== this.doc.get(this.doc.root).kind)) {
      this.#faultPeer(f.topic, 'root-mismatch', `${this.name} is another document here`);
      return;
    }
    if (!this.doc && !f.root) {
      this.#faultPeer(f.topic, 'no-document', `${this.name} is held by neither end`);
      return;
    }
    if (!this.doc) this.doc = new Document(f.root.id, f.root.kind);
    this.peer = f.topic;
    this.client.theirs.set(f.topic, this);
    this.live = true;
    this.owe = f.want;
    if (!this.wanted) this.#goLive();
  }

  // goLive runs once this end holds what it will hold: the state it owes
  // first, then the commits made before the topic was live, unless that
  // state covers them.
  #goLive() {
    if (this.owe) this.#sendState();
    else for (const c of this.pending) this.#sendCommit(c, null);
    this.pending = [];
    this.synced = true;
    this.retries = 0;
    this.#setStatus('live');
  }

  #sendState() {
    this.owe = false;
    this.client.send({ kind: 'state', topic: this.topic, commit: this.doc.stateCommit() });
  }

  frame(f) {
    switch (f.kind) {
      case 'state': return this.#state(f);
      case 'commits': return this.#commits(f);
      case 'refused': {
        const sent = this.window.get(f.seq);
        this.emit('refused', { mine: true, seq: f.seq, reasons: f.reasons, ...sent });
        return;
      }
      case 'leave': return this.ended('left', 'the other end left');
      case 'fault': return this.#fault(f);
    }
  }

  #state(f) {
    if (!this.wanted) {
      this.#faultPeer(this.peer, 'unwanted-state', 'a state nobody asked for would bypass accept');
      return;
    }
    let diff;
    try {
      diff = this.doc.diffTo(f.commit);
      if (diff) this.doc.apply(diff);
    } catch (e) {
      this.#faultPeer(this.peer, e.reason ?? 'bad-state', `the state does not apply here: ${e.message}`);
      return;
    }
    if (diff) this.emit('change', { commit: diff, origin: 'state' });
    this.wanted = false;
    this.pending = []; // the other end's state wins, as on every resync
    this.#goLive();
  }

  #commits(f) {
    f.commits.forEach((c, i) => {
      const seq = f.first + i;
      let reasons = null;
      try {
        reasons = this.accept?.(c) ?? null;
      } catch (e) {
        reasons = [{ code: 'accept-threw', message: String(e?.message ?? e) }];
      }
      if (!reasons?.length) {
        try {
          this.doc.apply(c);
          this.emit('change', { commit: c, origin: 'remote' });
          return;
        } catch (e) {
          if (!(e instanceof Refusal)) throw e;
          reasons = e.reasons;
        }
      }
      this.client.send({ kind: 'refused', topic: this.topic, seq, reasons });
      this.emit('refused', { mine: false, seq, reasons, commit: c });
    });
  }

  #fault(f) {
    this.ended(f.reason, f.message);
    // Two ends that hold nothing, or a race between two ends minting one
    // name: try again on a new topic number, a bounded number of times.
    if (this.retries >= MAX_RETRIES || this.client.ws?.readyState !== 1) return;
    if (f.reason === 'no-document' && this.create && !this.doc) {
      this.retries++;
      this.doc = new Document(newId(), 'object');
      this.opened();
    } else if (f.reason === 'root-mismatch' && !this.synced && this.create) {
      this.retries++;
      this.doc = null;
      this.opened();
    }
  }
}
