package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// runConformance is the suite every Store implementation must pass.
func runConformance(t *testing.T, open opener) {
	tests := []struct {
		name string
		fn   func(*testing.T, opener)
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
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open) })
	}
}

func testLifecycle(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	create(t, s, "d", 0)
	if got := info(t, s, "d"); got != (DocInfo{Name: "d", Root: rootOf("d"), RootKind: 2}) {
		t.Fatalf("new document info %+v", got)
	}
	if err := s.Append(ctx, "d", nil); err != nil {
		t.Fatalf("empty append: %v", err)
	}
	appendRange(t, s, "d", 1, 3, 3)
	appendRange(t, s, "d", 4, 4, 1)
	snap, tail, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if snap == nil || snap.Cursor != 0 || snap.State != nil || snap.Root != rootOf("d") || snap.RootKind != 2 {
		t.Fatalf("snapshot %+v", snap)
	}
	wantRecords(t, "d", tail, 1, 4)
	wantRecords(t, "d", read(t, s, "d", 0, 0), 1, 4)
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 4)
	wantRecords(t, "d", read(t, s, "d", 3, 1), 3, 3)
	if got := read(t, s, "d", 5, 0); len(got) != 0 {
		t.Fatalf("read at last+1 gave %d records", len(got))
	}
	_, err = s.Read(ctx, "d", 6, 0)
	wantReason(t, err, CursorAhead)
	if got := info(t, s, "d"); got.Last != 4 || got.Floor != 0 || got.Snapshot != 0 {
		t.Fatalf("info %+v", got)
	}
	if err := s.Healthy(ctx); err != nil {
		t.Fatalf("healthy: %v", err)
	}
}

func testUnknownDocument(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	wantReason(t, s.Append(ctx, "nope", recs("nope", 1, 1)), UnknownDocument)
	_, _, err := s.Load(ctx, "nope")
	wantReason(t, err, UnknownDocument)
	_, err = s.Read(ctx, "nope", 1, 0)
	wantReason(t, err, UnknownDocument)
	_, err = s.Info(ctx, "nope")
	wantReason(t, err, UnknownDocument)
	docs, err := s.Documents(ctx)
	if err != nil || len(docs) != 0 {
		t.Fatalf("documents %v, %v", docs, err)
	}
}

func testCursorRules(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	create(t, s, "d", 0)
	wantReason(t, s.Append(ctx, "d", recs("d", 2, 1)), CursorMismatch) // gap
	wantReason(t, s.Append(ctx, "d", []Record{rec("d", 0)}), CursorMismatch)
	appendRange(t, s, "d", 1, 2, 2)
	wantReason(t, s.Append(ctx, "d", recs("d", 2, 1)), CursorMismatch) // taken
	wantReason(t, s.Append(ctx, "d", recs("d", 1, 3)), CursorMismatch)
	wantReason(t, s.Append(ctx, "d", []Record{rec("d", 3), rec("d", 5)}), CursorMismatch)
	wantReason(t, s.Append(ctx, "d", []Record{rec("d", 3), rec("d", 3)}), CursorMismatch)
	if got := info(t, s, "d").Last; got != 2 {
		t.Fatalf("last %d after refused appends, want 2", got)
	}
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 2)
	appendRange(t, s, "d", 3, 3, 1)
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 3)
}

