// The link against a scripted other end (a fake WebSocket): what it sends,
// and how it meets frames it must refuse or answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Document, MAX_PENDING, WINDOW, decodeFrame, encodeFrame, newId } from '../index.js';

const tick = () => new Promise(setImmediate);

// FakeSocket is one WebSocket as the link sees it; the test is the other end.
class FakeSocket {
  static all = [];
  constructor(url) {
    Object.assign(this, { url, readyState: 0, sent: [], closed: null });
    FakeSocket.all.push(this);
  }
  open() { this.readyState = 1; this.onopen(); }
  send(bytes) { this.sent.push(decodeFrame(bytes)); }
  close(code, reason) {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.closed = { code, reason };
    setImmediate(() => this.onclose({ code }));
  }
  deliver(frame) { this.onmessage({ data: (frame instanceof Uint8Array ? frame : encodeFrame(frame)).buffer }); }
  take() { const s = this.sent; this.sent = []; return s; }
}

const setTitle = (root, title, type = 'add') => ({ deltas: [{ type, id: root, ref: { kind: 'object', key: 'title' }, value: title }] });

// joined is a share that held nothing and took the other end's document.
async function joined(t) {
  const client = new Client('ws://test/', { WebSocket: FakeSocket, minDelay: 1 });
  t.after(() => client.close());
  const sock = FakeSocket.all.at(-1);
  const share = client.share('doc');
  sock.open();
  await tick();
  assert.deepEqual(sock.take(), [{ kind: 'open', topic: 1, name: 'doc', root: null, want: true }]);
  const root = newId();
  sock.deliver({ kind: 'open', topic: 7, name: 'doc', root: { id: root, kind: 'object' }, want: false });
  assert.equal(share.status, 'syncing', 'it waits for the state it asked for');
  sock.deliver({ kind: 'state', topic: 7, commit: setTitle(root, 'hello') });
  assert.equal(share.status, 'live');
  assert.deepEqual(share.doc.toJSON(), { title: 'hello' });
  return { client, sock, share, root };
}

test('a share that holds nothing asks for state and takes it', async (t) => {
  const { sock, share, root } = await joined(t);
  share.commit(setTitle(root, 'mine', 'replace'));
  await tick();
  assert.deepEqual(sock.take(), [{ kind: 'commits', topic: 1, first: 1, commits: [setTitle(root, 'mine', 'replace')] }]);
});

test('an incoming commit the document refuses is answered refused, and the next one applies', async (t) => {
  const { sock, share, root } = await joined(t);
  const heard = [];
  share.on('refused', (r) => heard.push(r));
  sock.deliver({ kind: 'commits', topic: 7, first: 5, commits: [setTitle(root, 'again'), setTitle(root, 'next', 'replace')] });
  await tick();
  const [refused] = sock.take();
  assert.equal(refused.kind, 'refused');
  assert.deepEqual([refused.topic, refused.seq, refused.reasons[0].code, refused.reasons[0].path], [1, 5, 'slot-exists', ['title']]);
  assert.equal(share.doc.toJSON().title, 'next');
  assert.equal(heard.length, 1);
  assert.equal(heard[0].mine, false);
});

test('a refusal of our own commit carries it and its undo while in the window', async (t) => {
  const { sock, share, root } = await joined(t);
  const heard = [];
  share.on('refused', (r) => heard.push(r));
  for (let i = 0; i <= WINDOW; i++) share.commit(setTitle(root, `v${i}`, 'replace'));
  await tick();
  const [frame] = sock.take();
  assert.equal(frame.commits.length, WINDOW + 1, 'one tick, one commits frame');
  const reasons = [{ code: 'no', message: 'not this one' }];
  sock.deliver({ kind: 'refused', topic: 7, seq: WINDOW + 1, reasons });
  sock.deliver({ kind: 'refused', topic: 7, seq: 1, reasons });
  assert.deepEqual(heard[0], { mine: true, seq: WINDOW + 1, reasons, commit: setTitle(root, `v${WINDOW}`, 'replace'),
    undo: setTitle(root, `v${WINDOW - 1}`, 'replace') });
  assert.deepEqual(heard[1], { mine: true, seq: 1, reasons }, 'outside the window: the sequence only');
  assert.equal(share.doc.toJSON().title, `v${WINDOW}`, 'nothing is rolled back');
});

