package tail

import (
	"errors"
	"sync"
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

// Tail is the ring. Append and Reset are for one writer; Read, Lag and
// Head are safe from any goroutine. The zero value is not usable: New.
type Tail[T any] struct {
	cfg   Config
	mu    sync.RWMutex
	ring  []Entry[T] // grows up to MaxCommits, then wraps
	start int        // index of the oldest entry
	n     int        // entries held
	head  uint64     // cursor of the newest entry, or where the tail starts when empty
	total uint64     // bytes appended since the tail began
	bytes int        // bytes held
}

// New returns an empty tail at cursor 0.
func New[T any](cfg Config) *Tail[T] {
	return &Tail[T]{cfg: cfg.withDefaults()}
}

// Reset empties the tail at cursor at: a reader at at reads what is
// appended next, any reader before it has fallen off.
func (t *Tail[T]) Reset(at uint64) {
	t.mu.Lock()
	clear(t.ring)
	t.ring, t.start, t.n, t.bytes, t.head = nil, 0, 0, 0, at
	t.mu.Unlock()
}

// Append adds entries, which must carry consecutive cursors. One that
// does not follow the head empties the tail first (the document restarted
// under its readers, who have then fallen off).
func (t *Tail[T]) Append(es ...Entry[T]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, e := range es {
		if e.Cursor != t.head+1 {
			clear(t.ring)
			t.ring, t.start, t.n, t.bytes = nil, 0, 0, 0
		}
		t.total += uint64(len(e.Bytes))
		e.end = t.total
		if t.n == len(t.ring) && t.n < t.cfg.MaxCommits {
			t.grow()
		}
		if t.n == len(t.ring) {
			t.dropOldest()
		}
		t.ring[(t.start+t.n)%len(t.ring)] = e
		t.n++
		t.bytes += len(e.Bytes)
		t.head = e.Cursor
		for t.bytes > t.cfg.MaxBytes && t.n > 1 {
			t.dropOldest()
		}
	}
}

func (t *Tail[T]) grow() {
	size := min(max(2*len(t.ring), 16), t.cfg.MaxCommits)
	r := make([]Entry[T], size)
	for i := range t.n {
		r[i] = t.ring[(t.start+i)%len(t.ring)]
	}
	t.ring, t.start = r, 0
}

func (t *Tail[T]) dropOldest() {
	e := &t.ring[t.start]
	t.bytes -= len(e.Bytes)
	*e = Entry[T]{}
	t.start = (t.start + 1) % len(t.ring)
	t.n--
}

// Head is the cursor of the newest commit held (where the tail starts
// when it holds none).
func (t *Tail[T]) Head() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.head
}

// at returns the entry at cursor c, which the caller checked is held.
func (t *Tail[T]) at(c uint64) *Entry[T] {
	oldest := t.head - uint64(t.n) + 1
	return &t.ring[(t.start+int(c-oldest))%len(t.ring)]
}

// fellOff reports whether a reader that has read through after misses
// commits the tail no longer holds.
func (t *Tail[T]) fellOff(after uint64) bool {
	return after < t.head && t.head-after > uint64(t.n)
}

// Read appends to dst the commits after cursor after, oldest first: at
// least one when there is one, then more while their bytes stay within
// maxBytes (0: no bound). A reader at or past the head gets none.
func (t *Tail[T]) Read(after uint64, dst []Entry[T], maxBytes int) ([]Entry[T], error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if after >= t.head {
		return dst, nil
	}
	if t.fellOff(after) {
		return dst, ErrFellOff
	}
	size := 0
	for c := after + 1; c <= t.head; c++ {
		e := t.at(c)
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
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.Behind(after)
}

// Behind is Lag for the writer's own goroutine, between its appends: it
// takes no lock, since only the writer changes the tail.
func (t *Tail[T]) Behind(after uint64) (int, error) {
	if after >= t.head {
		return 0, nil
	}
	if t.fellOff(after) {
		return 0, ErrFellOff
	}
	// The bytes through after are those through the entry after it less
	// that entry's own.
	e := t.at(after + 1)
	return int(t.total - e.end + uint64(len(e.Bytes))), nil
}
