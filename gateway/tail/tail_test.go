package tail

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func entry(c uint64, n int) Entry[string] {
	return Entry[string]{Cursor: c, Bytes: make([]byte, n), Item: fmt.Sprint("c", c)}
}

func cursors(es []Entry[string]) []uint64 {
	var out []uint64
	for _, e := range es {
		out = append(out, e.Cursor)
		if e.Item != fmt.Sprint("c", e.Cursor) {
			panic("entry " + e.Item + " at the wrong cursor")
		}
	}
	return out
}

func readAll(t *testing.T, tl *Tail[string], after uint64) []uint64 {
	t.Helper()
	es, err := tl.Read(after, nil, 0)
	if err != nil {
		t.Fatalf("read after %d: %v", after, err)
	}
	return cursors(es)
}

func TestWrapKeepsTheNewest(t *testing.T) {
	tl := New[string](Config{MaxCommits: 5})
	for c := uint64(1); c <= 23; c++ {
		tl.Append(entry(c, 1))
	}
	if got := fmt.Sprint(readAll(t, tl, 18)); got != "[19 20 21 22 23]" {
		t.Fatalf("after 18: %s", got)
	}
	if got := fmt.Sprint(readAll(t, tl, 21)); got != "[22 23]" {
		t.Fatalf("after 21: %s", got)
	}
	if got := readAll(t, tl, 23); len(got) != 0 {
		t.Fatalf("at the head: %v", got)
	}
	if _, err := tl.Read(17, nil, 0); !errors.Is(err, ErrFellOff) {
		t.Fatalf("after 17 (18 is gone): %v", err)
	}
	if _, err := tl.Lag(17); !errors.Is(err, ErrFellOff) {
		t.Fatalf("lag after 17: %v", err)
	}
}

// Trim lets go of what every reader has read: a reader at or past the
// trim reads on, one before it has fallen off, the bytes held and the
// lag count only what is left, and appends go on after a trim of all.
func TestTrimLetsGoOfWhatIsRead(t *testing.T) {
	tl := New[string](Config{MaxCommits: 100, MaxBytes: 1000})
	for c := uint64(1); c <= 10; c++ {
		tl.Append(entry(c, 10))
	}
	tl.Trim(6)
	if got := fmt.Sprint(readAll(t, tl, 6)); got != "[7 8 9 10]" {
		t.Fatalf("after 6: %s", got)
	}
	if _, err := tl.Read(5, nil, 0); !errors.Is(err, ErrFellOff) {
		t.Fatalf("after 5 (6 is gone): %v", err)
	}
	if lag, err := tl.Lag(6); err != nil || lag != 40 {
		t.Fatalf("lag after 6: %d %v, want 40", lag, err)
	}
	tl.Trim(3) // already gone: nothing changes
	if got := fmt.Sprint(readAll(t, tl, 6)); got != "[7 8 9 10]" {
		t.Fatalf("after a trim behind the oldest: %s", got)
	}
	tl.Trim(99) // past the head: all of it, and the head stays
	if tl.Head() != 10 || len(readAll(t, tl, 10)) != 0 {
		t.Fatalf("head %d after trimming all", tl.Head())
	}
	if _, err := tl.Read(9, nil, 0); !errors.Is(err, ErrFellOff) {
		t.Fatalf("after 9 with everything trimmed: %v", err)
	}
	// The bytes held went with the entries: the bound's whole 1,000 fits.
	for c := uint64(11); c <= 30; c++ {
		tl.Append(entry(c, 50))
	}
	if got := readAll(t, tl, 10); len(got) != 20 || got[0] != 11 {
		t.Fatalf("after 10, once 1,000 bytes were appended to a trimmed tail: %v", got)
	}
}

func TestByteBoundDropsOldestButKeepsOne(t *testing.T) {
	tl := New[string](Config{MaxCommits: 100, MaxBytes: 100})
	for c := uint64(1); c <= 10; c++ {
		tl.Append(entry(c, 30))
	}
	// 3 commits of 30 bytes fit in 100.
	if got := fmt.Sprint(readAll(t, tl, 7)); got != "[8 9 10]" {
		t.Fatalf("after 7: %s", got)
	}
	if _, err := tl.Read(6, nil, 0); !errors.Is(err, ErrFellOff) {
		t.Fatalf("after 6: %v", err)
	}
	// A commit larger than the bound is still held, alone.
	tl.Append(entry(11, 500))
	if got := fmt.Sprint(readAll(t, tl, 10)); got != "[11]" {
		t.Fatalf("after 10: %s", got)
	}
	if _, err := tl.Read(9, nil, 0); !errors.Is(err, ErrFellOff) {
		t.Fatalf("after 9: %v", err)
	}
}

