package docsm

// Waiters holds work that must see the document as the store has it: a
// read of its state, a subscription's snapshot, a backend's state
// replacement. Each waits, in order, until everything applied is durable
// and no creator's state is outstanding (settled), and an idle one also
// until no commit waits for its verdict, so that what it computes is not
// overtaken by a commit already in flight.
type Waiters[W any] struct {
	q []waiter[W]
}

type waiter[W any] struct {
	w    W
	idle bool
}

// Add queues w; idle says it also waits for the verdicts. It returns
// true, queueing nothing, when w may run at once: nothing waits before it
// and its condition holds.
func (ws *Waiters[W]) Add(w W, idle, settled, undecided bool) bool {
	if len(ws.q) == 0 && settled && (!idle || !undecided) {
		return true
	}
	ws.q = append(ws.q, waiter[W]{w, idle})
	return false
}

// Next takes the waiter at the head when it may run now: the document is
// settled and, for an idle one, no commit waits for its verdict. One at a
// time, because running one may change both (a replacement queues a
// commit).
func (ws *Waiters[W]) Next(settled, undecided bool) (W, bool) {
	var zero W
	if len(ws.q) == 0 || !settled || ws.q[0].idle && undecided {
		return zero, false
	}
	w := ws.q[0].w
	ws.q[0] = waiter[W]{}
	ws.q = ws.q[1:]
	if len(ws.q) == 0 {
		ws.q = nil
	}
	return w, true
}

// Len is the waiters queued.
func (ws *Waiters[W]) Len() int { return len(ws.q) }
