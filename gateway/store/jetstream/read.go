package jsstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/synadia-io/orbit.go/jetstreamext"

	"github.com/weftgate/weftgate/gateway/store"
)

// loadAttempts bounds how often Load starts again when a snapshot
// replaced the one it was reading.
const loadAttempts = 3

// Read implements store.Store.
func (s *Store) Read(ctx context.Context, doc string, from uint64, max int) ([]store.Record, error) {
	if err := store.CheckName(doc); err != nil {
		return nil, err
	}
	if err := s.enter(ctx, doc); err != nil {
		return nil, err
	}
	defer s.ops.Done()
	tctx, cancel := s.timeout(ctx)
	m, last, _, err := s.state(tctx, doc)
	cancel()
	if err != nil {
		return nil, err
	}
	if from == 0 {
		from = 1
	}
	if from <= m.Floor {
		return nil, errorf(store.Compacted, doc, "cursor %d is not retained (floor %d)", from, m.Floor)
	}
	if from > last+1 {
		return nil, errorf(store.CursorAhead, doc, "cursor %d is beyond the last, %d", from, last)
	}
	if max <= 0 || max > store.MaxReadRecords {
		max = store.MaxReadRecords
	}
	return s.scan(ctx, doc, &m, from, last, max, store.MaxReadBytes)
}

// scan returns records from..last of m's generation, at most maxRecs of
// them and maxBytes of commits but at least one. It starts at the first
// record of from's block and skips what lies before from, a bounded
// amount, holding at most one server batch at a time. Each request has
// its own Options.Timeout, so a long scan is not cut short.
func (s *Store) scan(ctx context.Context, doc string, m *meta, from, last uint64, maxRecs, maxBytes int) ([]store.Record, error) {
	var out []store.Record
	if from > last {
		return out, nil
	}
	base := s.base(doc, m)
	tctx, cancel := s.timeout(ctx)
	first, err := s.stream.GetMsg(tctx, 1, jetstream.WithGetMsgSubject(block(base, from)))
	cancel()
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, errorf(store.Compacted, doc, "cursor %d is no longer stored", from)
	}
	if err != nil {
		return nil, s.fail(ctx, doc, err)
	}
	seq, size, next := first.Sequence, 0, from
	var recs []store.Record // one message's, reused
	for next <= last {
		batch, err := s.scanBatch(ctx, doc, base, seq)
		if err != nil {
			return nil, err
		}
		for _, msg := range batch {
			seq = msg.Sequence + 1
			recs, err = recordsOf(recs[:0], doc, msg)
			if err != nil {
				return nil, err
			}
			for _, r := range recs {
				if r.Cursor < next {
					continue // before from in its block
				}
				if r.Cursor != next {
					// A snapshot purged under us, or the log is broken.
					return nil, errorf(store.Compacted, doc, "record %d is missing (found %d)", next, r.Cursor)
				}
				if len(out) > 0 && (len(out) >= maxRecs || size+len(r.Commit) > maxBytes) || next > last {
					return out, nil
				}
				out = append(out, r)
				size += len(r.Commit)
				next++
			}
		}
		if len(batch) == 0 {
			return nil, errorf(store.Compacted, doc, "record %d is missing", next)
		}
	}
	return out, nil
}

// scanBatch fetches up to MaxReadBytes of base's records from seq on.
func (s *Store) scanBatch(ctx context.Context, doc, base string, seq uint64) ([]*jetstream.RawStreamMsg, error) {
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	it, err := jetstreamext.GetBatch(ctx, s.js, s.o.Stream, store.MaxReadRecords,
		jetstreamext.GetBatchSeq(seq), jetstreamext.GetBatchSubject(base+".*"),
		jetstreamext.GetBatchMaxBytes(store.MaxReadBytes))
	if err != nil {
		return nil, s.fail(ctx, doc, err)
	}
	var out []*jetstream.RawStreamMsg
	for msg, err := range it {
		if errors.Is(err, jetstreamext.ErrNoMessages) {
			break
		}
		if err != nil {
			return nil, s.fail(ctx, doc, err)
		}
		out = append(out, msg)
	}
	return out, nil
}

// Load implements store.Store.
func (s *Store) Load(ctx context.Context, doc string) (*store.Snapshot, []store.Record, error) {
	if err := store.CheckName(doc); err != nil {
		return nil, nil, err
	}
	if err := s.enter(ctx, doc); err != nil {
		return nil, nil, err
	}
	defer s.ops.Done()
	var err error
	for range loadAttempts {
		var snap *store.Snapshot
		var tail []store.Record
		snap, tail, err = s.load(ctx, doc)
		if !errors.Is(err, store.ErrCompacted) && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return snap, tail, err
		}
		// A newer snapshot replaced the one read: read it.
	}
	return nil, nil, &store.Error{Reason: store.Unavailable, Doc: doc, Message: "snapshots kept replacing each other", Err: err}
}

func (s *Store) load(ctx context.Context, doc string) (*store.Snapshot, []store.Record, error) {
	tctx, cancel := s.timeout(ctx)
	defer cancel()
	m, last, _, err := s.state(tctx, doc)
	if err != nil {
		return nil, nil, err
	}
	snap := &store.Snapshot{Cursor: m.Snapshot, RootKind: m.Kind}
	copy(snap.Root[:], m.Root)
	switch {
	case m.Object != "":
		state, err := s.obj.GetBytes(tctx, m.Object)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return nil, nil, err
		}
		if err != nil {
			return nil, nil, s.fail(tctx, doc, err)
		}
		snap.State = state
	case len(m.State) > 0:
		snap.State = m.State
	}
	tail, err := s.scan(ctx, doc, &m, m.Snapshot+1, last, store.MaxLoadRecords, store.MaxLoadBytes)
	if err != nil {
		return nil, nil, err
	}
	return snap, tail, nil
}

// Info implements store.Store.
func (s *Store) Info(ctx context.Context, doc string) (store.DocInfo, error) {
	if err := store.CheckName(doc); err != nil {
		return store.DocInfo{}, err
	}
	if err := s.enter(ctx, doc); err != nil {
		return store.DocInfo{}, err
	}
	defer s.ops.Done()
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	m, last, _, err := s.state(ctx, doc)
	if err != nil {
		return store.DocInfo{}, err
	}
	return m.info(doc, last), nil
}

// Documents implements store.Store. It reads each document's entry and
// last record: one listing and two requests per document.
func (s *Store) Documents(ctx context.Context) ([]store.DocInfo, error) {
	if err := s.enter(ctx, ""); err != nil {
		return nil, err
	}
	defer s.ops.Done()
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	keys, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, s.fail(ctx, "", err)
	}
	var ks []string
	for k := range keys.Keys() { // drained whole: the lister's goroutine ends
		ks = append(ks, k)
	}
	if err := ctx.Err(); err != nil { // the lister stops silently on it
		return nil, s.fail(ctx, "", err)
	}
	names := make([]string, 0, len(ks))
	for _, k := range ks {
		e, err := s.kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, s.fail(ctx, "", err)
		}
		var m meta
		if err := json.Unmarshal(e.Value(), &m); err != nil {
			return nil, &store.Error{Reason: store.Corrupt, Message: "document entry " + k + " does not decode", Err: err}
		}
		names = append(names, m.Name)
	}
	out := make([]store.DocInfo, 0, len(names))
	for _, doc := range names {
		m, last, _, err := s.state(ctx, doc)
		if errors.Is(err, store.ErrUnknownDocument) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m.info(doc, last))
	}
	slices.SortFunc(out, func(a, b store.DocInfo) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}
