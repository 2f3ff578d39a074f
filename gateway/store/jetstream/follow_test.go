package jsstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/store/storetest"
	"github.com/weftgate/weftgate/internal/natstest"
)

// follow runs s.Follow(doc, after) until it has seen n records, and
// returns them and Follow's result.
func follow(s *Store, doc string, after uint64, n int) (<-chan []store.Record, <-chan error) {
	recs, done := make(chan []store.Record, 1), make(chan error, 1)
	go func() {
		var got []store.Record
		errEnough := errors.New("enough")
		err := s.Follow(context.Background(), doc, after, func(r store.Record) error {
			got = append(got, r)
			if len(got) == n {
				return errEnough
			}
			return nil
		})
		if errors.Is(err, errEnough) {
			err = nil
		}
		recs <- got
		done <- err
	}()
	return recs, done
}

// TestFollow: a store learns, in order and whole, what another store on
// another connection appends, from the start, from the middle and from
// the end of the log.
func TestFollow(t *testing.T) {
	ns := natstest.Start(t)
	writer, _ := openOn(t, ns, Options{})
	reader, _ := openOn(t, ns, Options{})
	storetest.Create(t, writer, "d", 0)
	storetest.Create(t, writer, "other", 0)
	storetest.AppendRange(t, writer, "d", 1, 100, 7)

	fromStart, doneStart := follow(reader, "d", 0, 300)
	fromMiddle, doneMiddle := follow(reader, "d", 70, 230)
	// Records of another document interleave in the stream.
	storetest.AppendRange(t, writer, "other", 1, 50, 3)
	storetest.AppendRange(t, writer, "d", 101, 200, 1)
	fromEnd, doneEnd := follow(reader, "d", 200, 100)
	storetest.AppendRange(t, writer, "d", 201, 300, 40)

	for _, c := range []struct {
		recs <-chan []store.Record
		done <-chan error
		from uint64
	}{{fromStart, doneStart, 1}, {fromMiddle, doneMiddle, 71}, {fromEnd, doneEnd, 201}} {
		if err := <-c.done; err != nil {
			t.Fatalf("follow from %d: %v", c.from, err)
		}
		storetest.WantRecords(t, "d", <-c.recs, c.from, 300)
	}
}

// TestFollowEdges: Follow's named outcomes.
func TestFollowEdges(t *testing.T) {
	ns := natstest.Start(t)
	s, _ := openOn(t, ns, Options{Retain: 10})
	ctx := context.Background()
	storetest.Create(t, s, "d", 0)
	storetest.AppendRange(t, s, "d", 1, 200, 50)
	if err := s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: 150, Root: storetest.RootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	never := func(store.Record) error { t.Error("fn called"); return nil }
	storetest.WantReason(t, s.Follow(ctx, "d", 139, never), store.Compacted)
	storetest.WantReason(t, s.Follow(ctx, "d", 201, never), store.CursorAhead)
	storetest.WantReason(t, s.Follow(ctx, "nope", 0, never), store.UnknownDocument)
	storetest.WantReason(t, s.Follow(ctx, "", 0, never), store.BadName)

	// From the floor itself: everything retained, then fn's error ends it.
	errStop := errors.New("stop")
	var got []store.Record
	err := s.Follow(ctx, "d", 140, func(r store.Record) error {
		got = append(got, r)
		if r.Cursor == 200 {
			return errStop
		}
		return nil
	})
	if !errors.Is(err, errStop) {
		t.Fatalf("follow ended with %v, want fn's error", err)
	}
	storetest.WantRecords(t, "d", got, 141, 200)

	// A cancelled context and a closed store end a Follow that waits.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Follow(cctx, "d", 200, never) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("follow after cancel: %v", err)
	}
	started := make(chan struct{})
	go func() {
		done <- s.Follow(ctx, "d", 199, func(store.Record) error { close(started); return nil })
	}()
	<-started // it is past its setup, waiting for record 201
	s.Close()
	storetest.WantReason(t, <-done, store.Closed)
}

