// One JSON file per document in a directory: {document, cursor, state},
// the state in the API's own object form (DocumentState), so a load answer
// hands it back unchanged.
import fs from 'node:fs';
import path from 'node:path';
import type { DocumentState } from './gen/weftgate/v1/DocumentState';

// A bigger file is refused rather than read into memory.
export const maxFileBytes = 64 << 20;

export interface Stored {
  document: string;
  cursor: string; // uint64, decimal
  state: DocumentState;
}

// fileName escapes a document name into one safe file name, as the Go
// example does: letters, digits, '-' and '_' stay, every other byte is %XX.
export function fileName(name: string): string {
  let out = '';
  for (const b of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_-]/.test(c) ? c : '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out + '.json';
}

function unescape(base: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < base.length; i++) {
    if (base[i] !== '%') {
      bytes.push(base.charCodeAt(i));
      continue;
    }
    const v = parseInt(base.slice(i + 1, i + 3), 16);
    if (Number.isNaN(v)) return undefined;
    bytes.push(v);
    i += 2;
  }
  const name = Buffer.from(bytes).toString('utf8');
  return fileName(name) === base + '.json' ? name : undefined;
}

export class DirStore {
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  // load reads a document; undefined when there is no file for it.
  load(name: string): Stored | undefined {
    const file = path.join(this.dir, fileName(name));
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    if (st.size > maxFileBytes) throw new Error(`${file} is ${st.size} bytes, over the ${maxFileBytes}-byte bound`);
    const s = JSON.parse(fs.readFileSync(file, 'utf8')) as Stored;
    if (s.document !== name) throw new Error(`${file} holds ${JSON.stringify(s.document)}, not ${JSON.stringify(name)}`);
    return s;
  }

  // save writes a document atomically: a reader sees the old file or the new.
  save(s: Stored): void {
    const tmp = path.join(this.dir, `.tmp-${process.pid}-${Date.now()}`);
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeSync(fd, JSON.stringify(s, null, 2) + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, path.join(this.dir, fileName(s.document)));
  }

  // all lists every stored document.
  all(): Stored[] {
    const out: Stored[] = [];
    for (const e of fs.readdirSync(this.dir)) {
      if (!e.endsWith('.json') || e.startsWith('.')) continue;
      const name = unescape(e.slice(0, -'.json'.length));
      if (name === undefined) continue; // not one of ours
      const s = this.load(name);
      if (s) out.push(s);
    }
    return out;
  }
}
