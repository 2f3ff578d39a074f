package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weftgate/weftgate/gateway/store"
)

// Run runs the suite every store.Store implementation must pass.
func Run(t *testing.T, su Suite) {
	tests := []struct {
		name string
		fn   func(*testing.T, Suite)
	}{
		{"Lifecycle", testLifecycle},
		{"UnknownDocument", testUnknownDocument},
		{"CursorRules", testCursorRules},
		{"Retention", testRetention},
		{"RetainAll", testRetainAll},
		{"CreateAtCursor", testCreateAtCursor},
		{"SnapshotRules", testSnapshotRules},
		{"Names", testNames},
		{"Limits", testLimits},
		{"ReadBounds", testReadBounds},
		{"LoadBounds", testLoadBounds},
		{"Documents", testDocuments},
		{"Copies", testCopies},
		{"Concurrent", testConcurrent},
		{"Failure", testFailure},
		{"Context", testContext},
		{"Closed", testClosed},
		{"Delete", testDelete},
		{"DeleteFailure", testDeleteFailure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, su) })
	}
}

func testLifecycle(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	Create(t, s, "d", 0)
	if got := Info(t, s, "d"); got != (store.DocInfo{Name: "d", Root: RootOf("d"), RootKind: 2}) {
		t.Fatalf("new document info %+v", got)
	}
	if err := s.Append(ctx, "d", nil); err != nil {
		t.Fatalf("empty append: %v", err)
	}
	AppendRange(t, s, "d", 1, 3, 3)
	AppendRange(t, s, "d", 4, 4, 1)
	snap, tail, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if snap == nil || snap.Cursor != 0 || snap.State != nil || snap.Root != RootOf("d") || snap.RootKind != 2 {
		t.Fatalf("snapshot %+v", snap)
	}
	WantRecords(t, "d", tail, 1, 4)
	WantRecords(t, "d", Read(t, s, "d", 0, 0), 1, 4)
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, 4)
	WantRecords(t, "d", Read(t, s, "d", 3, 1), 3, 3)
	if got := Read(t, s, "d", 5, 0); len(got) != 0 {
		t.Fatalf("read at last+1 gave %d records", len(got))
	}
	_, err = s.Read(ctx, "d", 6, 0)
	WantReason(t, err, store.CursorAhead)
	if got := Info(t, s, "d"); got.Last != 4 || got.Floor != 0 || got.Snapshot != 0 {
		t.Fatalf("info %+v", got)
	}
	if err := s.Healthy(ctx); err != nil {
		t.Fatalf("healthy: %v", err)
	}
}

func testUnknownDocument(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	WantReason(t, s.Append(ctx, "nope", Recs("nope", 1, 1)), store.UnknownDocument)
	_, _, err := s.Load(ctx, "nope")
	WantReason(t, err, store.UnknownDocument)
	_, err = s.Read(ctx, "nope", 1, 0)
	WantReason(t, err, store.UnknownDocument)
	_, err = s.Info(ctx, "nope")
	WantReason(t, err, store.UnknownDocument)
	docs, err := s.Documents(ctx)
	if err != nil || len(docs) != 0 {
		t.Fatalf("documents %v, %v", docs, err)
	}
}

func testCursorRules(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	Create(t, s, "d", 0)
	WantReason(t, s.Append(ctx, "d", Recs("d", 2, 1)), store.CursorMismatch) // gap
	WantReason(t, s.Append(ctx, "d", []store.Record{Rec("d", 0)}), store.CursorMismatch)
	AppendRange(t, s, "d", 1, 2, 2)
	WantReason(t, s.Append(ctx, "d", Recs("d", 2, 1)), store.CursorMismatch) // taken
	WantReason(t, s.Append(ctx, "d", Recs("d", 1, 3)), store.CursorMismatch)
	WantReason(t, s.Append(ctx, "d", []store.Record{Rec("d", 3), Rec("d", 5)}), store.CursorMismatch)
	WantReason(t, s.Append(ctx, "d", []store.Record{Rec("d", 3), Rec("d", 3)}), store.CursorMismatch)
	if got := Info(t, s, "d").Last; got != 2 {
		t.Fatalf("last %d after refused appends, want 2", got)
	}
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, 2)
	AppendRange(t, s, "d", 3, 3, 1)
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, 3)
}

