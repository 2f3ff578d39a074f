package gateway

import (
	"testing"
	"time"
)

// wakeHub is a hub with n members and nothing else, for its pass's steps
// (wakeSome): a member is woken when its topic is marked dirty.
func wakeHub(t *testing.T, n, chunk int) (*hub, []*member) {
	t.Helper()
	h := &hub{
		srv:     &Server{cfg: Config{FanoutChunk: chunk}},
		members: map[*conn]*member{},
		inbox:   make(chan hubMsg, 1),
		done:    make(chan struct{}),
	}
	t.Cleanup(func() { close(h.done) }) // ends a step's post still on its way
	ms := make([]*member, n)
	for i := range ms {
		c := &conn{wake: make(chan struct{}, 1)}
		ms[i] = &member{c: c, ts: &topicState{}, ordered: true}
		h.members[c] = ms[i]
		h.order = append(h.order, ms[i])
	}
	return h, ms
}

// woken says which members were woken since the last call, and lets them
// read (as a link's loop does), so a later step can wake them again.
func woken(ms []*member) []int {
	var out []int
	for i, m := range ms {
		if m.ts.dirty.Swap(false) {
			out = append(out, i)
			m.c.dirty = m.c.dirty[:0]
		}
	}
	return out
}

// nextStep waits for the posted wakeMoreMsg and takes it as the hub does.
func nextStep(t *testing.T, h *hub) {
	t.Helper()
	select {
	case m := <-h.inbox:
		if _, ok := m.(wakeMoreMsg); !ok {
			t.Fatalf("the hub got %T, want the next step", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no next step was posted")
	}
	h.handle(wakeMoreMsg{})
}

func wantWoken(t *testing.T, ms []*member, want ...int) {
	t.Helper()
	got := woken(ms)
	if len(got) != len(want) {
		t.Fatalf("woken %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("woken %v, want %v", got, want)
		}
	}
}

// firstStep is a hub of ten members, a pass over them, and its first
// step, which woke the first chunk of four.
func firstStep(t *testing.T) (*hub, []*member) {
	t.Helper()
	h, ms := wakeHub(t, 10, 4)
	for _, m := range ms {
		h.markDue(m)
	}
	h.wakeSome()
	wantWoken(t, ms, 0, 1, 2, 3)
	return h, ms
}

// Issue 18: a pass wakes its links a chunk at a time, each step posted to
// the hub, until every due link is woken once.
func TestAPassWakesItsLinksAChunkAtATime(t *testing.T) {
	h, ms := firstStep(t)
	nextStep(t, h)
	wantWoken(t, ms, 4, 5, 6, 7)
	nextStep(t, h)
	wantWoken(t, ms, 8, 9)
	if h.wakeHop || h.wakeLeft != 0 {
		t.Fatalf("after the last step: a step posted %v, %d due", h.wakeHop, h.wakeLeft)
	}
}

// A pass that comes while the last is still in steps goes on from where
// that one stopped: starting again from the first link would leave the
// last ones waiting as long as passes come faster than the steps.
func TestAPassGoesOnWhereTheLastStopped(t *testing.T) {
	h, ms := firstStep(t)
	for _, m := range ms { // the next pass, before the next step
		h.markDue(m)
	}
	if h.wakeLeft != 10 {
		t.Fatalf("%d due, want 10", h.wakeLeft)
	}
	nextStep(t, h)
	wantWoken(t, ms, 4, 5, 6, 7)
	nextStep(t, h)
	wantWoken(t, ms, 0, 1, 8, 9)
	nextStep(t, h)
	wantWoken(t, ms, 2, 3)
}

// Members that leave between steps are not woken, and dropping them from
// the order keeps the place of the next step and the count still due.
func TestStepsSkipMembersThatLeft(t *testing.T) {
	h, ms := firstStep(t)
	delete(h.members, ms[2].c)
	delete(h.members, ms[5].c)
	h.pruneOrder()
	if h.wakeLeft != 5 || h.order[h.wakeAt] != ms[4] {
		t.Fatalf("after the prune: %d due, next %p, want 5 and member 4", h.wakeLeft, h.order[h.wakeAt])
	}
	delete(h.members, ms[7].c) // gone, and still in the order
	nextStep(t, h)
	wantWoken(t, ms, 4, 6, 8, 9)
	if h.wakeHop || h.wakeLeft != 0 {
		t.Fatalf("after the last step: a step posted %v, %d due", h.wakeHop, h.wakeLeft)
	}
}
