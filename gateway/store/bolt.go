package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// FileName is the database file inside the directory given to Open.
const FileName = "weftgate.db"

// lockWait is how long Open waits for another process's file lock.
const lockWait = time.Second

// Bolt is the embedded, crash-safe Store on one bbolt file. One writer
// goroutine owns every write transaction and commits whatever requests are
// queued as one transaction (group commit). Appends land in a
// write-ahead bucket (a few sequential pages per commit) and are folded into
// the per-document log in bulk at checkpoints, so a commit's cost does not
// grow with the number of documents in it.
type Bolt struct {
	opts Options
	db   *bolt.DB

	reqs    chan *request
	closing chan struct{} // closed when Close starts: wakes blocked senders
	stop    chan struct{} // closed once no sender can enqueue: the writer drains and exits
	done    chan struct{} // closed by the writer on exit

	gate    sync.RWMutex // guards closed against senders
	closed  bool
	senders sync.WaitGroup

	failure atomic.Pointer[error] // set while the store refuses writes

	pmu  sync.RWMutex
	pend map[string][]Record // durable records not yet checkpointed (they are in the wal bucket)
	// deletes counts committed deletes, so a reader can tell its copy of
	// pend may belong to a document deleted (and made again) since.
	deletes uint64

	keepWAL bool // tests: Close leaves the wal for the next Open, as a crash would
}

var _ Store = (*Bolt)(nil)

// Open opens or creates the store in dir and starts its writer. Records left
// in the write-ahead bucket by a crash are folded in before it returns.
func Open(dir string, o Options) (*Bolt, error) {
	o = o.withDefaults()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, unavailable("", err)
	}
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{
		Timeout:         lockWait,
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: o.MmapBytes,
		MaxSize:         o.MaxFileBytes,
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, &Error{Reason: Unavailable, Message: "database is locked by another process", Err: err}
		}
		return nil, unavailable("", err)
	}
	if err := db.Update(initialise); err != nil {
		db.Close()
		if ReasonOf(err) != "" {
			return nil, err
		}
		return nil, unavailable("", err)
	}
	s := &Bolt{
		opts:    o,
		db:      db,
		reqs:    make(chan *request, o.QueueLength),
		closing: make(chan struct{}),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
		pend:    make(map[string][]Record),
	}
	w := newWriter(s)
	go w.run()
	return s, nil
}

// initialise creates the buckets, checks the format and folds in the wal.
func initialise(tx *bolt.Tx) error {
	for _, name := range [][]byte{bucketDocs, bucketSnaps, bucketLog, bucketWAL, bucketMeta} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	switch v := meta.Get(keyFormat); {
	case v == nil:
		if err := meta.Put(keyFormat, []byte{formatVersion}); err != nil {
			return err
		}
	case len(v) != 1 || v[0] != formatVersion:
		return errorf(Corrupt, "", fmt.Sprintf("unknown store format %x", v))
	}
	_, _, err := checkpoint(tx)
	return err
}

// enqueue hands r to the writer, waiting for room until ctx ends.
func (s *Bolt) enqueue(ctx context.Context, r *request) error {
	s.gate.RLock()
	if s.closed {
		s.gate.RUnlock()
		return ErrClosed
	}
	s.senders.Add(1)
	s.gate.RUnlock()
	defer s.senders.Done()
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closing:
		return ErrClosed
	}
}

// refusing returns the error a write gets while the store has failed.
func (s *Bolt) refusing(doc string) error {
	if f := s.failure.Load(); f != nil {
		return unavailable(doc, *f)
	}
	return nil
}

func (s *Bolt) Append(ctx context.Context, doc string, recs []Record) error {
	n, err := checkAppend(doc, recs)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	if err := s.refusing(doc); err != nil {
		return err
	}
	r := newRequest(reqAppend, doc)
	r.recs, r.bytes = recs, n
	if err := s.enqueue(ctx, r); err != nil {
		return err
	}
	return <-r.done
}

func (s *Bolt) PutSnapshot(ctx context.Context, doc string, snap Snapshot) error {
	if err := checkSnapshot(doc, snap); err != nil {
		return err
	}
	if err := s.refusing(doc); err != nil {
		return err
	}
	r := newRequest(reqSnapshot, doc)
	r.snap, r.bytes = snap, len(snap.State)
	if err := s.enqueue(ctx, r); err != nil {
		return err
	}
	return <-r.done
}

// Delete queues the deletion behind every write already queued and waits
// for it to be durable.
func (s *Bolt) Delete(ctx context.Context, doc string) error {
	if err := checkName(doc); err != nil {
		return err
	}
	if err := s.refusing(doc); err != nil {
		return err
	}
	r := newRequest(reqDelete, doc)
	if err := s.enqueue(ctx, r); err != nil {
		return err
	}
	return <-r.done
}

func (s *Bolt) Healthy(ctx context.Context) error {
	s.gate.RLock()
	closed := s.closed
	s.gate.RUnlock()
	if closed {
		return ErrClosed
	}
	if s.failure.Load() == nil {
		return nil
	}
	r := newRequest(reqProbe, "")
	if err := s.enqueue(ctx, r); err != nil {
		return err
	}
	return <-r.done
}

// Close waits for the commit in progress, so on a disk that never answers
// it waits too; bbolt has no way to abandon a sync.
func (s *Bolt) Close() error {
	s.gate.Lock()
	if s.closed {
		s.gate.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.gate.Unlock()
	s.senders.Wait()
	close(s.stop)
	<-s.done
	if err := s.db.Close(); err != nil {
		return unavailable("", err)
	}
	return nil
}