func testRetention(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{Retain: 5})
	ctx := context.Background()
	Create(t, s, "d", 0)
	AppendRange(t, s, "d", 1, 20, 3)
	if err := s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: 15, State: []byte("S15"), Root: RootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	if got := Info(t, s, "d"); got.Snapshot != 15 || got.Floor != 10 || got.Last != 20 {
		t.Fatalf("info %+v, want snapshot 15 floor 10 last 20", got)
	}
	_, err := s.Read(ctx, "d", 10, 0)
	WantReason(t, err, store.Compacted)
	_, err = s.Read(ctx, "d", 0, 0)
	WantReason(t, err, store.Compacted)
	WantRecords(t, "d", Read(t, s, "d", 11, 0), 11, 20)
	snap, tail, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Cursor != 15 || string(snap.State) != "S15" {
		t.Fatalf("snapshot %d %q", snap.Cursor, snap.State)
	}
	WantRecords(t, "d", tail, 16, 20)

	// The same cursor replaces the state; the floor only moves up.
	if err := s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: 15, State: []byte("S15b"), Root: RootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	AppendRange(t, s, "d", 21, 22, 2)
	if err := s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: 22, State: []byte("S22"), Root: RootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	if got := Info(t, s, "d"); got.Snapshot != 22 || got.Floor != 17 || got.Last != 22 {
		t.Fatalf("info %+v, want snapshot 22 floor 17 last 22", got)
	}
	_, err = s.Read(ctx, "d", 17, 0)
	WantReason(t, err, store.Compacted)
	WantRecords(t, "d", Read(t, s, "d", 18, 0), 18, 22)
	snap, tail, err = s.Load(ctx, "d")
	if err != nil || snap.Cursor != 22 || string(snap.State) != "S22" || len(tail) != 0 {
		t.Fatalf("load: %+v %d records %v", snap, len(tail), err)
	}
	AppendRange(t, s, "d", 23, 30, 1)
	WantRecords(t, "d", Read(t, s, "d", 18, 0), 18, 30)
}

func testRetainAll(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{Retain: -1})
	Create(t, s, "d", 0)
	AppendRange(t, s, "d", 1, 50, 7)
	if err := s.PutSnapshot(context.Background(), "d", store.Snapshot{Cursor: 50, Root: RootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	if got := Info(t, s, "d"); got.Floor != 0 {
		t.Fatalf("floor %d with Retain -1", got.Floor)
	}
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, 50)
}

func testCreateAtCursor(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	if err := s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: 100, State: []byte("state"), Root: RootOf("d"), RootKind: 1}); err != nil {
		t.Fatal(err)
	}
	if got := Info(t, s, "d"); got.Snapshot != 100 || got.Floor != 100 || got.Last != 100 || got.RootKind != 1 {
		t.Fatalf("info %+v", got)
	}
	WantReason(t, s.Append(ctx, "d", Recs("d", 1, 1)), store.CursorMismatch)
	AppendRange(t, s, "d", 101, 102, 1)
	_, err := s.Read(ctx, "d", 100, 0)
	WantReason(t, err, store.Compacted)
	WantRecords(t, "d", Read(t, s, "d", 101, 0), 101, 102)
	snap, tail, err := s.Load(ctx, "d")
	if err != nil || snap.Cursor != 100 || string(snap.State) != "state" {
		t.Fatalf("load %+v %v", snap, err)
	}
	WantRecords(t, "d", tail, 101, 102)
}

