package store

import (
	"context"
	"errors"
	"slices"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Reads run in bbolt read transactions, beside the writer. A document's
// newest records may still be only in the wal (and in pend, its in-memory
// index): a reader copies its pend slice first and then opens its
// transaction, so a record folded into the log in between is seen in one
// place or the other, never lost between them.

// consistent runs read with doc's records not yet in the log, as of now
// (the slice is shared: only read it), and again when a delete committed
// meanwhile: records copied before a delete must never be served with a
// transaction that sees the name made again after it.
func (s *Bolt) consistent(doc string, read func(p []Record) error) error {
	for {
		s.pmu.RLock()
		p, n := s.pend[doc], s.deletes
		s.pmu.RUnlock()
		err := read(p)
		s.pmu.RLock()
		again := s.deletes != n
		s.pmu.RUnlock()
		if !again {
			return err
		}
	}
}

func (s *Bolt) view(fn func(*bolt.Tx) error) error {
	s.gate.RLock()
	closed := s.closed
	s.gate.RUnlock()
	if closed {
		return ErrClosed
	}
	err := s.db.View(fn)
	if errors.Is(err, berrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	return err
}

// readState loads doc for a reader, failing when it does not exist.
func readState(tx *bolt.Tx, doc string, p []Record) (docState, error) {
	var pendLast uint64
	if len(p) > 0 {
		pendLast = p[len(p)-1].Cursor
	}
	d, err := loadState(tx, doc, pendLast)
	if err == nil && !d.exists {
		err = errorf(UnknownDocument, doc, "no such document")
	}
	return d, err
}

// gather collects doc's consecutive records from cursor from on: from the
// log's chunks while they have them, then from p.
func gather(tx *bolt.Tx, doc string, p []Record, from uint64, maxCount, maxBytes int) ([]Record, error) {
	var out []Record
	size := 0
	next := from
	prefix := logPrefix(doc)
	c := tx.Bucket(bucketLog).Cursor()
	full, gap := false, false
	for k, v := c.Seek(logKey(doc, from)); k != nil && !full && !gap; k, v = c.Next() {
		last, ok := logCursor(prefix, k)
		if !ok {
			break
		}
		err := eachChunk(last, v, func(cursor uint64, origin, commit []byte) bool {
			if cursor < next {
				return true
			}
			if cursor > next {
				gap = true
				return false
			}
			if !take(len(out), size, len(commit), maxCount, maxBytes) {
				full = true
				return false
			}
			out = append(out, Record{Cursor: cursor, Origin: string(origin), Commit: slices.Clone(commit)})
			size += len(commit)
			next++
			return true
		})
		if err != nil {
			return nil, errorf(Corrupt, doc, "log chunk does not decode")
		}
	}
	if full || len(p) == 0 || next < p[0].Cursor || next > p[len(p)-1].Cursor {
		return out, nil
	}
	for _, r := range p[next-p[0].Cursor:] {
		if !take(len(out), size, len(r.Commit), maxCount, maxBytes) {
			break
		}
		out = append(out, Record{Cursor: r.Cursor, Commit: slices.Clone(r.Commit), Origin: r.Origin})
		size += len(r.Commit)
	}
	return out, nil
}

func (s *Bolt) Read(ctx context.Context, doc string, from uint64, max int) ([]Record, error) {
	if err := checkName(doc); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []Record
	err := s.consistent(doc, func(p []Record) error {
		out = nil
		return s.view(func(tx *bolt.Tx) error {
			d, err := readState(tx, doc, p)
			if err != nil {
				return err
			}
			start, err := d.checkRead(doc, from)
			if err != nil {
				return err
			}
			out, err = gather(tx, doc, p, start, readLimit(max), MaxReadBytes)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Bolt) Load(ctx context.Context, doc string) (*Snapshot, []Record, error) {
	if err := checkName(doc); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var snap *Snapshot
	var tail []Record
	err := s.consistent(doc, func(p []Record) error {
		return s.view(func(tx *bolt.Tx) error {
			d, err := readState(tx, doc, p)
			if err != nil {
				return err
			}
			snap = &Snapshot{Cursor: d.snapshot, Root: d.root, RootKind: d.kind}
			if v := tx.Bucket(bucketSnaps).Get([]byte(doc)); len(v) > 0 {
				snap.State = slices.Clone(v)
			}
			tail, err = gather(tx, doc, p, d.snapshot+1, MaxLoadRecords, MaxLoadBytes)
			return err
		})
	})
	if err != nil {
		return nil, nil, err
	}
	return snap, tail, nil
}

func (s *Bolt) Info(ctx context.Context, doc string) (DocInfo, error) {
	if err := checkName(doc); err != nil {
		return DocInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return DocInfo{}, err
	}
	var info DocInfo
	err := s.consistent(doc, func(p []Record) error {
		return s.view(func(tx *bolt.Tx) error {
			d, err := readState(tx, doc, p)
			info = d.info(doc)
			return err
		})
	})
	if err != nil {
		return DocInfo{}, err
	}
	return info, nil
}

func (s *Bolt) Documents(ctx context.Context) ([]DocInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for {
		s.pmu.RLock()
		lasts := make(map[string]uint64, len(s.pend))
		for doc, p := range s.pend {
			if len(p) > 0 {
				lasts[doc] = p[len(p)-1].Cursor
			}
		}
		n := s.deletes
		s.pmu.RUnlock()
		var out []DocInfo
		err := s.view(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketDocs).ForEach(func(k, _ []byte) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				doc := string(k)
				d, err := loadState(tx, doc, lasts[doc])
				if err != nil {
					return err
				}
				out = append(out, d.info(doc))
				return nil
			})
		})
		s.pmu.RLock()
		again := s.deletes != n
		s.pmu.RUnlock()
		if again {
			continue // see consistent
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}
}
