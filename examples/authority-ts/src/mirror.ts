// The claimed documents as the commit stream leaves them, kept with the
// API's typed view alone (no aweft codec): each observable's slots, keyed
// by their ref, and saved after every event.
import type { Delta, Delta__Output } from './gen/weftgate/v1/Delta';
import type { DocumentState, DocumentState__Output } from './gen/weftgate/v1/DocumentState';
import type { Ref__Output } from './gen/weftgate/v1/Ref';
import type { Root__Output } from './gen/weftgate/v1/Root';
import type { Stored } from './store';

type Slot = Pick<Delta, 'id' | 'ref' | 'value'>;

export class Doc {
  // By observable id (base64), then by slot key.
  private readonly obs = new Map<string, Map<string, Slot>>();

  constructor(
    readonly name: string,
    readonly root: Root__Output,
    public cursor: bigint,
  ) {}

  static fromState(name: string, st: DocumentState | DocumentState__Output, cursor: bigint): Doc {
    if (!st.root) throw new Error(`${name}: a state with no root`);
    const d = new Doc(name, st.root as Root__Output, cursor);
    d.apply((st.commit?.deltas ?? []) as Delta__Output[]);
    return d;
  }

  // apply takes one commit's deltas; an add to a taken slot, or a replace
  // or remove of an empty one, throws (the caller reads the document whole).
  apply(deltas: Delta__Output[]): void {
    for (const d of deltas) {
      const id = d.id?.value;
      if (!id || !d.ref) throw new Error('a delta with no id or ref');
      let slots = this.obs.get(id);
      if (!slots) this.obs.set(id, (slots = new Map()));
      const key = slotKey(d.ref);
      const had = slots.has(key);
      switch (d.type) {
        case 'DELTA_TYPE_ADD':
        case 'DELTA_TYPE_REPLACE':
          if (had !== (d.type === 'DELTA_TYPE_REPLACE')) throw new Error(`${d.type} of slot ${key} that ${had ? 'exists' : 'does not exist'}`);
          slots.set(key, { id: d.id, ref: d.ref, value: d.value });
          break;
        case 'DELTA_TYPE_REMOVE':
          if (!had) throw new Error(`remove of slot ${key} that does not exist`);
          slots.delete(key);
          break;
        default:
          throw new Error(`a delta of type ${String(d.type)}`);
      }
    }
  }

  // state is the document as a DocumentState: an add for every slot of
  // every observable the root reaches by attach edges, which is what a
  // state is (the gateway sorts the deltas when it encodes them).
  state(): DocumentState {
    const deltas: Delta[] = [];
    const seen = new Set<string>();
    const walk = (id: string) => {
      if (seen.has(id)) return;
      seen.add(id);
      for (const s of this.obs.get(id)?.values() ?? []) {
        deltas.push({ type: 'DELTA_TYPE_ADD', id: s.id, ref: s.ref, value: s.value });
        const r = s.value?.reference;
        if (r && r.edge === 'EDGE_ATTACH' && typeof r.id?.value === 'string') walk(r.id.value);
      }
    };
    walk(this.root.id?.value ?? '');
    return { root: this.root, commit: deltas.length > 0 ? { deltas } : null };
  }

  stored(): Stored {
    return { document: this.name, cursor: this.cursor.toString(), state: this.state() };
  }
}

function slotKey(r: Ref__Output): string {
  switch (r.key) {
    case 'object_key':
      return 'o:' + r.object_key;
    case 'array_position':
      return 'a:' + r.array_position;
    case 'map_key':
      return 'm:' + r.map_key?.value;
  }
  throw new Error('a ref with no key');
}