func testSnapshotRules(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	Create(t, s, "d", 0)
	AppendRange(t, s, "d", 1, 10, 10)
	put := func(c uint64, root [12]byte, kind uint8) error {
		return s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: c, Root: root, RootKind: kind})
	}
	if err := put(5, RootOf("d"), 2); err != nil {
		t.Fatal(err)
	}
	WantReason(t, put(4, RootOf("d"), 2), store.SnapshotCursor)
	WantReason(t, put(11, RootOf("d"), 2), store.SnapshotCursor)
	WantReason(t, put(6, RootOf("other"), 2), store.RootMismatch)
	WantReason(t, put(6, RootOf("d"), 0), store.RootMismatch)
	if got := Info(t, s, "d"); got.Snapshot != 5 || got.Last != 10 || got.Root != RootOf("d") {
		t.Fatalf("info %+v after refused snapshots", got)
	}
	// An empty state reads back as nil, the empty document.
	if err := s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: 10, State: []byte{}, Root: RootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	snap, _, err := s.Load(ctx, "d")
	if err != nil || snap.State != nil || snap.Cursor != 10 {
		t.Fatalf("load %+v %v", snap, err)
	}
}

func testNames(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	long := strings.Repeat("n", store.MaxNameBytes)
	Create(t, s, long, 0)
	AppendRange(t, s, long, 1, 2, 2)
	WantRecords(t, long, Read(t, s, long, 1, 0), 1, 2)
	// Names are bytes: a prefix of another name is another document.
	Create(t, s, "ab", 0)
	Create(t, s, "a", 0)
	AppendRange(t, s, "ab", 1, 3, 1)
	AppendRange(t, s, "a", 1, 1, 1)
	WantRecords(t, "a", Read(t, s, "a", 1, 0), 1, 1)
	WantRecords(t, "ab", Read(t, s, "ab", 1, 0), 1, 3)
	for _, bad := range []string{"", long + "n"} {
		WantReason(t, s.Append(ctx, bad, Recs(bad, 1, 1)), store.BadName)
		WantReason(t, s.PutSnapshot(ctx, bad, store.Snapshot{}), store.BadName)
		_, _, err := s.Load(ctx, bad)
		WantReason(t, err, store.BadName)
		_, err = s.Read(ctx, bad, 1, 0)
		WantReason(t, err, store.BadName)
		_, err = s.Info(ctx, bad)
		WantReason(t, err, store.BadName)
	}
}

func testLimits(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	Create(t, s, "d", 0)
	big := store.Record{Cursor: 1, Commit: make([]byte, store.MaxRecordBytes+1)}
	WantReason(t, s.Append(ctx, "d", []store.Record{big}), store.TooLarge)
	WantReason(t, s.Append(ctx, "d", []store.Record{{Cursor: 1, Origin: strings.Repeat("o", store.MaxOriginBytes+1)}}), store.TooLarge)
	WantReason(t, s.Append(ctx, "d", Recs("d", 1, store.MaxAppendRecords+1)), store.TooLarge)
	many := make([]store.Record, store.MaxAppendBytes/store.MaxRecordBytes+1)
	shared := make([]byte, store.MaxRecordBytes)
	for i := range many {
		many[i] = store.Record{Cursor: uint64(i + 1), Commit: shared}
	}
	WantReason(t, s.Append(ctx, "d", many), store.TooLarge)
	WantReason(t, s.PutSnapshot(ctx, "d", store.Snapshot{State: make([]byte, store.MaxSnapshotBytes+1), Root: RootOf("d"), RootKind: 2}), store.TooLarge)
	if got := Info(t, s, "d").Last; got != 0 {
		t.Fatalf("last %d after refused appends", got)
	}
	// At the limits exactly, everything is taken.
	atMax := []store.Record{{Cursor: 1, Commit: shared, Origin: strings.Repeat("o", store.MaxOriginBytes)}}
	if err := s.Append(ctx, "d", atMax); err != nil {
		t.Fatal(err)
	}
	got := Read(t, s, "d", 1, 0)
	if len(got) != 1 || len(got[0].Commit) != store.MaxRecordBytes || got[0].Origin != atMax[0].Origin {
		t.Fatalf("read back %d records", len(got))
	}
}

