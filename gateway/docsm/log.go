package docsm

// Log is one document's applied commits from their apply until the store
// has them: each gets the next cursor (gap-free) when it is applied, waits
// for its turn to be appended, and is durable once its append returns.
// One append is in flight at a time; the store's group commit gathers
// appends across documents, so a document gains nothing from two.
type Log[T any] struct {
	cursor    uint64 // the last applied
	durable   uint64 // the last the store holds
	unflushed []Landed[T]
	appending []Landed[T]
}

// Landed is an applied commit with its cursor.
type Landed[T any] struct {
	Cursor uint64
	Item   T
}

// Cursor is the cursor of the last applied commit.
func (l *Log[T]) Cursor() uint64 { return l.cursor }

// Durable is the cursor of the last commit the store holds.
func (l *Log[T]) Durable() uint64 { return l.durable }

// InFlight is the applied commits the store does not hold yet.
func (l *Log[T]) InFlight() int { return len(l.unflushed) + len(l.appending) }

// Settled reports whether everything applied is durable.
func (l *Log[T]) Settled() bool { return l.InFlight() == 0 }

// Appending reports whether an append is in flight.
func (l *Log[T]) Appending() bool { return len(l.appending) > 0 }

// Restart puts the log at cursor at, with everything durable and nothing
// in flight: a load, or a reload after a failed append.
func (l *Log[T]) Restart(at uint64) {
	l.cursor, l.durable, l.unflushed, l.appending = at, at, nil, nil
}

// Land gives item the next cursor and queues it for the store.
func (l *Log[T]) Land(item T) uint64 {
	l.cursor++
	l.unflushed = append(l.unflushed, Landed[T]{l.cursor, item})
	return l.cursor
}

// Flush returns the batch to append now: everything waiting, unless an
// append is already in flight (then nil, and the next Flush after it
// takes what gathered meanwhile).
func (l *Log[T]) Flush() []Landed[T] {
	if len(l.appending) > 0 || len(l.unflushed) == 0 {
		return nil
	}
	l.appending, l.unflushed = l.unflushed, nil
	return l.appending
}

// Appended takes the store's word that the batch in flight is durable and
// returns it, in cursor order.
func (l *Log[T]) Appended() []Landed[T] {
	b := l.appending
	l.appending = nil
	if len(b) > 0 {
		l.durable = b[len(b)-1].Cursor
	}
	return b
}

// Failed takes the store's word that the batch in flight failed. It
// returns that batch and everything applied after it, and holds nothing:
// the store may still have some of the batch, so the driver reloads and
// Restarts at what the store holds; whatever of the batch is past that did
// not land, and nothing after the batch did.
func (l *Log[T]) Failed() (batch, later []Landed[T]) {
	batch, later = l.appending, l.unflushed
	l.appending, l.unflushed = nil, nil
	return batch, later
}

// Recovery is what becomes of a failed append's batch, and of what was
// applied after it, once the driver has asked the store what it holds.
type Recovery[T any] struct {
	// Landed are in the store after all (a timeout after the write, an
	// fsync error): they are durable and are delivered.
	Landed []Landed[T]
	// Refused did not land: their origins hear refused.
	Refused []Landed[T]
	// Unknown: the store could not say. No answer to their origins would
	// be true, so the peers' topics end and each resyncs.
	Unknown []Landed[T]
	// Restart is where the document now is, when known.
	Restart uint64
	Known   bool
}

// Recover splits what Failed returned by what a reload found: the store's
// last cursor at, or known false when the reload failed too. A document
// whose creation never reached the store is at 0.
func Recover[T any](batch, later []Landed[T], at uint64, known bool) Recovery[T] {
	r := Recovery[T]{Restart: at, Known: known}
	if !known {
		r.Unknown, r.Refused = batch, later
		return r
	}
	for _, b := range batch {
		if b.Cursor <= at {
			r.Landed = append(r.Landed, b)
		} else {
			r.Refused = append(r.Refused, b)
		}
	}
	r.Refused = append(r.Refused, later...)
	return r
}

// Unflushed takes every applied commit not yet handed to the store (a
// delete refuses them).
func (l *Log[T]) Unflushed() []Landed[T] {
	u := l.unflushed
	l.unflushed = nil
	return u
}