test('a state nobody asked for is a fault, and ends the topic', async (t) => {
  const { sock, share, root } = await joined(t);
  sock.deliver({ kind: 'state', topic: 7, commit: setTitle(root, 'pushed') });
  await tick();
  assert.deepEqual(sock.take().map((f) => [f.kind, f.topic, f.reason]), [['fault', 7, 'unwanted-state']]);
  assert.equal(share.status, 'fault');
  assert.equal(share.doc.toJSON().title, 'hello');
});

test('a frame about a topic that is not open is answered no-topic, and the link carries on', async (t) => {
  const { sock, share } = await joined(t);
  sock.deliver({ kind: 'leave', topic: 9 });
  await tick();
  assert.deepEqual(sock.take().map((f) => [f.kind, f.topic, f.reason]), [['fault', 9, 'no-topic']]);
  assert.equal(share.status, 'live');
  assert.equal(sock.closed, null);
});

test('a second open with want on a live topic is answered with state; a null root is root-mismatch', async (t) => {
  const { sock, share, root } = await joined(t);
  sock.deliver({ kind: 'open', topic: 7, name: 'doc', root: { id: root, kind: 'object' }, want: true });
  await tick();
  assert.deepEqual(sock.take(), [{ kind: 'state', topic: 1, commit: setTitle(root, 'hello') }]);
  sock.deliver({ kind: 'open', topic: 7, name: 'doc', root: null, want: true });
  await tick();
  assert.deepEqual(sock.take().map((f) => [f.kind, f.topic, f.reason]), [['fault', 7, 'root-mismatch']]);
  assert.equal(share.status, 'fault');
});

test('bytes that do not decode end the link, and the client reconnects and resyncs', async (t) => {
  const { client, sock, share, root } = await joined(t);
  sock.deliver(Uint8Array.of(0x82, 0x04)); // an array that promises two items and holds none
  assert.deepEqual(sock.closed, { code: 1002, reason: 'truncated' });
  await tick();
  assert.equal(share.status, 'offline');
  await new Promise((resolve) => client.on('status', (s) => s === 'connecting' && resolve()));
  const next = FakeSocket.all.at(-1);
  assert.notEqual(next, sock);
  next.open();
  await tick();
  const again = { kind: 'open', topic: 1, name: 'doc', root: { id: root, kind: 'object' } };
  assert.deepEqual(next.take(), [{ ...again, want: false }, { ...again, want: true }], 'a new link starts at topic 1 and asks for state');
});

test('commits wait while the share is not live, up to a bound', async (t) => {
  const client = new Client('ws://test/', { WebSocket: FakeSocket });
  t.after(() => client.close());
  const doc = new Document(newId());
  const share = client.share('bounded', { doc });
  for (let i = 0; i < MAX_PENDING; i++) share.commit(setTitle(doc.root, `v${i}`, i ? 'replace' : 'add'));
  assert.throws(() => share.commit(setTitle(doc.root, 'one more', 'replace')), (e) => e.reason === 'too-many-pending');
  assert.equal(doc.toJSON().title, `v${MAX_PENDING - 1}`, 'the refused commit changed nothing');
  const sock = FakeSocket.all.at(-1);
  sock.open();
  sock.deliver({ kind: 'open', topic: 3, name: 'bounded', root: null, want: true });
  await tick();
  const sent = sock.take();
  assert.deepEqual(sent.map((f) => f.kind), ['open', 'state'], 'the state covers the waiting commits');
  assert.deepEqual(sent[1].commit, setTitle(doc.root, `v${MAX_PENDING - 1}`));
});

test('a share that holds nothing, where nothing is held, creates the document when asked to', async (t) => {
  const client = new Client('ws://test/', { WebSocket: FakeSocket });
  t.after(() => client.close());
  const sock = FakeSocket.all.at(-1);
  const share = client.share('new', { create: true });
  sock.open();
  await tick();
  sock.take();
  sock.deliver({ kind: 'fault', topic: 1, reason: 'no-document', message: 'nobody holds it' });
  await tick();
  const [open] = sock.take();
  assert.equal(open.topic, 2, 'a topic number is never reused');
  assert.equal(open.root.id, share.doc.root);
  assert.equal(open.want, false);
});
