package jsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/store/storetest"
	"github.com/weftgate/weftgate/internal/natstest"
)

// commitOf is writer w's commit at cursor c: whose record landed is
// visible in the log.
func commitOf(w int, c uint64) []byte { return fmt.Appendf(nil, "w%d@%d", w, c) }

// appendRace runs writers, one per store, each appending batches of 1..3
// records at what it believes is the end until the log reaches n, and
// returns which writer each cursor was acknowledged to. A writer that
// loses a race reads Info and tries again, as a hub catches up. retry
// says whether an error other than cursor-mismatch is retried (a server
// lost) instead of failing the test.
func appendRace(t *testing.T, stores []*Store, doc string, n uint64, retry func(error) bool) map[uint64]int {
	t.Helper()
	var mu sync.Mutex
	won := map[uint64]int{}
	conflicts := 0
	var wg sync.WaitGroup
	errs := make(chan error, len(stores))
	for w, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for round := 0; ; round++ {
				i, err := s.Info(ctx, doc)
				if err != nil {
					if retry(err) {
						continue
					}
					errs <- err
					return
				}
				if i.Last >= n {
					return
				}
				var recs []store.Record
				for c := i.Last + 1; c <= min(n, i.Last+1+uint64(round%3)); c++ {
					recs = append(recs, store.Record{Cursor: c, Commit: commitOf(w, c), Origin: fmt.Sprint("w", w)})
				}
				err = s.Append(ctx, doc, recs)
				switch {
				case err == nil:
					mu.Lock()
					for _, r := range recs {
						if prev, dup := won[r.Cursor]; dup {
							errs <- fmt.Errorf("cursor %d acknowledged to writers %d and %d", r.Cursor, prev, w)
						}
						won[r.Cursor] = w
					}
					mu.Unlock()
				case errors.Is(err, store.ErrCursorMismatch):
					mu.Lock()
					conflicts++
					mu.Unlock()
				case retry(err):
				default:
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d cursors, %d lost races", n, conflicts)
	return won
}

// wantLog checks doc's log is exactly 1..n, each record the commit of the
// writer it was acknowledged to (when known).
func wantLog(t *testing.T, s *Store, doc string, n uint64, won map[uint64]int) {
	t.Helper()
	var got []store.Record
	for next := uint64(1); next <= n; {
		recs := storetest.Read(t, s, doc, next, 0)
		if len(recs) == 0 {
			t.Fatalf("log ends at %d, want %d", next-1, n)
		}
		got = append(got, recs...)
		next += uint64(len(recs))
	}
	for i, r := range got {
		c := uint64(i + 1)
		if r.Cursor != c {
			t.Fatalf("record %d has cursor %d", i, r.Cursor)
		}
		w, ok := won[c]
		if !ok {
			continue // landed, but its writer heard no acknowledgement
		}
		if !bytes.Equal(r.Commit, commitOf(w, c)) || r.Origin != fmt.Sprint("w", w) {
			t.Fatalf("cursor %d holds %q from %s, acknowledged to writer %d", c, r.Commit, r.Origin, w)
		}
	}
	if last := storetest.Info(t, s, doc).Last; last != n {
		t.Fatalf("last %d, want %d", last, n)
	}
}

// TestAppendRace: two stores on two connections race to append the same
// cursors; each cursor is acknowledged to exactly one of them, and the log
// has no gap and no duplicate.
func TestAppendRace(t *testing.T) {
	ns := natstest.Start(t)
	a, _ := openOn(t, ns, Options{})
	b, _ := openOn(t, ns, Options{})
	storetest.Create(t, a, "hot", 0)
	const n = 600
	won := appendRace(t, []*Store{a, b}, "hot", n, func(error) bool { return false })
	if len(won) != n {
		t.Fatalf("%d cursors acknowledged, want %d", len(won), n)
	}
	wantLog(t, b, "hot", n, won)
	wantLog(t, a, "hot", n, won)
}

// An append of several messages (its records span two blocks) is one
// round trip to the server, not two: the batch's first message is not
// acknowledged on its own (a hot document written from several nodes
// spends its time in appends, won and lost). One that loses its cursor on
// the server still writes nothing.
func TestAnAppendIsOneRoundTrip(t *testing.T) {
	ns := natstest.Start(t)
	s, c := openOn(t, ns, Options{})
	other, _ := openOn(t, ns, Options{})
	ctx := context.Background()
	storetest.Create(t, s, "d", 0)
	rec := func(w int, cur uint64) store.Record { return store.Record{Cursor: cur, Commit: commitOf(w, cur)} }
	appendOK := func(s *Store, recs ...store.Record) {
		t.Helper()
		if err := s.Append(ctx, "d", recs); err != nil {
			t.Fatal(err)
		}
	}
	const end = blockRecords - 2
	for cur := uint64(1); cur < end-1; cur++ {
		appendOK(s, rec(0, cur))
	}
	appendOK(other, rec(1, end-1)) // other knows the end
	appendOK(s, rec(0, end))       // s reads the end, and knows it
	in := c.Stats().InMsgs
	appendOK(s, rec(0, end+1), rec(0, end+2), rec(0, end+3), rec(0, end+4), rec(0, end+5))
	if got := c.Stats().InMsgs - in; got != 1 {
		t.Fatalf("an append across two blocks heard %d replies, want 1", got)
	}
	if err := other.Append(ctx, "d", []store.Record{rec(1, end), rec(1, end+1)}); !errors.Is(err, store.ErrCursorMismatch) {
		t.Fatalf("an append after a stale end got %v, want cursor-mismatch", err)
	}
	got, err := s.Read(ctx, "d", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != end+5 {
		t.Fatalf("the log holds %d records, want %d", len(got), end+5)
	}
	for i, r := range got {
		if r.Cursor != uint64(i+1) {
			t.Fatalf("record %d is at cursor %d", i, r.Cursor)
		}
		w := 0
		if r.Cursor == end-1 {
			w = 1
		}
		if !bytes.Equal(r.Commit, commitOf(w, r.Cursor)) {
			t.Fatalf("cursor %d holds %q", r.Cursor, r.Commit)
		}
	}
}
