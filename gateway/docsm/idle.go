package docsm

import "time"

// Idle decides when a document that nobody holds leaves memory. The driver
// says when the document has gone quiet (no member, subscriber, pending
// commit, store call or waiter) and passes the time; Idle answers whether
// it goes at once, waits, or goes now that its wait is over.
type Idle struct {
	// After is how long a quiet document stays loaded, so that a peer
	// that reconnects finds it warm.
	After time.Duration
	armed bool
	at    time.Time
}

// IdleStep is what Quiet tells the driver to do.
type IdleStep uint8

const (
	// IdleWait: stay loaded until Deadline, then Tick.
	IdleWait IdleStep = iota
	// IdleGoNow: it holds nothing the store has (a name that was never
	// there, a creation that never landed): holding it would let a flood
	// of such names fill the gateway.
	IdleGoNow
)

// Quiet reports that the document went quiet at now; stored says the
// store holds it. The wait is armed once: a brief reference in between (a
// status read) does not push it back.
func (i *Idle) Quiet(now time.Time, stored bool) IdleStep {
	if !stored {
		return IdleGoNow
	}
	if !i.armed {
		i.armed, i.at = true, now.Add(i.After)
	}
	return IdleWait
}

// Deadline is when the armed wait ends.
func (i *Idle) Deadline() (time.Time, bool) { return i.at, i.armed }

// Tick ends the wait once now has reached it. It reports whether the
// document goes: only when it is still quiet (the driver says so).
func (i *Idle) Tick(now time.Time, quiet bool) bool {
	if !i.armed || now.Before(i.at) {
		return false
	}
	i.armed = false
	return quiet
}

// FinalSnapshot says whether a document leaving memory stores a snapshot:
// when commits became durable since the last one, so the next load reads
// one state and not the whole tail.
func FinalSnapshot(stored bool, durable, snapshotAt uint64) bool {
	return stored && durable > snapshotAt
}
