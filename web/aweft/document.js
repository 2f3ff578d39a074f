// The document model (format.md section 1): observables by id, each an
// object, array or map of slots, the attach edges forming a tree from the
// root. apply checks a whole commit against it (format.md 7, apply stage)
// and applies all of it or nothing.

import { AweftError } from './cbor.js';
import { isAttach, isRef, sameValue, slotKey } from './commit.js';

/** A commit the document refused: every reason, most important first. */
export class Refusal extends AweftError {
  constructor(reasons) {
    super(reasons[0].code, reasons[0].message, reasons[0].path);
    this.reasons = reasons;
  }
}

// Precedence of reasons (INDEX.md 8.1: kinds before reachability).
const RANK = { 'kind-conflict': 0, 'multiple-attach': 1, unreachable: 2, 'slot-exists': 3, 'slot-missing': 3 };

export class Document {
  constructor(root, kind = 'object') {
    this.root = root;
    this.obs = new Map([[root, observable(root, kind)]]);
  }

  get(id) { return this.obs.get(id); }

  /** Applies c whole or throws a Refusal; returns its inverse. */
  apply(c) {
    if (!c.deltas || c.deltas.length === 0) throw new Refusal([{ code: 'empty-commit', message: 'a commit carries at least one delta', path: null }]);
    const deltas = c.deltas.map((d) => [slotKey(d), d]).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).map((x, i, a) => {
      if (i > 0 && a[i - 1][0] === x[0]) throw new Refusal([{ code: 'duplicate-slot', message: 'two deltas address one slot', path: null }]);
      return x[1];
    });
    const kinds = new Map(); // ids the document does not hold yet: their kind
    const attached = new Map(); // child id -> deltas attaching it
    const bad = [];
    const fail = (code, at, message) => bad.push({ code, at, message });
    const mention = (id, kind, at) => {
      const have = this.obs.get(id)?.kind ?? kinds.get(id);
      if (have === undefined) kinds.set(id, kind);
      else if (have !== kind) { fail('kind-conflict', at, `${id} is ${have}, and here ${kind}`); return false; }
      return true;
    };
    const slotOf = (id, key) => deltas.find((d) => d.id === id && d.ref.key === key);
    deltas.forEach((d, i) => {
      const t = this.obs.get(d.id);
      const same = mention(d.id, d.ref.kind, i);
      const has = !!(t && same && t.slots.has(d.ref.key));
      if (d.type === 'add' && has) fail('slot-exists', i, `add of ${d.ref.key}, which is there`);
      if (d.type !== 'add' && !has && same) fail('slot-missing', i, `${d.type} of ${d.ref.key}, which is not there`);
      if (d.type === 'remove' || !isRef(d.value)) return;
      const r = d.value;
      mention(r.ref, r.kind, i);
      if (r.edge !== 'attach' || (has && sameValue(t.slots.get(d.ref.key), r))) return;
      if (r.ref === this.root) { fail('multiple-attach', i, 'the root is attached by nothing'); return; }
      const list = attached.get(r.ref) ?? [];
      list.push(i);
      attached.set(r.ref, list);
      const child = this.obs.get(r.ref);
      if (list.length === 2) fail('multiple-attach', list[0], `two attach edges to ${r.ref}`);
      if (list.length >= 2) fail('multiple-attach', i, `two attach edges to ${r.ref}`);
      else if (child?.parent && !releases(slotOf(child.parent.id, child.parentKey), r.ref)) {
        fail('multiple-attach', i, `${r.ref} is attached already and the commit does not detach it`);
      }
    });
    // Reachability counts the attach edges the commit adds and keeps those it removes (format.md 1.1).
    const memo = new Map();
    const reach = (id) => {
      if (id === this.root) return true;
      if (memo.has(id)) return memo.get(id);
      memo.set(id, false); // a cycle reaches nothing
      const o = this.obs.get(id);
      let ok = !!(o?.parent && reach(o.parent.id));
      for (const i of attached.get(id) ?? []) ok ||= reach(deltas[i].id);
      memo.set(id, ok);
      return ok;
    };
    deltas.forEach((d, i) => { if (!reach(d.id)) fail('unreachable', i, `no attach path reaches ${d.id}`); });
    if (bad.length) {
      bad.sort((a, b) => RANK[a.code] - RANK[b.code] || a.at - b.at);
      throw new Refusal(bad.map((v) => ({ code: v.code, message: v.message, path: this.path(deltas[v.at]) })));
    }
    return this.#commit(deltas, kinds);
  }

  // #commit applies checked deltas: removes last, so a move comes out
  // right whichever of its two deltas is first.
  #commit(deltas, kinds) {
    for (const [id, kind] of kinds) this.obs.set(id, observable(id, kind));
    const inverse = [];
    const detach = (t, key, old) => {
      const c = isAttach(old) && this.obs.get(old.ref);
      if (c && c.parent === t && c.parentKey === key) { c.parent = null; c.parentKey = null; }
    };
    for (const d of deltas) {
      if (d.type === 'remove') continue;
      const t = this.obs.get(d.id);
      if (d.type === 'replace') {
        const old = t.slots.get(d.ref.key);
        inverse.push({ type: 'replace', id: d.id, ref: d.ref, value: old });
        detach(t, d.ref.key, old);
      } else inverse.push({ type: 'remove', id: d.id, ref: d.ref });
      t.slots.set(d.ref.key, d.value);
      if (isAttach(d.value)) Object.assign(this.obs.get(d.value.ref), { parent: t, parentKey: d.ref.key });
    }
    for (const d of deltas) {
      if (d.type !== 'remove') continue;
      const t = this.obs.get(d.id);
      const old = t.slots.get(d.ref.key);
      t.slots.delete(d.ref.key);
      inverse.push({ type: 'add', id: d.id, ref: d.ref, value: old });
      detach(t, d.ref.key, old);
    }
    return { deltas: inverse };
  }

  /** The slots of an observable in order: array slots by position, others by key, so two replicas list alike. */
  entries(id) {
    const o = this.obs.get(id);
    return o ? [...o.slots].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) : [];
  }

  /** The path of text steps from the root to a delta's slot, or null when it has none. */
  path(d) {
    const steps = [];
    let o = this.obs.get(d.id);
    const step = (obs, key) => (obs.kind === 'array' ? String(this.entries(obs.id).findIndex(([k]) => k === key)) : key);
    for (let n = 0; o && o.id !== this.root; n++) {
      if (!o.parent || n > this.obs.size) return null;
      steps.unshift(step(o.parent, o.parentKey));
      o = o.parent;
    }
    if (!o) return null;
    if (d.ref && this.obs.get(d.id)) steps.push(step(this.obs.get(d.id), d.ref.key));
    return steps;
  }

  /** The ids reachable from the root by attach edges, parents first. */
  reachable() {
    const out = [this.root];
    for (let i = 0; i < out.length; i++) {
      for (const v of this.obs.get(out[i]).slots.values()) if (isAttach(v)) out.push(v.ref);
    }
    return out;
  }

  /** The whole reachable document as one commit of adds, or null when empty (what a state frame carries). */
  stateCommit() {
    const deltas = [];
    for (const id of this.reachable()) {
      const o = this.obs.get(id);
      for (const [key, value] of o.slots) deltas.push({ type: 'add', id, ref: { kind: o.kind, key }, value });
    }
    return deltas.length ? { deltas } : null;
  }

  /**
   * The commit that moves this document to the one a state describes
   * (replication.md 4, "applying the difference"), or null when nothing
   * changes. Apply it in place; the document is never replaced.
   */
  diffTo(state) {
    const target = new Document(this.root, this.obs.get(this.root).kind);
    if (state) target.apply(state);
    const want = new Set(target.reachable());
    const deltas = [];
    for (const id of want) {
      const o = target.obs.get(id), cur = this.obs.get(id);
      for (const [key, value] of o.slots) {
        const ref = { kind: o.kind, key };
        if (!cur || !cur.slots.has(key)) deltas.push({ type: 'add', id, ref, value });
        else if (!sameValue(cur.slots.get(key), value)) deltas.push({ type: 'replace', id, ref, value });
      }
      for (const key of cur ? cur.slots.keys() : []) {
        if (!o.slots.has(key)) deltas.push({ type: 'remove', id, ref: { kind: cur.kind, key } });
      }
    }
    // Observables the state leaves out keep their slots, except attach edges to ones it moves.
    for (const [id, o] of this.obs) {
      if (want.has(id)) continue;
      for (const [key, v] of o.slots) {
        if (isAttach(v) && want.has(v.ref)) deltas.push({ type: 'remove', id, ref: { kind: o.kind, key } });
      }
    }
    return deltas.length ? { deltas } : null;
  }

  /** The reachable document as plain JSON: objects and maps as objects, arrays as arrays. */
  toJSON(id = this.root, seen = new Set()) {
    const o = this.obs.get(id);
    seen.add(id);
    const val = (v) => {
      if (v instanceof Uint8Array) return { bytes: [...v] };
      if (isAttach(v) && !seen.has(v.ref)) return this.toJSON(v.ref, seen);
      if (isRef(v)) return { alias: v.ref };
      return v;
    };
    if (o.kind === 'array') return this.entries(id).map(([, v]) => val(v));
    return Object.fromEntries(this.entries(id).map(([k, v]) => [k, val(v)]));
  }
}

function observable(id, kind) {
  return { id, kind, slots: new Map(), parent: null, parentKey: null };
}

// releases says whether delta d (the one addressing child's attaching slot,
// if any) removes or overwrites that edge: only then may child move.
function releases(d, child) {
  if (!d) return false;
  return d.type === 'remove' || (d.type === 'replace' && !(isAttach(d.value) && d.value.ref === child));
}
