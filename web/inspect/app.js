// The inspector: the gateway's own JSON (/status, /metrics) polled every
// second; one document's content from opening it as a read-only aweft peer,
// and its commits from /inspect/commits (Server-Sent Events).
import { Client } from './aweft/index.js';

const $ = (id) => document.getElementById(id);
const cell = (...xs) => xs.map((x) => Object.assign(document.createElement('td'), { textContent: x ?? '' }));
const row = (cls, ...xs) => { const tr = document.createElement('tr'); tr.className = cls; tr.append(...cell(...xs)); return tr; };
let last = null; // the previous status page, for rates
let open = null; // {name, client, share}
window.inspector = { get open() { return open; } };

// metric sums a Prometheus text exposition's series over their labels.
function metric(text, name) {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(name + ' ') || line.startsWith(name + '{')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function poll() {
  try {
    const [st, metrics] = await Promise.all([
      fetch('/status', { cache: 'no-store' }).then((r) => r.json()),
      fetch('/metrics', { cache: 'no-store' }).then((r) => r.text()),
    ]);
    show(st, metrics);
  } catch (e) {
    $('updated').textContent = `unreachable: ${e.message}`;
  }
}

function show(st, metrics) {
  const now = performance.now();
  $('version').textContent = st.version;
  $('updated').textContent = `up ${Math.round(st.uptime_seconds)} s${st.draining ? ', draining' : ''}`;
  $('connections').textContent = st.counters.connections;
  if (last) $('rate').textContent = ((st.counters.commits_applied - last.applied) / ((now - last.at) / 1000)).toFixed(1);
  const n = metric(metrics, 'weftgate_authority_question_seconds_count');
  $('verdict').textContent = n ? `${(metric(metrics, 'weftgate_authority_question_seconds_sum') / n * 1000).toFixed(2)} ms` : '–';
  $('store').textContent = `${st.store.kind} ${st.store.healthy ? 'healthy' : 'failing'}`;
  $('store').title = st.store.error ?? '';
  $('documents-total').textContent = st.documents_total;
  last = { applied: st.counters.commits_applied, at: now };

  const q = $('search').value.trim().toLowerCase();
  $('documents').tBodies[0].replaceChildren(...st.documents.filter((d) => d.name.toLowerCase().includes(q)).map((d) => {
    const tr = row(`doc${open?.name === d.name ? ' selected' : ''}`, d.name, d.cursor, d.links, d.subscribers, `${d.slots} slots`, d.pending_commits);
    tr.dataset.name = d.name;
    tr.onclick = () => inspect(d.name);
    return tr;
  }));
  const doc = open && st.documents.find((d) => d.name === open.name);
  if (doc) {
    $('doc-claims').textContent = doc.claimed_by.length ? doc.claimed_by.join(', ') : `no backend (the ${st.authority.fallback} fallback)`;
    $('doc-links').tBodies[0].replaceChildren(...doc.members.map((m) => row('', m.link, String(m.topic), m.address, m.anonymous ? 'anonymous' : m.identity)));
  }
  $('links').tBodies[0].replaceChildren(...st.links.map((l) => row('', l.id, l.address, l.queue_messages, l.queue_bytes,
    l.last_pong_age_seconds == null ? 'none yet' : `${l.last_pong_age_seconds.toFixed(0)} s ago`)));
  const a = st.authority;
  $('authority').textContent = `${a.streams_open} streams open; fallback ${a.fallback}${a.read_only ? ', read-only' : ''}; ` +
    `${a.questions_asked} asked, ${a.questions_timed_out} timed out, ${a.questions_fell_back} fell back`;
  $('streams').tBodies[0].replaceChildren(...a.streams.map((s) => row('', s.name, s.state, s.claims.map((c) => `${c.match} "${c.pattern}"`).join(', '), s.questions_in_flight, s.consecutive_failures, s.last_error)));
}

const shown = (v) => (v && typeof v === 'object' ? ('bytes' in v ? `bytes ${v.bytes}` : `${v.edge} ${v.kind} ${v.ref}`) : JSON.stringify(v));

// inspect shows one document: its content from a peer that never writes,
// its commits (cursor, origin, paths) from /inspect/commits.
function inspect(name) {
  if (open?.name === name) return;
  open?.client.close();
  open?.events.close();
  const client = new Client(`${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/inspect/ws`);
  const share = client.share(name, { readOnly: true });
  const events = new EventSource(`/inspect/commits?doc=${encodeURIComponent(name)}`);
  open = { name, client, share, events };
  $('doc').hidden = false;
  $('doc-name').textContent = name;
  $('stream').replaceChildren();
  const tree = () => {
    const d = share.doc;
    $('tree').textContent = d ? JSON.stringify(d.toJSON(), null, 2) : '(nothing yet)';
    const slots = d ? [...d.obs.values()].reduce((n, o) => n + o.slots.size, 0) : 0;
    $('doc-size').textContent = d ? `${d.obs.size} observables, ${slots} slots` : '';
  };
  const state = () => {
    $('doc-state').dataset.state = share.status;
    $('doc-state').textContent = share.status === 'fault' ? `fault: ${share.fault.reason}` : share.status;
  };
  events.addEventListener('commit', (e) => {
    const c = JSON.parse(e.data);
    const li = document.createElement('li');
    li.className = 'commit';
    li.textContent = `#${c.cursor} from ${c.origin || 'unknown'}: ` + c.deltas.map((d, i) => {
      const path = c.paths[i] ? '/' + c.paths[i].join('/') : `(unreachable) ${d.id} ${d.ref.key}`;
      return `${d.type} ${path}${d.type === 'remove' ? '' : ' = ' + shown(d.value)}`;
    }).join('; ');
    $('stream').prepend(li);
    while ($('stream').children.length > 200) $('stream').lastChild.remove();
  });
  share.on('change', tree);
  share.on('status', state);
  state();
  tree();
  poll();
}

$('search').oninput = poll;
const wanted = new URLSearchParams(location.search).get('doc');
if (wanted) inspect(wanted);
poll();
setInterval(poll, 1000);
