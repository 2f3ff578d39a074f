package store

import (
	"bytes"
	"slices"

	bolt "go.etcd.io/bbolt"
)

type kv struct{ k, v []byte }

// MaxTrimRecords bounds the records one snapshot deletes in one transaction;
// any left over are invisible (below the floor) and go with a later snapshot.
const MaxTrimRecords = 1 << 16

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
	metas := make(map[string]*docState)
	var puts []kv
	for ; k != nil; k, v = c.Next() {
		err := eachWAL(v, func(e walEntry) error {
			d, ok := metas[string(e.doc)]
			if !ok {
				m, err := decodeMeta(docs.Get(e.doc))
				if err != nil {
					return errorf(Corrupt, string(e.doc), "wal record for a document without valid metadata")
				}
				d = &m
				metas[string(e.doc)] = d
			}
			if e.cursor <= d.floor {
				return nil
			}
			d.last = max(d.last, e.cursor)
			records++
			size += len(e.commit)
			puts = append(puts, kv{logKey(e.doc, e.cursor), encodeLogValue(e.origin, e.commit)})
			return nil
		})
		if err != nil {
			if ReasonOf(err) == "" {
				err = &Error{Reason: Corrupt, Message: "wal value does not decode", Err: err}
			}
			return 0, 0, err
		}
	}
	// In key order, each put lands at the end of what the previous one
	// touched; in wal order, documents interleave and every put shifts the
	// rest of a growing node.
	slices.SortFunc(puts, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	for _, p := range puts {
		if err := logB.Put(p.k, p.v); err != nil {
			return 0, 0, err
		}
	}
	for doc, d := range metas {
		if err := docs.Put([]byte(doc), encodeMeta(d)); err != nil {
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

// trimLog deletes doc's log records with cursor <= floor, at most
// MaxTrimRecords of them.
func trimLog(tx *bolt.Tx, doc string, floor uint64) error {
	logB := tx.Bucket(bucketLog)
	prefix := logPrefix(doc)
	c := logB.Cursor()
	var keys [][]byte
	for k, _ := c.Seek(prefix); k != nil && len(keys) < MaxTrimRecords; k, _ = c.Next() {
		cur, ok := logCursor(prefix, k)
		if !ok || cur > floor {
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
