package jsstore

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weftgate/weftgate/gateway/store"
)

// followMessages bounds the messages one Follow has pulled and not yet
// handed to fn (FollowBytes bounds their bytes).
const followMessages = 256

// Follow calls fn with each record of doc after cursor after, in cursor
// order, with no gap and no duplicate, as they are appended by this or any
// other node, until ctx ends (ctx's error), fn fails (fn's error), the
// store closes (ErrClosed) or NATS fails (ErrUnavailable). It is how a
// node learns what other nodes appended.
//
// When after is older than what is retained, or records after it are
// purged while following, Follow returns ErrCompacted: Load the snapshot
// and follow from its cursor. ErrCursorAhead when after is beyond the last
// record. fn runs on Follow's goroutine; while it runs, at most
// Options.FollowBytes and a few hundred records wait, so a slow fn slows
// the server's delivery instead of growing memory.
func (s *Store) Follow(ctx context.Context, doc string, after uint64, fn func(store.Record) error) error {
	if err := store.CheckName(doc); err != nil {
		return err
	}
	if err := s.enter(ctx, doc); err != nil {
		return err
	}
	start, m, err := s.followStart(ctx, doc, after)
	s.ops.Done() // a Follow does not hold up Close: Close ends it
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()

	cons, err := s.js.OrderedConsumer(ctx, s.o.Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{s.base(doc, &m) + ".*"},
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       start,
		InactiveThreshold: followIdle,
		// nats.go makes a dropped consumer again, and by default tries
		// forever, waiting up to 10 s between tries while it holds the
		// lock Stop needs: nothing could end such a follow. One try; the
		// hub follows again after a wait that its context ends.
		MaxResetAttempts: 1,
	})
	if err != nil {
		return s.followErr(ctx, doc, err)
	}
	// Stopping an ordered consumer leaves it on the server until it has
	// been idle for its threshold; a hub that follows again after each
	// catch-up would pile them up against the stream's limit.
	defer s.deleteConsumer(cons)
	it, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(followMessages, s.o.FollowBytes))
	if err != nil {
		return s.followErr(ctx, doc, err)
	}
	defer it.Stop()
	next := after + 1
	var recs []store.Record // reused: a message's records are handed on by value
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return s.followErr(ctx, doc, err)
		}
		recs, err = recordsOf(recs[:0], doc, &jetstream.RawStreamMsg{Header: msg.Headers(), Data: msg.Data()})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if r.Cursor < next {
				continue // redelivered after the consumer was recreated
			}
			if r.Cursor > next {
				return errorf(store.Compacted, doc, "record %d was purged while following", next)
			}
			if err := fn(r); err != nil {
				return err
			}
			next++
		}
		clear(recs) // hold no message while waiting for the next
	}
}

// deleteConsumer removes an ended Follow's consumer from the server, off
// the caller's goroutine: nothing waits for it, and a server that is away
// drops the consumer after followIdle anyway.
func (s *Store) deleteConsumer(cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(s.life, s.o.Timeout)
		defer cancel()
		_ = s.js.DeleteConsumer(ctx, s.o.Stream, info.Name)
	}()
}

// followStart finds the stream sequence to follow doc from after after.
func (s *Store) followStart(ctx context.Context, doc string, after uint64) (uint64, meta, error) {
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	m, last, lastSeq, err := s.state(ctx, doc)
	if err != nil {
		return 0, m, err
	}
	if after < m.Floor {
		return 0, m, errorf(store.Compacted, doc, "cursor %d is not retained (floor %d)", after, m.Floor)
	}
	if after > last {
		return 0, m, errorf(store.CursorAhead, doc, "cursor %d is beyond the last, %d", after, last)
	}
	if after == last {
		// Whatever comes next has a higher sequence than the last record,
		// or than anything when there is none yet.
		return lastSeq + 1, m, nil
	}
	msg, err := s.stream.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(block(s.base(doc, &m), after+1)))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, m, errorf(store.Compacted, doc, "cursor %d is no longer stored", after+1)
	}
	if err != nil {
		return 0, m, s.fail(ctx, doc, err)
	}
	return msg.Sequence, m, nil
}

func (s *Store) followErr(ctx context.Context, doc string, err error) error {
	if s.life.Err() != nil {
		return &store.Error{Reason: store.Closed, Doc: doc}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return s.fail(ctx, doc, err)
}
