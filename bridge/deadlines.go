package bridge

import (
	"container/heap"
	"time"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// deadlines holds every ask that is assigned to a stream, earliest
// deadline first, so that one timer serves them all: a timer per question
// was two allocations and a runtime timer each, at tens of thousands of
// questions a second. Guarded by router.mu.
type deadlines []*ask

func (d deadlines) Len() int           { return len(d) }
func (d deadlines) Less(i, j int) bool { return d[i].deadline.Before(d[j].deadline) }
func (d deadlines) Swap(i, j int) {
	d[i], d[j] = d[j], d[i]
	d[i].slot, d[j].slot = i+1, j+1
}
func (d *deadlines) Push(x any) {
	a := x.(*ask)
	*d = append(*d, a)
	a.slot = len(*d)
}
func (d *deadlines) Pop() any {
	old := *d
	a := old[len(old)-1]
	old[len(old)-1] = nil
	*d = old[:len(old)-1]
	a.slot = 0
	return a
}

// arm (re)starts a's deadline for its current assignment.
func (r *router) arm(a *ask) {
	if a.slot > 0 {
		heap.Fix(&r.due, a.slot-1)
	} else {
		heap.Push(&r.due, a)
	}
	r.rearm()
}

// disarm takes a's deadline away; the timer, if it was for a, fires early
// and finds nothing due.
func (r *router) disarm(a *ask) {
	if a.slot > 0 {
		heap.Remove(&r.due, a.slot-1)
	}
}

// rearm sets the timer for the earliest deadline unless it already fires
// by then.
func (r *router) rearm() {
	if len(r.due) == 0 {
		return
	}
	next := r.due[0].deadline
	if !r.timerAt.IsZero() && !next.Before(r.timerAt) {
		return
	}
	r.timerAt = next
	if r.timer == nil {
		r.timer = time.AfterFunc(time.Until(next), r.expired)
		return
	}
	r.timer.Reset(time.Until(next))
}

// expired moves every question nobody answered in time to its next
// claimant.
func (r *router) expired() {
	r.mu.Lock()
	r.timerAt = time.Time{}
	now := time.Now()
	var fell []fallen
	for len(r.due) > 0 && !r.due[0].deadline.After(now) {
		a := heap.Pop(&r.due).(*ask)
		r.stats.TimedOut.Add(1)
		r.failed(a.st.backend, "a question timed out")
		r.detach(a, v1.WithdrawReason_WITHDRAW_REASON_TIMEOUT)
		if fb, final := r.place(a); final {
			r.finish(a)
			fell = append(fell, fallen{a, fb})
		}
	}
	r.rearm()
	r.mu.Unlock()
	for _, f := range fell {
		r.fellBack(f.a, f.fb)
	}
}

// fallen is a question the policy answers, once the router's lock is let go.
type fallen struct {
	a  *ask
	fb fallback
}
