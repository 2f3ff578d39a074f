package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

func mustOpen(t *testing.T, dir string, o Options) *Bolt {
	t.Helper()
	s, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestBoltReopen: what was acknowledged is there after a close, and after a
// stop that left records only in the wal.
func TestBoltReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, dir, Options{})
	create(t, s, "a", 0)
	create(t, s, "b", 0)
	appendRange(t, s, "a", 1, 100, 7)
	appendRange(t, s, "b", 1, 5, 1)
	if err := s.PutSnapshot(ctx, "a", Snapshot{Cursor: 50, State: []byte("S50"), Root: rootOf("a"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	if n := pendingRecords(s); n != 105 {
		t.Fatalf("%d records in the wal, want 105", n)
	}
	if err := closeKeepingWAL(s); err != nil {
		t.Fatal(err)
	}

	check := func(s *Bolt, lastA uint64) {
		t.Helper()
		if got := info(t, s, "a"); got.Last != lastA || got.Snapshot != 50 || got.Floor != 0 {
			t.Fatalf("a: %+v", got)
		}
		wantRecords(t, "a", read(t, s, "a", 1, 0), 1, lastA)
		wantRecords(t, "b", read(t, s, "b", 1, 0), 1, 5)
		snap, tail, err := s.Load(ctx, "a")
		if err != nil || snap.Cursor != 50 || string(snap.State) != "S50" {
			t.Fatalf("load a: %+v %v", snap, err)
		}
		wantRecords(t, "a", tail, 51, lastA)
		docs, err := s.Documents(ctx)
		if err != nil || len(docs) != 2 || docs[0].Last != lastA || docs[1].Last != 5 {
			t.Fatalf("documents %+v %v", docs, err)
		}
	}
	s = mustOpen(t, dir, Options{})
	if n := pendingRecords(s); n != 0 {
		t.Fatalf("%d records in the wal after open, want them folded", n)
	}
	check(s, 100)
	appendRange(t, s, "a", 101, 101, 1)
	wantReason(t, s.Append(ctx, "a", recs("a", 101, 1)), CursorMismatch)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	check(mustOpen(t, dir, Options{}), 101)
}

// TestBoltDiskFull fills a capped file: the append that does not fit is
// refused as Unavailable, nothing before it is lost, and a reopen with room
// carries on.
func TestBoltDiskFull(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, dir, Options{MaxFileBytes: 1 << 20, CheckpointRecords: 1})
	create(t, s, "d", 0)
	big := bytes.Repeat([]byte{'z'}, 4096)
	var err error
	acked := uint64(0)
	for c := uint64(1); c <= 1000; c++ {
		if err = s.Append(ctx, "d", []Record{{Cursor: c, Commit: big}}); err != nil {
			break
		}
		acked = c
	}
	wantReason(t, err, Unavailable)
	if !errors.Is(err, berrors.ErrMaxSizeReached) {
		t.Fatalf("cause %v, want bbolt's size limit", err)
	}
	if acked < 10 {
		t.Fatalf("only %d appends fit in 1 MiB", acked)
	}
	// The probe is a small write and may fit where the append did not;
	// either way the append stays refused.
	for range 3 {
		s.Healthy(ctx)
		wantReason(t, s.Append(ctx, "d", []Record{{Cursor: acked + 1, Commit: big}}), Unavailable)
	}
	check := func(s Store) {
		got := read(t, s, "d", 1, 0)
		if uint64(len(got)) != acked {
			t.Fatalf("read %d records, want the %d acknowledged", len(got), acked)
		}
		for i, r := range got {
			if r.Cursor != uint64(i+1) || !bytes.Equal(r.Commit, big) {
				t.Fatalf("record %d is cursor %d", i, r.Cursor)
			}
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir, Options{})
	check(s)
	if err := s.Append(ctx, "d", []Record{{Cursor: acked + 1, Commit: big}}); err != nil {
		t.Fatalf("append after reopening with room: %v", err)
	}
}

// holder is a Fault hook that, once armed, holds the writer inside its next
// commit until released, and counts commits.
type holder struct {
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
	commits atomic.Int64
}

func newHolder() *holder {
	return &holder{entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *holder) fault() error {
	h.commits.Add(1)
	if h.armed.CompareAndSwap(true, false) {
		close(h.entered)
		<-h.release
	}
	return nil
}

func TestBoltGroupCommit(t *testing.T) {
	h := newHolder()
	s := mustOpen(t, t.TempDir(), Options{Fault: h.fault})
	ctx := context.Background()
	const n = 10
	for i := range n + 1 {
		create(t, s, fmt.Sprint("d", i), 0)
	}
	h.armed.Store(true)
	errs := make(chan error, n+1)
	go func() { errs <- s.Append(ctx, "d0", recs("d0", 1, 1)) }()
	<-h.entered
	base := h.commits.Load()
	for i := 1; i <= n; i++ {
		doc := fmt.Sprint("d", i)
		go func() { errs <- s.Append(ctx, doc, recs(doc, 1, 1)) }()
	}
	waitQueued(s, n)
	close(h.release)
	for range n + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := h.commits.Load() - base; got != 1 {
		t.Fatalf("%d queued appends took %d commits, want 1", n, got)
	}
	for i := range n + 1 {
		doc := fmt.Sprint("d", i)
		wantRecords(t, doc, read(t, s, doc, 1, 0), 1, 1)
	}
}

// TestBoltBackpressure: with the queue full, Append waits, and gives up
// with its context having written nothing.
func TestBoltBackpressure(t *testing.T) {
	h := newHolder()
	s := mustOpen(t, t.TempDir(), Options{QueueLength: 1, Fault: h.fault})
	ctx := context.Background()
	for _, doc := range []string{"a", "b", "c"} {
		create(t, s, doc, 0)
	}
	h.armed.Store(true)
	errs := make(chan error, 2)
	go func() { errs <- s.Append(ctx, "a", recs("a", 1, 1)) }()
	<-h.entered
	go func() { errs <- s.Append(ctx, "b", recs("b", 1, 1)) }()
	waitQueued(s, 1)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := s.Append(short, "c", recs("c", 1, 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("append into a full queue: %v, want the context's deadline", err)
	}
	close(h.release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if a, b, c := info(t, s, "a").Last, info(t, s, "b").Last, info(t, s, "c").Last; a != 1 || b != 1 || c != 0 {
		t.Fatalf("last cursors a %d b %d c %d, want 1 1 0", a, b, c)
	}
}

// TestBoltCloseDrains: Close answers and keeps every queued append.
func TestBoltCloseDrains(t *testing.T) {
	dir := t.TempDir()
	h := newHolder()
	s, err := Open(dir, Options{Fault: h.fault})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const n = 5
	for i := range n + 1 {
		create(t, s, fmt.Sprint("d", i), 0)
	}
	h.armed.Store(true)
	errs := make(chan error, n+1)
	go func() { errs <- s.Append(ctx, "d0", recs("d0", 1, 1)) }()
	<-h.entered
	for i := 1; i <= n; i++ {
		doc := fmt.Sprint("d", i)
		go func() { errs <- s.Append(ctx, doc, recs(doc, 1, 2)) }()
	}
	waitQueued(s, n)
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	close(h.release)
	for range n + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	wantReason(t, s.Append(ctx, "d0", recs("d0", 2, 1)), Closed)
	s2 := mustOpen(t, dir, Options{})
	wantRecords(t, "d0", read(t, s2, "d0", 1, 0), 1, 1)
	for i := 1; i <= n; i++ {
		doc := fmt.Sprint("d", i)
		wantRecords(t, doc, read(t, s2, doc, 1, 0), 1, 2)
	}
}

// TestBoltProbeRecovers: a failed store takes writes again on its own once
// its periodic probe succeeds, without anyone calling Healthy.
func TestBoltProbeRecovers(t *testing.T) {
	var failing atomic.Bool
	health := make(chan error, 4)
	s := mustOpen(t, t.TempDir(), Options{
		ProbeInterval: time.Millisecond,
		Fault: func() error {
			if failing.Load() {
				return errors.New("injected I/O error")
			}
			return nil
		},
		HealthChanged: func(err error) { health <- err },
	})
	ctx := context.Background()
	create(t, s, "d", 0)
	appendRange(t, s, "d", 1, 2, 1)
	failing.Store(true)
	wantReason(t, s.Append(ctx, "d", recs("d", 3, 1)), Unavailable)
	if err := <-health; err == nil {
		t.Fatal("HealthChanged(nil) on failure")
	}
	failing.Store(false)
	if err := <-health; err != nil {
		t.Fatalf("HealthChanged(%v), want nil after the probe", err)
	}
	appendRange(t, s, "d", 3, 4, 1)
	wantRecords(t, "d", read(t, s, "d", 1, 0), 1, 4)
}

func TestBoltLocked(t *testing.T) {
	dir := t.TempDir()
	mustOpen(t, dir, Options{})
	_, err := Open(dir, Options{})
	wantReason(t, err, Unavailable)
	if !errors.Is(err, berrors.ErrTimeout) {
		t.Fatalf("cause %v, want the lock timeout", err)
	}
}

// TestBoltBadFiles: a file of an unknown format, or a wal that does not
// decode, is refused at Open as Corrupt; nothing panics.
func TestBoltBadFiles(t *testing.T) {
	cases := map[string]func(tx *bolt.Tx) error{
		"format": func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(keyFormat, []byte{99})
		},
		"wal": func(tx *bolt.Tx) error {
			return tx.Bucket(bucketWAL).Put(encodeU64(1), []byte{formatVersion, 5, 'a'})
		},
		"wal-orphan": func(tx *bolt.Tx) error {
			return tx.Bucket(bucketWAL).Put(encodeU64(1), appendWALRecord([]byte{formatVersion}, "ghost", rec("ghost", 1)))
		},
		"meta": func(tx *bolt.Tx) error {
			if err := tx.Bucket(bucketDocs).Put([]byte("d"), []byte{formatVersion, 1, 2}); err != nil {
				return err
			}
			return tx.Bucket(bucketWAL).Put(encodeU64(1), appendWALRecord([]byte{formatVersion}, "d", rec("d", 1)))
		},
	}
	for name, spoil := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(spoil); err != nil {
				t.Fatal(err)
			}
			db.Close()
			_, err = Open(dir, Options{})
			wantReason(t, err, Corrupt)
		})
	}
}

// TestBoltChunks reads across the chunk boundaries a checkpoint makes, by
// record count and by bytes, and after a trim that keeps a straddling chunk.
func TestBoltChunks(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t, t.TempDir(), Options{CheckpointRecords: 1, Retain: 100})
	create(t, s, "d", 0)
	const n = 3*chunkRecords + 17
	appendRange(t, s, "d", 1, n, n)
	if got := chunkCount(t, s, "d"); got != 4 {
		t.Fatalf("%d records folded into %d chunks, want 4", n, got)
	}
	for _, from := range []uint64{1, chunkRecords - 1, chunkRecords, chunkRecords + 1, 2 * chunkRecords, n - 1, n} {
		to := min(from+2, n)
		wantRecords(t, "d", read(t, s, "d", from, 3), from, to)
	}
	wantRecords(t, "d", read(t, s, "d", chunkRecords-10, chunkRecords+20), chunkRecords-10, 2*chunkRecords+9)
	if err := s.PutSnapshot(ctx, "d", Snapshot{Cursor: n, Root: rootOf("d"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	floor := uint64(n - 100)
	if got := info(t, s, "d").Floor; got != floor {
		t.Fatalf("floor %d, want %d", got, floor)
	}
	_, err := s.Read(ctx, "d", floor, 0)
	wantReason(t, err, Compacted)
	wantRecords(t, "d", read(t, s, "d", floor+1, 0), floor+1, n)

	create(t, s, "big", 0)
	big := make([]Record, 5)
	for i := range big {
		big[i] = Record{Cursor: uint64(i + 1), Commit: bytes.Repeat([]byte{byte('a' + i)}, chunkBytes*3/4)}
	}
	if err := s.Append(ctx, "big", big); err != nil {
		t.Fatal(err)
	}
	if got := chunkCount(t, s, "big"); got != 3 {
		t.Fatalf("5 records of 3/4 chunkBytes folded into %d chunks, want 3", got)
	}
	for from := uint64(1); from <= 5; from++ {
		got := read(t, s, "big", from, 1)
		if len(got) != 1 || got[0].Cursor != from || !bytes.Equal(got[0].Commit, big[from-1].Commit) {
			t.Fatalf("read big from %d: %d records", from, len(got))
		}
	}
}

func chunkCount(t *testing.T, s *Bolt, doc string) int {
	t.Helper()
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		prefix := logPrefix(doc)
		c := tx.Bucket(bucketLog).Cursor()
		for k, _ := c.Seek(prefix); k != nil; k, _ = c.Next() {
			if _, ok := logCursor(prefix, k); !ok {
				break
			}
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBoltDeleteDurable: a delete survives a reopen, also one that found
// the document's records still in the wal, and leaves no chunk, snapshot
// or wal record of it in the file.
func TestBoltDeleteDurable(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := mustOpen(t, dir, Options{CheckpointRecords: 5})
	create(t, s, "a", 0)
	create(t, s, "b", 0)
	appendRange(t, s, "a", 1, 12, 4) // folded, then some in the wal
	appendRange(t, s, "b", 1, 3, 1)
	if err := s.PutSnapshot(ctx, "a", Snapshot{Cursor: 4, State: []byte("secret"), Root: rootOf("a"), RootKind: 2}); err != nil {
		t.Fatal(err)
	}
	appendRange(t, s, "a", 13, 14, 1)
	if pendingRecords(s) == 0 || chunkCount(t, s, "a") == 0 {
		t.Fatal("the test needs records of a both in the wal and in the log")
	}
	if err := s.Delete(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := closeKeepingWAL(s); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir, Options{})
	_, err := s.Info(ctx, "a")
	wantReason(t, err, UnknownDocument)
	wantRecords(t, "b", read(t, s, "b", 1, 0), 1, 3)
	if n := chunkCount(t, s, "a"); n != 0 {
		t.Fatalf("%d log chunks of a left", n)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketSnaps).Get([]byte("a")) != nil || tx.Bucket(bucketDocs).Get([]byte("a")) != nil {
			return errors.New("a's snapshot or metadata is left")
		}
		return tx.Bucket(bucketWAL).ForEach(func(_, v []byte) error {
			return eachWAL(v, func(e walEntry) error {
				if string(e.doc) == "a" {
					return errors.New("a wal record of a is left")
				}
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBoltDeleteOrder: writes queued before a delete commit before it and
// are deleted with the document; an append queued after it is refused, so
// nothing lands after the delete.
func TestBoltDeleteOrder(t *testing.T) {
	h := newHolder()
	s := mustOpen(t, t.TempDir(), Options{Fault: h.fault})
	ctx := context.Background()
	create(t, s, "d", 0)
	create(t, s, "x", 0)
	h.armed.Store(true)
	held := make(chan error, 1)
	go func() { held <- s.Append(ctx, "x", recs("x", 1, 1)) }()
	<-h.entered
	before := make(chan error, 1)
	go func() { before <- s.Append(ctx, "d", recs("d", 1, 2)) }()
	waitQueued(s, 1)
	deleted := make(chan error, 1)
	go func() { deleted <- s.Delete(ctx, "d") }()
	waitQueued(s, 2)
	after := make(chan error, 1)
	go func() { after <- s.Append(ctx, "d", recs("d", 3, 1)) }()
	waitQueued(s, 3)
	close(h.release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-before; err != nil {
		t.Fatalf("append queued before the delete: %v", err)
	}
	if err := <-deleted; err != nil {
		t.Fatalf("delete: %v", err)
	}
	wantReason(t, <-after, UnknownDocument)
	_, err := s.Info(ctx, "d")
	wantReason(t, err, UnknownDocument)
	wantRecords(t, "x", read(t, s, "x", 1, 0), 1, 1)
}
