// The demo board: one aweft document, its root an object whose slot
// "items" attaches an array of items, each an object {text, done}. Every
// edit is one commit; a move is one commit that removes the item's old
// position and adds the new one.
import { Client, between, newId } from './aweft/index.js';

const $ = (id) => document.getElementById(id);
const name = new URLSearchParams(location.search).get('board') || 'demo:board';
const client = new Client(`${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/ws`);
const share = client.share(name, { create: true });
const attach = (id) => ({ ref: id, kind: 'object', edge: 'attach' });
let refusal = null; // the code of the last refusal of our own commit
let fault = null; // the reason the document ended on this link
$('board').textContent = name;
window.demo = { client, share }; // for a console or a test

function items() {
  const d = share.doc;
  const list = d?.get(d.root).slots.get('items');
  return list ? { id: list.ref, entries: d.entries(list.ref) } : null;
}

function commit(deltas) {
  if (share.status !== 'live') return;
  try {
    share.commit({ deltas });
    refusal = null;
  } catch (e) {
    refusal = e.reason ?? String(e);
  }
  render();
}

// The board's array, made by whoever comes first; a second maker is refused
// slot-exists and yields to the gateway's state. After a refusal it is not
// tried again (a read-only gateway would refuse it for ever).
function ensureList() {
  const d = share.doc;
  if (share.status !== 'live' || items() || refusal) return;
  commit([{ type: 'add', id: d.root, ref: { kind: 'object', key: 'items' }, value: { ref: newId(), kind: 'array', edge: 'attach' } }]);
}

function add(text) {
  const list = items();
  if (!list) return;
  const item = newId();
  const last = list.entries.at(-1)?.[0] ?? null;
  commit([
    { type: 'add', id: list.id, ref: { kind: 'array', key: between(last, null) }, value: attach(item) },
    { type: 'add', id: item, ref: { kind: 'object', key: 'text' }, value: text },
    { type: 'add', id: item, ref: { kind: 'object', key: 'done' }, value: false },
  ]);
}

function move(i, by) {
  const { id, entries } = items();
  const j = i + by;
  if (j < 0 || j >= entries.length) return;
  const [lo, hi] = by < 0 ? [entries[j - 1]?.[0] ?? null, entries[j][0]] : [entries[j][0], entries[j + 1]?.[0] ?? null];
  commit([
    { type: 'remove', id, ref: { kind: 'array', key: entries[i][0] } },
    { type: 'add', id, ref: { kind: 'array', key: between(lo, hi) }, value: entries[i][1] },
  ]);
}

function set(item, key, value) {
  commit([{ type: 'replace', id: item, ref: { kind: 'object', key }, value }]);
}

function render() {
  const state = client.status !== 'open' ? 'offline' : share.status === 'fault' ? 'fault'
    : refusal ? 'refused' : share.status === 'live' ? 'connected' : share.status;
  $('link').dataset.state = state;
  $('link').textContent = state === 'offline' ? 'offline, reconnecting' : state;
  $('refusal').textContent = state === 'fault' ? `(${fault})` : refusal ? `(${refusal})` : '';
  $('add').querySelector('button').disabled = share.status !== 'live';
  const list = items();
  const ol = $('items');
  // The item being typed in keeps its unsaved text and caret across a redraw.
  const active = document.activeElement;
  const focused = active?.dataset?.item && { item: active.dataset.item, value: active.value, at: active.selectionStart };
  ol.replaceChildren(...(list?.entries ?? []).map(([, ref], i) => {
    const o = share.doc.get(ref.ref);
    const li = document.createElement('li');
    li.dataset.item = ref.ref;
    li.className = o?.slots.get('done') ? 'done' : '';
    const done = Object.assign(document.createElement('input'), { type: 'checkbox', checked: !!o?.slots.get('done'), title: 'done' });
    done.onchange = () => set(ref.ref, 'done', done.checked);
    const text = Object.assign(document.createElement('input'), { type: 'text', value: String(o?.slots.get('text') ?? '') });
    text.dataset.item = ref.ref;
    text.onchange = () => set(ref.ref, 'text', text.value);
    const button = (label, title, fn) => Object.assign(document.createElement('button'), { textContent: label, title, onclick: fn });
    li.append(done, text, button('↑', 'up', () => move(i, -1)), button('↓', 'down', () => move(i, 1)),
      button('✕', 'delete', () => commit([{ type: 'remove', id: list.id, ref: { kind: 'array', key: list.entries[i][0] } }])));
    return li;
  }));
  const again = focused && ol.querySelector(`input[type=text][data-item="${focused.item}"]`);
  if (again) {
    again.value = focused.value;
    again.focus();
    again.setSelectionRange(focused.at, focused.at);
  }
}

share.on('change', () => { ensureList(); render(); });
share.on('status', () => { ensureList(); render(); });
share.on('fault', (f) => { fault = f.reason; render(); });
// Our commit was refused: show why, and take the gateway's state.
share.on('refused', (r) => { if (r.mine) { refusal = r.reasons[0]?.code; share.resync(); render(); } });
client.on('status', render);
$('add').onsubmit = (e) => {
  e.preventDefault();
  add($('text').value);
  $('text').value = '';
};
render();