func testReadBounds(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	Create(t, s, "d", 0)
	AppendRange(t, s, "d", 1, store.MaxReadRecords+100, store.MaxAppendRecords)
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, store.MaxReadRecords)
	WantRecords(t, "d", Read(t, s, "d", 1, store.MaxReadRecords+1), 1, store.MaxReadRecords)
	WantRecords(t, "d", Read(t, s, "d", 1, -1), 1, store.MaxReadRecords)
	WantRecords(t, "d", Read(t, s, "d", 7, 10), 7, 16)
	WantRecords(t, "d", Read(t, s, "d", store.MaxReadRecords+1, 0), store.MaxReadRecords+1, store.MaxReadRecords+100)

	// Bytes: records of a quarter of MaxReadBytes come four at a time, and
	// a record larger than the bound still comes alone.
	Create(t, s, "big", 0)
	quarter := make([]byte, store.MaxReadBytes/4)
	for c := uint64(1); c <= 6; c++ {
		if err := s.Append(ctx, "big", []store.Record{{Cursor: c, Commit: quarter}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := Read(t, s, "big", 1, 0); len(got) != 4 || got[3].Cursor != 4 {
		t.Fatalf("read %d records of a quarter store.MaxReadBytes, want 4", len(got))
	}
	if got := Read(t, s, "big", 5, 0); len(got) != 2 {
		t.Fatalf("read %d records, want 2", len(got))
	}
}

func testLoadBounds(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{Retain: -1})
	ctx := context.Background()
	Create(t, s, "d", 0)
	last := uint64(store.MaxLoadRecords + 10)
	AppendRange(t, s, "d", 1, last, store.MaxAppendRecords)
	_, tail, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	WantRecords(t, "d", tail, 1, store.MaxLoadRecords)
	WantRecords(t, "d", Read(t, s, "d", store.MaxLoadRecords+1, 0), store.MaxLoadRecords+1, last)
}

func testDocuments(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	for i, doc := range []string{"b", "a", "c"} {
		Create(t, s, doc, 0)
		AppendRange(t, s, doc, 1, uint64(i+1), 1)
	}
	if err := s.PutSnapshot(ctx, "b", store.Snapshot{Cursor: 1, Root: RootOf("b"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	docs, err := s.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.DocInfo{
		{Name: "a", Root: RootOf("a"), RootKind: 2, Last: 2},
		{Name: "b", Root: RootOf("b"), RootKind: 2, Snapshot: 1, Last: 1},
		{Name: "c", Root: RootOf("c"), RootKind: 2, Last: 3},
	}
	if fmt.Sprint(docs) != fmt.Sprint(want) {
		t.Fatalf("documents\n got %+v\nwant %+v", docs, want)
	}
}

func testCopies(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	Create(t, s, "d", 0)
	in := Recs("d", 1, 2)
	if err := s.Append(ctx, "d", in); err != nil {
		t.Fatal(err)
	}
	in[0].Commit[0] = '!' // the caller's buffer is its own again
	got := Read(t, s, "d", 1, 0)
	WantRecords(t, "d", got, 1, 2)
	got[1].Commit[0] = '!' // and so is what Read returned
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, 2)
	state := []byte("state")
	if err := s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: 2, State: state, Root: RootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	state[0] = '!'
	snap, _, err := s.Load(ctx, "d")
	if err != nil || string(snap.State) != "state" {
		t.Fatalf("load %q %v", snap.State, err)
	}
}

func testConcurrent(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{Retain: 50})
	ctx := context.Background()
	const docs, per = 16, 300
	for d := range docs {
		Create(t, s, fmt.Sprint("doc", d), 0)
	}
	var hubs, others sync.WaitGroup
	var abort atomic.Bool
	finished := make(chan struct{}) // closed once every hub has returned
	errs := make(chan error, 4*docs)
	for d := range docs {
		doc := fmt.Sprint("doc", d)
		notify := make(chan struct{}, 1) // the hub's fan-out, in miniature
		hubs.Add(1)
		go func() { // the hub: appends, snapshots now and then
			defer hubs.Done()
			for c := uint64(1); c <= per; c++ {
				if err := s.Append(ctx, doc, []store.Record{Rec(doc, c)}); err != nil {
					errs <- fmt.Errorf("append %s %d: %w", doc, c, err)
					return
				}
				select {
				case notify <- struct{}{}:
				default:
				}
				if c%100 == 0 {
					if err := s.PutSnapshot(ctx, doc, store.Snapshot{Cursor: c, State: []byte(fmt.Sprint(c)), Root: RootOf(doc), RootKind: 2}); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
		others.Add(1)
		go func() { // a subscriber: whatever it sees is consecutive and right
			defer others.Done()
			next := uint64(1)
			for next <= per && !abort.Load() {
				got, err := s.Read(ctx, doc, next, 0)
				if errors.Is(err, store.ErrCompacted) {
					snap, tail, err := s.Load(ctx, doc)
					if err != nil {
						errs <- err
						return
					}
					got, next = tail, snap.Cursor+1
				} else if err != nil {
					errs <- fmt.Errorf("read %s %d: %w", doc, next, err)
					return
				}
				for _, r := range got {
					if want := Rec(doc, next); r.Cursor != next || !bytes.Equal(r.Commit, want.Commit) {
						errs <- fmt.Errorf("%s: got cursor %d, want %d", doc, r.Cursor, next)
						return
					}
					next++
				}
				if len(got) == 0 {
					select {
					case <-notify:
					case <-finished:
					}
				}
			}
		}()
	}
	others.Add(1)
	go func() { // Documents beside it all
		defer others.Done()
		for range 50 {
			if _, err := s.Documents(ctx); err != nil {
				errs <- err
				return
			}
		}
	}()
	hubs.Wait()
	abort.Store(len(errs) > 0) // a hub gave up: its subscriber would wait forever
	close(finished)
	others.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for d := range docs {
		doc := fmt.Sprint("doc", d)
		if got := Info(t, s, doc); got.Last != per || got.Snapshot != per || got.Floor != per-50 {
			t.Fatalf("info %+v", got)
		}
		WantRecords(t, doc, Read(t, s, doc, per-49, 0), per-49, per)
	}
}

// testFailure: a failing medium refuses writes with Unavailable, keeps
// what it had, reports it in Healthy, and takes writes again once it is
// mended.
func testFailure(t *testing.T, su Suite) {
	health := make(chan error, 8)
	s, f := su.openFaulty(t, store.Options{HealthChanged: func(err error) { health <- err }})
	ctx := context.Background()
	Create(t, s, "d", 0)
	AppendRange(t, s, "d", 1, 3, 1)

	f.breakIt()
	err := s.Append(ctx, "d", Recs("d", 4, 1))
	WantReason(t, err, store.Unavailable)
	f.wantCause(t, err)
	if got := <-health; got == nil || f.cause != nil && !errors.Is(got, f.cause) {
		t.Fatalf("HealthChanged(%v) on failure, want the cause", got)
	}
	WantReason(t, s.Healthy(ctx), store.Unavailable)
	WantReason(t, s.Append(ctx, "d", Recs("d", 4, 1)), store.Unavailable)
	WantReason(t, s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: 3, Root: RootOf("d"), RootKind: 2}), store.Unavailable)
	WantReason(t, s.PutSnapshot(ctx, "new", store.Snapshot{Root: RootOf("new")}), store.Unavailable)
	f.wantReads(t, s, "d", 1, 3)

	f.mend()
	if err := s.Healthy(ctx); err != nil {
		t.Fatalf("healthy after recovery: %v", err)
	}
	if got := <-health; got != nil {
		t.Fatalf("HealthChanged(%v) on recovery, want nil", got)
	}
	// Nothing stored was lost.
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, 3)
	last := Info(t, s, "d").Last
	if last != 3 {
		t.Fatalf("last %d: a refused append landed", last)
	}
	AppendRange(t, s, "d", 4, 6, 2)
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, 6)
	select {
	case err := <-health:
		t.Fatalf("unexpected HealthChanged(%v)", err)
	default:
	}
}

func testContext(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	Create(t, s, "d", 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Append(ctx, "d", Recs("d", 1, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("append with a cancelled context: %v", err)
	}
	if err := s.PutSnapshot(ctx, "e", store.Snapshot{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("snapshot with a cancelled context: %v", err)
	}
	if _, err := s.Read(ctx, "d", 1, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("read with a cancelled context: %v", err)
	}
	if got := Info(t, s, "d").Last; got != 0 {
		t.Fatalf("last %d after a cancelled append", got)
	}
	if _, err := s.Info(context.Background(), "e"); store.ReasonOf(err) != store.UnknownDocument {
		t.Fatalf("cancelled snapshot created the document: %v", err)
	}
}

func testClosed(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{})
	ctx := context.Background()
	Create(t, s, "d", 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	WantReason(t, s.Append(ctx, "d", Recs("d", 1, 1)), store.Closed)
	WantReason(t, s.PutSnapshot(ctx, "d", store.Snapshot{Root: RootOf("d"), RootKind: 2}), store.Closed)
	_, _, err := s.Load(ctx, "d")
	WantReason(t, err, store.Closed)
	_, err = s.Read(ctx, "d", 1, 0)
	WantReason(t, err, store.Closed)
	_, err = s.Info(ctx, "d")
	WantReason(t, err, store.Closed)
	_, err = s.Documents(ctx)
	WantReason(t, err, store.Closed)
	WantReason(t, s.Healthy(ctx), store.Closed)
	WantReason(t, s.Delete(ctx, "d"), store.Closed)
}

// testDelete: a deleted document is gone from every read, its neighbours
// keep everything, and its name starts a new document.
func testDelete(t *testing.T, su Suite) {
	s := su.Open(t, store.Options{Retain: 3})
	ctx := context.Background()
	Create(t, s, "d", 0)
	Create(t, s, "e", 0)
	AppendRange(t, s, "d", 1, 10, 3)
	AppendRange(t, s, "e", 1, 4, 1)
	if err := s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: 8, State: []byte("S8"), Root: RootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	AppendRange(t, s, "d", 11, 12, 1)

	if err := s.Delete(ctx, "d"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, _, err := s.Load(ctx, "d")
	WantReason(t, err, store.UnknownDocument)
	_, err = s.Read(ctx, "d", 1, 0)
	WantReason(t, err, store.UnknownDocument)
	_, err = s.Info(ctx, "d")
	WantReason(t, err, store.UnknownDocument)
	WantReason(t, s.Append(ctx, "d", Recs("d", 13, 1)), store.UnknownDocument)
	WantReason(t, s.Delete(ctx, "d"), store.UnknownDocument)
	WantReason(t, s.Delete(ctx, "never"), store.UnknownDocument)
	WantReason(t, s.Delete(ctx, ""), store.BadName)
	docs, err := s.Documents(ctx)
	if err != nil || len(docs) != 1 || docs[0].Name != "e" || docs[0].Last != 4 {
		t.Fatalf("documents after delete: %+v %v", docs, err)
	}
	WantRecords(t, "e", Read(t, s, "e", 1, 0), 1, 4)

	// The name again: a new document with another root, from cursor 0,
	// holding nothing of the old one.
	other := RootOf("d2")
	if err := s.PutSnapshot(ctx, "d", store.Snapshot{Root: other, RootKind: 1}); err != nil {
		t.Fatalf("recreate: %v", err)
	}
	if got := Info(t, s, "d"); got != (store.DocInfo{Name: "d", Root: other, RootKind: 1}) {
		t.Fatalf("recreated info %+v", got)
	}
	snap, tail, err := s.Load(ctx, "d")
	if err != nil || snap.Cursor != 0 || snap.State != nil || len(tail) != 0 {
		t.Fatalf("recreated load %+v %d records %v", snap, len(tail), err)
	}
	AppendRange(t, s, "d", 1, 2, 1)
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, 2)
}

// testDeleteFailure: a delete the medium refuses leaves the document whole.
func testDeleteFailure(t *testing.T, su Suite) {
	s, f := su.openFaulty(t, store.Options{})
	ctx := context.Background()
	Create(t, s, "d", 0)
	AppendRange(t, s, "d", 1, 5, 2)
	f.breakIt()
	err := s.Delete(ctx, "d")
	WantReason(t, err, store.Unavailable)
	f.wantCause(t, err)
	f.wantReads(t, s, "d", 1, 5)
	f.mend()
	if err := s.Healthy(ctx); err != nil {
		t.Fatal(err)
	}
	WantRecords(t, "d", Read(t, s, "d", 1, 0), 1, 5)
	if err := s.Delete(ctx, "d"); err != nil {
		t.Fatalf("delete after recovery: %v", err)
	}
	_, err = s.Info(ctx, "d")
	WantReason(t, err, store.UnknownDocument)
}
