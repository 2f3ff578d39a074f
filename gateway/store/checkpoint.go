package store

import (
	"bytes"
	"encoding/binary"
	"maps"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// folding is one document's part of a checkpoint.
type folding struct {
	meta    docState
	entries []walEntry
}

// arena hands out byte slices from large chunks, so a checkpoint's keys
// and values (which must live until commit) cost few allocations.
type arena struct{ chunk []byte }

const arenaChunk = 1 << 20

func (a *arena) take(n int) []byte {
	if len(a.chunk) < n {
		a.chunk = make([]byte, max(n, arenaChunk))
	}
	b := a.chunk[:n:n]
	a.chunk = a.chunk[n:]
	return b
}

// MaxTrimChunks bounds the log chunks one snapshot deletes in one
// transaction; any left over are invisible (below the floor) and go with a
// later snapshot.
const MaxTrimChunks = 1 << 14

// logFill is the log bucket's split fill: documents append at the end of
// their own key range, so fuller pages mean fewer pages to write.
const logFill = 0.9

// checkpoint folds every record of the wal bucket into the per-document log,
// moves each document's meta last cursor up to its newest record, and
// empties the wal, inside tx: atomic with whatever else tx does, so a crash
// leaves a record in exactly one of the two. Records at or below their
// document's floor (trimmed by a snapshot meanwhile) are dropped.
//
// Nothing here moves a cursor backwards: a bbolt cursor stepping back over
// a node emptied by deletes earlier in the same transaction can miss keys.
func checkpoint(tx *bolt.Tx) (records, size int, err error) {
	wal := tx.Bucket(bucketWAL)
	c := wal.Cursor()
	k, v := c.First()
	if k == nil {
		return 0, 0, nil
	}
	logB := tx.Bucket(bucketLog)
	logB.FillPercent = logFill
	docs := tx.Bucket(bucketDocs)
	// Group by document: within one, wal order is cursor order. Putting
	// each document's records together and documents in key order makes
	// every put land just after the previous one, instead of shifting the
	// rest of a growing node. The slices alias wal values, valid in tx.
	byDoc := make(map[string]*folding)
	for ; k != nil; k, v = c.Next() {
		err := eachWAL(v, func(e walEntry) error {
			f, ok := byDoc[string(e.doc)]
			if !ok {
				m, err := decodeMeta(docs.Get(e.doc))
				if err != nil {
					return errorf(Corrupt, string(e.doc), "wal record for a document without valid metadata")
				}
				f = &folding{meta: m}
				byDoc[string(e.doc)] = f
			}
			if e.cursor <= f.meta.floor {
				return nil
			}
			f.meta.last = max(f.meta.last, e.cursor)
			f.entries = append(f.entries, e)
			records++
			size += len(e.commit)
			return nil
		})
		if err != nil {
			if ReasonOf(err) == "" {
				err = &Error{Reason: Corrupt, Message: "wal value does not decode", Err: err}
			}
			return 0, 0, err
		}
	}
	names := slices.Collect(maps.Keys(byDoc))
	slices.SortFunc(names, func(a, b string) int { return bytes.Compare(logPrefix(a), logPrefix(b)) })
	var a arena
	for _, doc := range names {
		f := byDoc[doc]
		for len(f.entries) > 0 {
			n, size := 0, 0
			for n < len(f.entries) && n < chunkRecords && (n == 0 || size < chunkBytes) {
				size += 2*binary.MaxVarintLen64 + len(f.entries[n].origin) + len(f.entries[n].commit)
				n++
			}
			part := f.entries[:n]
			f.entries = f.entries[n:]
			last := part[n-1].cursor
			val := a.take(1 + binary.MaxVarintLen64 + size)[:0]
			val = append(val, formatVersion)
			val = binary.AppendUvarint(val, uint64(n))
			for _, e := range part {
				val = appendChunkRecord(val, e.origin, e.commit)
			}
			if err := logB.Put(logKey(doc, last), val); err != nil {
				return 0, 0, err
			}
		}
		if err := docs.Put([]byte(doc), encodeMeta(&f.meta)); err != nil {
			return 0, 0, err
		}
	}
	// Dropping the bucket frees its pages in one step.
	if err := tx.DeleteBucket(bucketWAL); err != nil {
		return 0, 0, err
	}
	_, err = tx.CreateBucket(bucketWAL)
	return records, size, err
}

// trimLog deletes doc's log chunks that end at or below floor, at most
// MaxTrimChunks of them. A chunk that straddles floor stays: retention is a
// lower bound.
func trimLog(tx *bolt.Tx, doc string, floor uint64) error {
	logB := tx.Bucket(bucketLog)
	prefix := logPrefix(doc)
	c := logB.Cursor()
	var keys [][]byte
	for k, _ := c.Seek(prefix); k != nil && len(keys) < MaxTrimChunks; k, _ = c.Next() {
		last, ok := logCursor(prefix, k)
		if !ok || last > floor {
			break
		}
		keys = append(keys, append([]byte(nil), k...))
	}
	// Deleting behind a live cursor can skip keys, so delete afterwards.
	for _, k := range keys {
		if err := logB.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// deleteDocument removes doc's metadata, snapshot and every log chunk
// inside tx; the wal must be folded first. The first error is the caller's
// outcome (no such document), the second fails the transaction. Unlike
// trimLog it is not bounded: a deletion that left records behind would not
// be one.
func deleteDocument(tx *bolt.Tx, doc string) (error, error) {
	docs := tx.Bucket(bucketDocs)
	if docs.Get([]byte(doc)) == nil {
		return errorf(UnknownDocument, doc, "no such document"), nil
	}
	if err := docs.Delete([]byte(doc)); err != nil {
		return nil, err
	}
	if err := tx.Bucket(bucketSnaps).Delete([]byte(doc)); err != nil {
		return nil, err
	}
	logB := tx.Bucket(bucketLog)
	prefix := logPrefix(doc)
	c := logB.Cursor()
	var keys [][]byte
	for k, _ := c.Seek(prefix); k != nil; k, _ = c.Next() {
		if _, ok := logCursor(prefix, k); !ok {
			break
		}
		keys = append(keys, append([]byte(nil), k...))
	}
	// Deleting behind a live cursor can skip keys, so delete afterwards.
	for _, k := range keys {
		if err := logB.Delete(k); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// loadState reads doc's state as of tx, with pendLast the cursor of its
// newest record not yet in the log (0 when none).
func loadState(tx *bolt.Tx, doc string, pendLast uint64) (docState, error) {
	v := tx.Bucket(bucketDocs).Get([]byte(doc))
	if v == nil {
		return docState{}, nil
	}
	d, err := decodeMeta(v)
	if err != nil {
		return d, errorf(Corrupt, doc, "document metadata does not decode")
	}
	d.last = max(d.last, pendLast)
	return d, nil
}
