package tail

import (
	"errors"
	"sync/atomic"
)

// Defaults for zero Config fields.
const (
	// DefaultMaxCommits is how many commits a tail keeps: about 80 s of a
	// document written 200 times a second (decision 031).
	DefaultMaxCommits = 16384
	// DefaultMaxBytes is the commit bytes a tail keeps; it matches the
	// gateway's default MaxPendingBytes, so a link is ended for its lag
	// before it can fall off.
	DefaultMaxBytes = 4 << 20
)

// ErrFellOff says a reader's cursor is older than the oldest commit held:
// what it has not read is gone from the tail.
var ErrFellOff = errors.New("tail: the cursor fell off the tail")

// Config bounds a tail. A zero or negative field takes its default.
type Config struct {
	MaxCommits int
	MaxBytes   int
}

func (c Config) withDefaults() Config {
	if c.MaxCommits <= 0 {
		c.MaxCommits = DefaultMaxCommits
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	return c
}

// Entry is one durable commit: its cursor, its encoded bytes and what the
// writer keeps with it (its origin, its paths).
type Entry[T any] struct {
	Cursor uint64
	Bytes  []byte
	Item   T
	end    uint64 // bytes appended since the tail began, through this entry
}

// Tail is the ring. Append and Reset are for one writer; Read, Lag, Behind
// and Head are safe from any goroutine, and never block the writer: a
// reader holds no lock a preempted goroutine could keep (decision 031).
// The zero value is not usable: New.
type Tail[T any] struct {
	cfg    Config
	ring   atomic.Pointer[ring[T]]
	head   atomic.Uint64 // cursor of the newest entry, or where the tail starts when empty
	oldest atomic.Uint64 // cursor of the oldest entry held (head+1 when empty)

	// The writer's alone.
	n     int    // entries held
	bytes int    // bytes held
	total uint64 // bytes appended since the tail began
}

// ring is one generation of slots: entry c lives at c mod len(slots). It is
// replaced, never resized in place, so a reader holding an older one reads
// consistent entries from it.
type ring[T any] struct {
	slots []atomic.Pointer[Entry[T]]
}

func (r *ring[T]) slot(c uint64) *atomic.Pointer[Entry[T]] {
	return &r.slots[c%uint64(len(r.slots))]
}

// New returns an empty tail at cursor 0.
func New[T any](cfg Config) *Tail[T] {
	t := &Tail[T]{cfg: cfg.withDefaults()}
	t.ring.Store(&ring[T]{})
	t.oldest.Store(1)
	return t
}

// Reset empties the tail at cursor at: a reader at at reads what is
// appended next, any reader before it has fallen off.
func (t *Tail[T]) Reset(at uint64) {
	t.ring.Store(&ring[T]{})
	t.n, t.bytes = 0, 0
	t.oldest.Store(at + 1)
	t.head.Store(at)
}

// Append adds entries, which must carry consecutive cursors. One that
// does not follow the head empties the tail first (the document restarted
// under its readers, who have then fallen off).
func (t *Tail[T]) Append(es ...Entry[T]) {
	for _, e := range es {
		if e.Cursor != t.head.Load()+1 {
			t.Reset(e.Cursor - 1)
		}
		r := t.ring.Load()
		if t.n == len(r.slots) && t.n < t.cfg.MaxCommits {
			r = t.grow(r)
		}
		if t.n == len(r.slots) {
			t.dropOldest(r)
		}
		t.total += uint64(len(e.Bytes))
		e.end = t.total
		r.slot(e.Cursor).Store(&e)
		t.n++
		t.bytes += len(e.Bytes)
		t.head.Store(e.Cursor) // published after its slot: a reader that sees it sees the entry
		for t.bytes > t.cfg.MaxBytes && t.n > 1 {
			t.dropOldest(r)
		}
	}
}

// Trim lets go of the commits through cursor through, which every reader
// has read (the writer's call): a reader at or past it reads on, one
// before it has fallen off.
func (t *Tail[T]) Trim(through uint64) {
	r := t.ring.Load()
	for t.n > 0 && t.oldest.Load() <= through {
		t.dropOldest(r)
	}
}

// grow publishes a larger ring holding the same entries.
func (t *Tail[T]) grow(old *ring[T]) *ring[T] {
	r := &ring[T]{slots: make([]atomic.Pointer[Entry[T]], min(max(2*len(old.slots), 16), t.cfg.MaxCommits))}
	for c := t.oldest.Load(); c <= t.head.Load() && t.n > 0; c++ {
		r.slot(c).Store(old.slot(c).Load())
	}
	t.ring.Store(r)
	return r
}

func (t *Tail[T]) dropOldest(r *ring[T]) {
	c := t.oldest.Load()
	s := r.slot(c)
	t.bytes -= len(s.Load().Bytes)
	t.oldest.Store(c + 1) // before the slot empties: a reader checks it after
	s.Store(nil)
	t.n--
}

// Head is the cursor of the newest commit held (where the tail starts
// when it holds none).
func (t *Tail[T]) Head() uint64 { return t.head.Load() }

// Read appends to dst the commits after cursor after, oldest first: at
// least one when there is one, then more while their bytes stay within
// maxBytes (0: no bound). A reader at or past the head gets none. When
// the writer laps the reader during the read, it returns what it took,
// and the next read finds the reader fallen off.
func (t *Tail[T]) Read(after uint64, dst []Entry[T], maxBytes int) ([]Entry[T], error) {
	h := t.head.Load()
	if after >= h {
		return dst, nil
	}
	r := t.ring.Load() // after the head: it holds every entry through h
	if len(r.slots) == 0 {
		return dst, ErrFellOff // emptied since: nothing after after is held
	}
	size := 0
	for c := after + 1; c <= h; c++ {
		e := r.slot(c).Load()
		if e == nil || e.Cursor != c {
			if c == after+1 {
				return dst, ErrFellOff
			}
			break
		}
		size += len(e.Bytes)
		if maxBytes > 0 && size > maxBytes && c > after+1 {
			break
		}
		dst = append(dst, *e)
	}
	return dst, nil
}

// Lag returns the bytes of the commits after cursor after, or ErrFellOff.
func (t *Tail[T]) Lag(after uint64) (int, error) {
	h := t.head.Load()
	if after >= h {
		return 0, nil
	}
	r := t.ring.Load()
	if len(r.slots) == 0 {
		return 0, ErrFellOff
	}
	first, last := r.slot(after+1).Load(), r.slot(h).Load()
	if first == nil || first.Cursor != after+1 {
		return 0, ErrFellOff
	}
	if last == nil || last.Cursor != h {
		return 0, nil // a Reset raced the read: nothing to say about this cursor
	}
	// The bytes through after are those through the entry after it less
	// that entry's own.
	return int(last.end - first.end + uint64(len(first.Bytes))), nil
}

// Behind is Lag, for the writer's goroutine between its appends.
func (t *Tail[T]) Behind(after uint64) (int, error) { return t.Lag(after) }