func testRetention(t *testing.T, open opener) {
	s := open(t, Options{Retain: 5})
	ctx := context.Background()
	create(t, s, "d", 0)
	appendRange(t, s, "d", 1, 20, 3)
	if err := s.PutSnapshot(ctx, "d", Snapshot{Cursor: 15, State: []byte("S15"), Root: rootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	if got := info(t, s, "d"); got.Snapshot != 15 || got.Floor != 10 || got.Last != 20 {
		t.Fatalf("info %+v, want snapshot 15 floor 10 last 20", got)
	}
	_, err := s.Read(ctx, "d", 10, 0)
	wantReason(t, err, Compacted)
	_, err = s.Read(ctx, "d", 0, 0)
	wantReason(t, err, Compacted)
	wantRecords(t, "d", read(t, s, "d", 11, 0), 11, 20)
	snap, tail, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Cursor != 15 || string(snap.State) != "S15" {
		t.Fatalf("snapshot %d %q", snap.Cursor, snap.State)
	}
	wantRecords(t, "d", tail, 16, 20)

	// The same cursor replaces the state; the floor only moves up.
	if err := s.PutSnapshot(ctx, "d", Snapshot{Cursor: 15, State: []byte("S15b"), Root: rootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	appendRange(t, s, "d", 21, 22, 2)
	if err := s.PutSnapshot(ctx, "d", Snapshot{Cursor: 22, State: []byte("S22"), Root: rootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	if got := info(t, s, "d"); got.Snapshot != 22 || got.Floor != 17 || got.Last != 22 {
		t.Fatalf("info %+v, want snapshot 22 floor 17 last 22", got)
	}
	_, err = s.Read(ctx, "d", 17, 0)
	wantReason(t, err, Compacted)
	wantRecords(t, "d", read(t, s, "d", 18, 0), 18, 22)
	snap, tail, err = s.Load(ctx, "d")
	if err != nil || snap.Cursor != 22 || string(snap.State) != "S22" || len(tail) != 0 {
		t.Fatalf("load: %+v %d records %v", snap, len(tail), err)
	}
	appendRange(t, s, "d", 23, 30, 1)
	wantRecords(t, "d", read(t, s, "d", 18, 0), 18, 30)
}

func testRetainAll(t *testing.T, open opener) {
	s := open(t, Options{Retain: -1})
	create(t, s, "d", 0)
	appendRange(t, s, "d", 1, 50, 7)
	if err := s.PutSnapshot(context.Background(), "d", Snapshot{Cursor: 50, Root: rootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	if got := info(t, s, "d"); got.Floor != 0 {
		t.Fatalf("floor %d with Retain -1", got.Floor)
	}
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 50)
}

func testCreateAtCursor(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	if err := s.PutSnapshot(ctx, "d", Snapshot{Cursor: 100, State: []byte("state"), Root: rootOf("d"), RootKind: 1}); err != nil {
		t.Fatal(err)
	}
	if got := info(t, s, "d"); got.Snapshot != 100 || got.Floor != 100 || got.Last != 100 || got.RootKind != 1 {
		t.Fatalf("info %+v", got)
	}
	wantReason(t, s.Append(ctx, "d", recs("d", 1, 1)), CursorMismatch)
	appendRange(t, s, "d", 101, 102, 1)
	_, err := s.Read(ctx, "d", 100, 0)
	wantReason(t, err, Compacted)
	wantRecords(t, "d", read(t, s, "d", 101, 0), 101, 102)
	snap, tail, err := s.Load(ctx, "d")
	if err != nil || snap.Cursor != 100 || string(snap.State) != "state" {
		t.Fatalf("load %+v %v", snap, err)
	}
	wantRecords(t, "d", tail, 101, 102)
}

func testSnapshotRules(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	create(t, s, "d", 0)
	appendRange(t, s, "d", 1, 10, 10)
	put := func(c uint64, root [12]byte, kind uint8) error {
		return s.PutSnapshot(ctx, "d", Snapshot{Cursor: c, Root: root, RootKind: kind})
	}
	if err := put(5, rootOf("d"), 2); err != nil {
		t.Fatal(err)
	}
	wantReason(t, put(4, rootOf("d"), 2), SnapshotCursor)
	wantReason(t, put(11, rootOf("d"), 2), SnapshotCursor)
	wantReason(t, put(6, rootOf("other"), 2), RootMismatch)
	wantReason(t, put(6, rootOf("d"), 0), RootMismatch)
	if got := info(t, s, "d"); got.Snapshot != 5 || got.Last != 10 || got.Root != rootOf("d") {
		t.Fatalf("info %+v after refused snapshots", got)
	}
	// An empty state reads back as nil, the empty document.
	if err := s.PutSnapshot(ctx, "d", Snapshot{Cursor: 10, State: []byte{}, Root: rootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	snap, _, err := s.Load(ctx, "d")
	if err != nil || snap.State != nil || snap.Cursor != 10 {
		t.Fatalf("load %+v %v", snap, err)
	}
}

func testNames(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	long := strings.Repeat("n", MaxNameBytes)
	create(t, s, long, 0)
	appendRange(t, s, long, 1, 2, 2)
	wantRecords(t, long, read(t, s, long, 1, 0), 1, 2)
	// Names are bytes: a prefix of another name is another document.
	create(t, s, "ab", 0)
	create(t, s, "a", 0)
	appendRange(t, s, "ab", 1, 3, 1)
	appendRange(t, s, "a", 1, 1, 1)
	wantRecords(t, "a", read(t, s, "a", 1, 0), 1, 1)
	wantRecords(t, "ab", read(t, s, "ab", 1, 0), 1, 3)
	for _, bad := range []string{"", long + "n"} {
		wantReason(t, s.Append(ctx, bad, recs(bad, 1, 1)), BadName)
		wantReason(t, s.PutSnapshot(ctx, bad, Snapshot{}), BadName)
		_, _, err := s.Load(ctx, bad)
		wantReason(t, err, BadName)
		_, err = s.Read(ctx, bad, 1, 0)
		wantReason(t, err, BadName)
		_, err = s.Info(ctx, bad)
		wantReason(t, err, BadName)
	}
}

func testLimits(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	create(t, s, "d", 0)
	big := Record{Cursor: 1, Commit: make([]byte, MaxRecordBytes+1)}
	wantReason(t, s.Append(ctx, "d", []Record{big}), TooLarge)
	wantReason(t, s.Append(ctx, "d", []Record{{Cursor: 1, Origin: strings.Repeat("o", MaxOriginBytes+1)}}), TooLarge)
	wantReason(t, s.Append(ctx, "d", recs("d", 1, MaxAppendRecords+1)), TooLarge)
	many := make([]Record, MaxAppendBytes/MaxRecordBytes+1)
	shared := make([]byte, MaxRecordBytes)
	for i := range many {
		many[i] = Record{Cursor: uint64(i + 1), Commit: shared}
	}
	wantReason(t, s.Append(ctx, "d", many), TooLarge)
	wantReason(t, s.PutSnapshot(ctx, "d", Snapshot{State: make([]byte, MaxSnapshotBytes+1), Root: rootOf("d"), RootKind: 2}), TooLarge)
	if got := info(t, s, "d").Last; got != 0 {
		t.Fatalf("last %d after refused appends", got)
	}
	// At the limits exactly, everything is taken.
	atMax := []Record{{Cursor: 1, Commit: shared, Origin: strings.Repeat("o", MaxOriginBytes)}}
	if err := s.Append(ctx, "d", atMax); err != nil {
		t.Fatal(err)
	}
	got := read(t, s, "d", 1, 0)
	if len(got) != 1 || len(got[0].Commit) != MaxRecordBytes || got[0].Origin != atMax[0].Origin {
		t.Fatalf("read back %d records", len(got))
	}
}

func testReadBounds(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	create(t, s, "d", 0)
	appendRange(t, s, "d", 1, MaxReadRecords+100, MaxAppendRecords)
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, MaxReadRecords)
	wantRecords(t, "d", read(t, s, "d", 1, MaxReadRecords+1), 1, MaxReadRecords)
	wantRecords(t, "d", read(t, s, "d", 1, -1), 1, MaxReadRecords)
	wantRecords(t, "d", read(t, s, "d", 7, 10), 7, 16)
	wantRecords(t, "d", read(t, s, "d", MaxReadRecords+1, 0), MaxReadRecords+1, MaxReadRecords+100)

	// Bytes: records of a quarter of MaxReadBytes come four at a time, and
	// a record larger than the bound still comes alone.
	create(t, s, "big", 0)
	quarter := make([]byte, MaxReadBytes/4)
	for c := uint64(1); c <= 6; c++ {
		if err := s.Append(ctx, "big", []Record{{Cursor: c, Commit: quarter}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, s, "big", 1, 0); len(got) != 4 || got[3].Cursor != 4 {
		t.Fatalf("read %d records of a quarter MaxReadBytes, want 4", len(got))
	}
	if got := read(t, s, "big", 5, 0); len(got) != 2 {
		t.Fatalf("read %d records, want 2", len(got))
	}
}

func testLoadBounds(t *testing.T, open opener) {
	s := open(t, Options{Retain: -1})
	ctx := context.Background()
	create(t, s, "d", 0)
	last := uint64(MaxLoadRecords + 10)
	appendRange(t, s, "d", 1, last, MaxAppendRecords)
	_, tail, err := s.Load(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	wantRecords(t, "d", tail, 1, MaxLoadRecords)
	wantRecords(t, "d", read(t, s, "d", MaxLoadRecords+1, 0), MaxLoadRecords+1, last)
}

func testDocuments(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	for i, doc := range []string{"b", "a", "c"} {
		create(t, s, doc, 0)
		appendRange(t, s, doc, 1, uint64(i+1), 1)
	}
	if err := s.PutSnapshot(ctx, "b", Snapshot{Cursor: 1, Root: rootOf("b"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	docs, err := s.Documents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []DocInfo{
		{Name: "a", Root: rootOf("a"), RootKind: 2, Last: 2},
		{Name: "b", Root: rootOf("b"), RootKind: 2, Snapshot: 1, Last: 1},
		{Name: "c", Root: rootOf("c"), RootKind: 2, Last: 3},
	}
	if fmt.Sprint(docs) != fmt.Sprint(want) {
		t.Fatalf("documents\n got %+v\nwant %+v", docs, want)
	}
}

func testCopies(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	create(t, s, "d", 0)
	in := recs("d", 1, 2)
	if err := s.Append(ctx, "d", in); err != nil {
		t.Fatal(err)
	}
	in[0].Commit[0] = '!' // the caller's buffer is its own again
	got := read(t, s, "d", 1, 0)
	wantRecords(t, "d", got, 1, 2)
	got[1].Commit[0] = '!' // and so is what Read returned
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 2)
	state := []byte("state")
	if err := s.PutSnapshot(ctx, "d", Snapshot{Cursor: 2, State: state, Root: rootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	state[0] = '!'
	snap, _, err := s.Load(ctx, "d")
	if err != nil || string(snap.State) != "state" {
		t.Fatalf("load %q %v", snap.State, err)
	}
}

func testConcurrent(t *testing.T, open opener) {
	s := open(t, Options{Retain: 50})
	ctx := context.Background()
	const docs, per = 16, 300
	for d := range docs {
		create(t, s, fmt.Sprint("doc", d), 0)
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
				if err := s.Append(ctx, doc, []Record{rec(doc, c)}); err != nil {
					errs <- fmt.Errorf("append %s %d: %w", doc, c, err)
					return
				}
				select {
				case notify <- struct{}{}:
				default:
				}
				if c%100 == 0 {
					if err := s.PutSnapshot(ctx, doc, Snapshot{Cursor: c, State: []byte(fmt.Sprint(c)), Root: rootOf(doc), RootKind: 2}); err != nil {
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
				if errors.Is(err, ErrCompacted) {
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
					if want := rec(doc, next); r.Cursor != next || !bytes.Equal(r.Commit, want.Commit) {
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
		if got := info(t, s, doc); got.Last != per || got.Snapshot != per || got.Floor != per-50 {
			t.Fatalf("info %+v", got)
		}
		wantRecords(t, doc, read(t, s, doc, per-49, 0), per-49, per)
	}
}

// testFailure: a failing disk refuses writes with Unavailable, keeps what it
// had, reports it in Healthy, and takes writes again once a probe succeeds.
func testFailure(t *testing.T, open opener) {
	errDisk := errors.New("injected: no space left on device")
	var failing atomic.Bool
	health := make(chan error, 8)
	s := open(t, Options{
		Fault: func() error {
			if failing.Load() {
				return errDisk
			}
			return nil
		},
		HealthChanged: func(err error) { health <- err },
	})
	ctx := context.Background()
	create(t, s, "d", 0)
	appendRange(t, s, "d", 1, 3, 1)

	failing.Store(true)
	err := s.Append(ctx, "d", recs("d", 4, 1))
	wantReason(t, err, Unavailable)
	if !errors.Is(err, errDisk) {
		t.Fatalf("the cause is not kept: %v", err)
	}
	if got := <-health; !errors.Is(got, errDisk) {
		t.Fatalf("HealthChanged(%v), want the disk error", got)
	}
	wantReason(t, s.Healthy(ctx), Unavailable)
	wantReason(t, s.Append(ctx, "d", recs("d", 4, 1)), Unavailable)
	wantReason(t, s.PutSnapshot(ctx, "d", Snapshot{Cursor: 3, Root: rootOf("d"), RootKind: 2}), Unavailable)
	wantReason(t, s.PutSnapshot(ctx, "new", Snapshot{Root: rootOf("new")}), Unavailable)
	// Reads go on, and nothing stored was lost.
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 3)

	failing.Store(false)
	if err := s.Healthy(ctx); err != nil {
		t.Fatalf("healthy after recovery: %v", err)
	}
	if got := <-health; got != nil {
		t.Fatalf("HealthChanged(%v) on recovery, want nil", got)
	}
	last := info(t, s, "d").Last
	if last != 3 {
		t.Fatalf("last %d: a refused append landed", last)
	}
	appendRange(t, s, "d", 4, 6, 2)
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 6)
	select {
	case err := <-health:
		t.Fatalf("unexpected HealthChanged(%v)", err)
	default:
	}
}

func testContext(t *testing.T, open opener) {
	s := open(t, Options{})
	create(t, s, "d", 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Append(ctx, "d", recs("d", 1, 1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("append with a cancelled context: %v", err)
	}
	if err := s.PutSnapshot(ctx, "e", Snapshot{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("snapshot with a cancelled context: %v", err)
	}
	if _, err := s.Read(ctx, "d", 1, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("read with a cancelled context: %v", err)
	}
	if got := info(t, s, "d").Last; got != 0 {
		t.Fatalf("last %d after a cancelled append", got)
	}
	if _, err := s.Info(context.Background(), "e"); ReasonOf(err) != UnknownDocument {
		t.Fatalf("cancelled snapshot created the document: %v", err)
	}
}

func testClosed(t *testing.T, open opener) {
	s := open(t, Options{})
	ctx := context.Background()
	create(t, s, "d", 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	wantReason(t, s.Append(ctx, "d", recs("d", 1, 1)), Closed)
	wantReason(t, s.PutSnapshot(ctx, "d", Snapshot{Root: rootOf("d"), RootKind: 2}), Closed)
	_, _, err := s.Load(ctx, "d")
	wantReason(t, err, Closed)
	_, err = s.Read(ctx, "d", 1, 0)
	wantReason(t, err, Closed)
	_, err = s.Info(ctx, "d")
	wantReason(t, err, Closed)
	_, err = s.Documents(ctx)
	wantReason(t, err, Closed)
	wantReason(t, s.Healthy(ctx), Closed)
	wantReason(t, s.Delete(ctx, "d"), Closed)
}

// testDelete: a deleted document is gone from every read, its neighbours
// keep everything, and its name starts a new document.
func testDelete(t *testing.T, open opener) {
	s := open(t, Options{Retain: 3})
	ctx := context.Background()
	create(t, s, "d", 0)
	create(t, s, "e", 0)
	appendRange(t, s, "d", 1, 10, 3)
	appendRange(t, s, "e", 1, 4, 1)
	if err := s.PutSnapshot(ctx, "d", Snapshot{Cursor: 8, State: []byte("S8"), Root: rootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	appendRange(t, s, "d", 11, 12, 1)

	if err := s.Delete(ctx, "d"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, _, err := s.Load(ctx, "d")
	wantReason(t, err, UnknownDocument)
	_, err = s.Read(ctx, "d", 1, 0)
	wantReason(t, err, UnknownDocument)
	_, err = s.Info(ctx, "d")
	wantReason(t, err, UnknownDocument)
	wantReason(t, s.Append(ctx, "d", recs("d", 13, 1)), UnknownDocument)
	wantReason(t, s.Delete(ctx, "d"), UnknownDocument)
	wantReason(t, s.Delete(ctx, "never"), UnknownDocument)
	wantReason(t, s.Delete(ctx, ""), BadName)
	docs, err := s.Documents(ctx)
	if err != nil || len(docs) != 1 || docs[0].Name != "e" || docs[0].Last != 4 {
		t.Fatalf("documents after delete: %+v %v", docs, err)
	}
	wantRecords(t, "e", read(t, s, "e", 1, 0), 1, 4)

	// The name again: a new document with another root, from cursor 0,
	// holding nothing of the old one.
	other := rootOf("d2")
	if err := s.PutSnapshot(ctx, "d", Snapshot{Root: other, RootKind: 1}); err != nil {
		t.Fatalf("recreate: %v", err)
	}
	if got := info(t, s, "d"); got != (DocInfo{Name: "d", Root: other, RootKind: 1}) {
		t.Fatalf("recreated info %+v", got)
	}
	snap, tail, err := s.Load(ctx, "d")
	if err != nil || snap.Cursor != 0 || snap.State != nil || len(tail) != 0 {
		t.Fatalf("recreated load %+v %d records %v", snap, len(tail), err)
	}
	appendRange(t, s, "d", 1, 2, 1)
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 2)
}

// testDeleteFailure: a delete the disk refuses leaves the document whole.
func testDeleteFailure(t *testing.T, open opener) {
	var failing atomic.Bool
	errDisk := errors.New("injected: I/O error")
	s := open(t, Options{Fault: func() error {
		if failing.Load() {
			return errDisk
		}
		return nil
	}})
	ctx := context.Background()
	create(t, s, "d", 0)
	appendRange(t, s, "d", 1, 5, 2)
	failing.Store(true)
	wantReason(t, s.Delete(ctx, "d"), Unavailable)
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 5)
	failing.Store(false)
	if err := s.Healthy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "d"); err != nil {
		t.Fatalf("delete after recovery: %v", err)
	}
	_, err := s.Info(ctx, "d")
	wantReason(t, err, UnknownDocument)
}