// TestManyFollowsAtOnce: more follows run at once than the 1,000
// consumers nats-server 2.15 allows a stream that sets no limit; each
// node's follow of each document it holds is one, so a cluster would
// otherwise hold at most 1,000 documents.
func TestManyFollowsAtOnce(t *testing.T) {
	ns := natstest.Start(t)
	s, _ := openOn(t, ns, Options{})
	storetest.Create(t, s, "d", 0)
	const n = 1100
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started, errs := make(chan struct{}, n), make(chan error, n)
	for range n {
		go func() {
			errs <- s.Follow(ctx, "d", 0, func(r store.Record) error {
				started <- struct{}{}
				return nil
			})
		}()
	}
	storetest.AppendRange(t, s, "d", 1, 1, 1)
	for i := 0; i < n; i++ {
		select {
		case <-started:
		case err := <-errs:
			t.Fatalf("after %d follows had the record, one ended: %v", i, err)
		}
	}
}

// TestOpenSetsTheFollowLimitOnAnOlderStream: a stream an earlier version
// made with no consumer limit (so the server's 1,000) gets the store's.
func TestOpenSetsTheFollowLimitOnAnOlderStream(t *testing.T) {
	ns := natstest.Start(t)
	c := connect(t, ns.URL)
	js, err := jetstream.New(c.Conn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: DefaultStream, Subjects: []string{DefaultSubject + ".>"}, AllowDirect: true, AllowAtomicPublish: true,
	}); err != nil {
		t.Fatal(err)
	}
	s, _ := openOn(t, ns, Options{})
	info, err := s.stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.MaxConsumers != DefaultMaxFollows {
		t.Fatalf("the stream allows %d consumers, want %d", info.Config.MaxConsumers, DefaultMaxFollows)
	}
}

// TestAnEndedFollowLeavesNoConsumer: the server does not keep a follow's
// consumer once the follow ends (it would otherwise stay for the ordered
// consumer's idle threshold and count against the stream's limit).
func TestAnEndedFollowLeavesNoConsumer(t *testing.T) {
	ns := natstest.Start(t)
	s, _ := openOn(t, ns, Options{})
	storetest.Create(t, s, "d", 0)
	storetest.AppendRange(t, s, "d", 1, 3, 1)
	for range 5 {
		recs, done := follow(s, "d", 0, 3)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		storetest.WantRecords(t, "d", <-recs, 1, 3)
	}
	consumers := func() int {
		info, err := s.stream.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Consumers
	}
	deadline := time.Now().Add(10 * time.Second)
	for consumers() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d consumers remain after every follow ended", consumers())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAFollowThatCannotBeMadeAgainEnds: when the server drops a follow's
// consumer and cannot make it again (here the stream is gone), Follow
// ends with an error. nats.go would otherwise try again forever, waiting
// up to 10 s between tries while holding the lock its Stop needs, so no
// one could end that follow: a gateway's shutdown waited on it
// (TestNATSServerLostUnderWrites, 2026-12-07). The hub follows again
// after a wait of its own, which its context ends.
func TestAFollowThatCannotBeMadeAgainEnds(t *testing.T) {
	ns := natstest.Start(t)
	s, _ := openOn(t, ns, Options{})
	storetest.Create(t, s, "d", 0)
	storetest.AppendRange(t, s, "d", 1, 3, 1)
	got, done := make(chan struct{}, 3), make(chan error, 1)
	go func() {
		done <- s.Follow(context.Background(), "d", 0, func(store.Record) error {
			got <- struct{}{}
			return nil
		})
	}()
	for range 3 {
		select {
		case <-got:
		case err := <-done:
			t.Fatalf("the follow ended before it had the log: %v", err)
		}
	}
	if err := s.js.DeleteStream(context.Background(), s.o.Stream); err != nil {
		t.Fatal(err)
	}
	// The bound only turns a hang into a failure; it ends at once.
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("the follow ended with %v, not store-unavailable, when its stream went", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the follow did not end when its consumer could not be made again")
	}
}