func TestReadersAtDifferentCursors(t *testing.T) {
	tl := New[string](Config{MaxCommits: 64})
	tl.Reset(100) // a document loaded at cursor 100
	for c := uint64(101); c <= 140; c++ {
		tl.Append(entry(c, 10))
	}
	for _, after := range []uint64{100, 101, 120, 139} {
		got := readAll(t, tl, after)
		if len(got) != int(140-after) || got[0] != after+1 || got[len(got)-1] != 140 {
			t.Fatalf("after %d: %v", after, got)
		}
		lag, err := tl.Lag(after)
		if err != nil || lag != 10*int(140-after) {
			t.Fatalf("lag after %d: %d, %v", after, lag, err)
		}
	}
	if _, err := tl.Read(99, nil, 0); !errors.Is(err, ErrFellOff) {
		t.Fatalf("after 99, before the load: %v", err)
	}
	// maxBytes bounds a read, but never below one commit.
	es, _ := tl.Read(100, nil, 35)
	if got := fmt.Sprint(cursors(es)); got != "[101 102 103]" {
		t.Fatalf("35 bytes after 100: %s", got)
	}
	es, _ = tl.Read(100, nil, 1)
	if got := fmt.Sprint(cursors(es)); got != "[101]" {
		t.Fatalf("1 byte after 100: %s", got)
	}
}

func TestGapRestartsTheTail(t *testing.T) {
	tl := New[string](Config{})
	tl.Append(entry(1, 1), entry(2, 1))
	tl.Append(entry(7, 1)) // a restart at 6
	if got := fmt.Sprint(readAll(t, tl, 6)); got != "[7]" {
		t.Fatalf("after 6: %s", got)
	}
	if _, err := tl.Read(2, nil, 0); !errors.Is(err, ErrFellOff) {
		t.Fatalf("after 2, before the gap: %v", err)
	}
	tl.Reset(3)
	if tl.Head() != 3 || len(readAll(t, tl, 3)) != 0 {
		t.Fatal("reset did not empty the tail at 3")
	}
	if _, err := tl.Read(2, nil, 0); !errors.Is(err, ErrFellOff) {
		t.Fatalf("after 2, before the reset's cursor: %v", err)
	}
	if _, err := tl.Lag(2); !errors.Is(err, ErrFellOff) {
		t.Fatalf("lag after 2, before the reset's cursor: %v", err)
	}
	tl.Append(entry(4, 1))
	if got := fmt.Sprint(readAll(t, tl, 3)); got != "[4]" {
		t.Fatalf("after 3, once appended to: %s", got)
	}
}

// Readers racing one writer see every cursor once, in order, or fall off.
func TestConcurrentReadersSeeEveryCommitInOrder(t *testing.T) {
	// Bound by count (the ring wraps), and by bytes (entries are let go
	// before the ring is full).
	for _, cfg := range []Config{{MaxCommits: 256}, {MaxCommits: 256, MaxBytes: 8 * 100}} {
		t.Run(fmt.Sprintf("%+v", cfg), func(t *testing.T) { concurrentReaders(t, cfg) })
	}
}

func concurrentReaders(t *testing.T, cfg Config) {
	const n = 20000
	tl := New[string](cfg)
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var after uint64
			var buf []Entry[string]
			for after < n {
				es, err := tl.Read(after, buf[:0], 64*(r+1))
				if errors.Is(err, ErrFellOff) {
					after = tl.Head() // start again, as a resync would
					continue
				}
				for _, e := range es {
					if e.Cursor != after+1 || e.Item != fmt.Sprint("c", e.Cursor) {
						t.Errorf("reader %d: %d after %d (%s)", r, e.Cursor, after, e.Item)
						return
					}
					after = e.Cursor
				}
				buf = es
			}
		}()
	}
	for c := uint64(1); c <= n; c++ {
		tl.Append(entry(c, 8))
	}
	wg.Wait()
}

// BenchmarkFanout is the gateway's use: one writer appends a commit and
// wakes every reader that is not already awake (a flag, as the hub does);
// each awake reader takes everything after its cursor. ns/op is per
// commit, all readers' reads included; ns/delivery divides by readers.
//
//	go test -run '^$' -bench Fanout -benchtime 20000x ./gateway/tail/
func BenchmarkFanout(b *testing.B) {
	for _, readers := range []int{1, 16, 256, 1024} {
		b.Run(fmt.Sprintf("readers=%d", readers), func(b *testing.B) {
			tl := New[string](Config{})
			type reader struct {
				wake  chan struct{}
				dirty atomic.Bool
				after uint64
			}
			rs := make([]*reader, readers)
			var wg sync.WaitGroup
			var delivered atomic.Int64
			for i := range rs {
				r := &reader{wake: make(chan struct{}, 1)}
				rs[i] = r
				wg.Add(1)
				go func() {
					defer wg.Done()
					var buf []Entry[string]
					for range r.wake {
						r.dirty.Store(false)
						es, err := tl.Read(r.after, buf[:0], 0)
						if err != nil {
							r.after = tl.Head() // fell off: counted as not delivered
							continue
						}
						if len(es) > 0 {
							r.after = es[len(es)-1].Cursor
							delivered.Add(int64(len(es)))
						}
						buf = es
					}
				}()
			}
			e := Entry[string]{Bytes: make([]byte, 64)}
			b.ResetTimer()
			for i := range b.N {
				e.Cursor = uint64(i + 1)
				tl.Append(e)
				for _, r := range rs {
					if r.dirty.CompareAndSwap(false, true) {
						r.wake <- struct{}{}
					}
				}
			}
			for _, r := range rs {
				close(r.wake)
			}
			wg.Wait()
			b.StopTimer()
			if delivered.Load() > int64(b.N*readers) {
				b.Fatalf("%d deliveries of %d commits to %d readers", delivered.Load(), b.N, readers)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*readers), "ns/delivery")
			b.ReportMetric(float64(delivered.Load())/float64(b.N*readers), "delivered")
		})
	}
}
