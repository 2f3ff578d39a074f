package docsm

import "time"

// Race is a node's wait, on a log other nodes append to, after its append
// lost its cursor to another node: the winner's records come through the
// node's follow, most often at once, and until they are durable here no
// commit is decided, so none overtakes the commits taken back. A follow
// that brings nothing within the wait (a lost server) ends in a read of
// the log instead (decision 033).
type Race struct {
	at       uint64 // the winner's first cursor; 0 when not waiting
	deadline time.Time
}

// RaceStep is what the driver does next.
type RaceStep uint8

const (
	// RaceWait: keep holding decisions.
	RaceWait RaceStep = iota
	// RaceDecide: the winner's records are durable here; decide the
	// taken-back commits again, after them. The wait is over.
	RaceDecide
	// RaceRead: the follow brought nothing in time; read the log. The
	// wait is over.
	RaceRead
)

// Lost starts waiting for the record after durable, until now+wait; it
// returns that deadline, for the driver's timer.
func (r *Race) Lost(durable uint64, now time.Time, wait time.Duration) time.Time {
	r.at, r.deadline = durable+1, now.Add(wait)
	return r.deadline
}

// Waiting reports whether decisions are held.
func (r *Race) Waiting() bool { return r.at != 0 }

// Progress is the driver's durable cursor after an input; pending says
// records the follow brought still wait to be applied (or the document is
// paused), so the winner's may not be all in.
func (r *Race) Progress(durable uint64, pending bool) RaceStep {
	if r.at == 0 || durable < r.at || pending {
		return RaceWait
	}
	r.at = 0
	return RaceDecide
}

// Tick is the driver's timer at now: a timer of an earlier wait finds a
// later deadline, or none, and does nothing.
func (r *Race) Tick(now time.Time) RaceStep {
	if r.at == 0 || now.Before(r.deadline) {
		return RaceWait
	}
	r.at = 0
	return RaceRead
}

// End ends the wait without a step: a read of the log, or a resync, now
// decides what comes next.
func (r *Race) End() { r.at = 0 }
