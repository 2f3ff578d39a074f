import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { DirStore, fileName } from './store';

test('names are escaped into one safe file name each', () => {
  assert.equal(fileName('board:1'), 'board%3A1.json');
  assert.equal(fileName('../x'), '%2E%2E%2Fx.json');
  assert.equal(fileName('é'), '%C3%A9.json');
});

test('a document saved is loaded and listed; other files are not', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-'));
  const s = new DirStore(dir);
  const doc = { document: 'board:1', cursor: '3', state: { root: { id: { value: 'AAAAAAAAAAAAAAAA' }, kind: 'KIND_OBJECT' as const }, commit: null } };
  s.save(doc);
  assert.deepEqual(s.load('board:1'), doc);
  assert.equal(s.load('board:2'), undefined);
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');
  fs.writeFileSync(path.join(dir, 'a%zz.json'), '{}');
  assert.deepEqual(s.all().map((x) => x.document), ['board:1']);
  fs.copyFileSync(path.join(dir, fileName('board:1')), path.join(dir, fileName('board:9')));
  assert.throws(() => s.load('board:9'), /holds "board:1"/);
});
