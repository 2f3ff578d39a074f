package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge/client"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var errSlow = status.Error(codes.ResourceExhausted, "slow-subscriber")

// seed gives doc n commits, each setting key "k" to its number.
func seed(t testing.TB, g *fakeGateway, doc string, n int) {
	t.Helper()
	for range n {
		g.addCommit(t, doc)
	}
}

func (g *fakeGateway) addCommit(t testing.TB, doc string) uint64 {
	g.mu.Lock()
	next := len(g.doc(doc).events) + 1
	g.mu.Unlock()
	cm := commit.Commit{Deltas: []commit.Delta{set("k", fmt.Sprint(next))}}
	return g.appendCommit(doc, &v1.CommitEvent{Commit: both(t, cm),
		Origin: &v1.Origin{Source: &v1.Origin_Backend{Backend: &v1.BackendOrigin{Name: "seed", Label: fmt.Sprint(next)}}}})
}

// recorder is a Subscribe callback that reports each event as text.
type recorder struct {
	ch   chan string
	fail map[string]error // an event's text → the error to return for it
	// on runs inside the callback, before it returns: the applied cursor is
	// still the previous event's there.
	on atomic.Pointer[func(client.Event)]
}

func newRecorder() *recorder { return &recorder{ch: make(chan string, 256)} }

func (r *recorder) fn(ev client.Event) error {
	s := describe(ev)
	if on := r.on.Load(); on != nil {
		(*on)(ev)
	}
	if err := r.fail[s]; err != nil {
		return err
	}
	r.ch <- s
	return nil
}

func describe(ev client.Event) string {
	switch ev.Kind {
	case client.CommitEvent:
		v := ev.Commit.Deltas[0].Value.Str
		if v != fmt.Sprint(ev.Cursor) || ev.Paths[0][0] != "k" || ev.Origin.Backend.Label != v {
			return fmt.Sprintf("bad commit %s %d (value %s)", ev.Document, ev.Cursor, v)
		}
		return fmt.Sprintf("%s@%d", ev.Document, ev.Cursor)
	case client.SnapshotEvent:
		return fmt.Sprintf("snapshot %s@%d %s %d deltas", ev.Document, ev.Cursor, ev.Reason, len(ev.Commit.Deltas))
	}
	return ev.Kind.String()
}

func (r *recorder) expect(t testing.TB, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := wait(t, r.ch, w); got != w {
			t.Fatalf("event %q, want %q", got, w)
		}
	}
}

func subscribeAsync(c *client.Client, ctx context.Context, doc string, from uint64, fn func(client.Event) error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- c.Subscribe(ctx, doc, from, fn) }()
	return done
}

// A subscription resumes from the last cursor applied across drops, with
// commits made while it was away, and no gap or duplicate.
func TestSubscribeResumes(t *testing.T) {
	g := newFake(t, "")
	clock := newStepClock()
	o := g.options()
	o.Clock = clock
	c := g.dial(t, o)
	seed(t, g, "d", 3)
	rec := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	done := subscribeAsync(c, ctx, "d", 1, rec.fn)
	if r := g.subReq(t); r.GetDocument() != "d" || r.GetResume()["d"] != 1 || len(r.GetResume()) != 1 {
		t.Fatalf("request = %v", r)
	}
	rec.expect(t, "d@2", "d@3", "caught-up")
	g.addCommit(t, "d")
	rec.expect(t, "d@4")

	g.killSubs(errSlow)
	w := clock.next(t)
	st := c.Status().Subscriptions
	if len(st) != 1 || st[0].State != client.StateBackoff || st[0].ConsecutiveFailures != 1 ||
		status.Code(st[0].LastError) != codes.ResourceExhausted || st[0].Documents["d"] != (client.Cursors{Observed: 4, Applied: 4}) {
		t.Fatalf("status while away = %+v", st)
	}
	g.addCommit(t, "d")
	g.addCommit(t, "d")
	w.fire <- time.Now()
	if r := g.subReq(t); r.GetResume()["d"] != 4 {
		t.Fatalf("resumed from %d, want 4", r.GetResume()["d"])
	}
	rec.expect(t, "d@5", "d@6", "caught-up")
	inside := make(chan client.SubscriptionStatus, 1)
	onEvent := func(client.Event) { inside <- c.Status().Subscriptions[0] }
	rec.on.Store(&onEvent)
	g.addCommit(t, "d")
	rec.expect(t, "d@7")
	// While the callback runs, the gateway has been seen at 7 and 6 is
	// the last applied: a resume would start after 6.
	if st := wait(t, inside, "the status"); st.State != client.StateConnected || st.ConsecutiveFailures != 0 ||
		st.Documents["d"] != (client.Cursors{Observed: 7, Applied: 6}) {
		t.Fatalf("status after resume = %+v", st)
	}
	cancel()
	if err := wait(t, done, "Subscribe"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe returned %v, want context.Canceled", err)
	}
	if len(c.Status().Subscriptions) != 0 {
		t.Fatal("an ended subscription is still listed")
	}
}

// A gateway that replays what the subscriber applied has it dropped; one
// that skips a cursor has the subscription resume from the last applied.
func TestSubscribeDropsDuplicatesAndRefusesGaps(t *testing.T) {
	g := newFake(t, "")
	clock := newStepClock()
	o := g.options()
	o.Clock = clock
	c := g.dial(t, o)
	seed(t, g, "d", 4)
	rec := newRecorder()
	subscribeAsync(c, t.Context(), "d", 0, rec.fn)
	g.subReq(t)
	rec.expect(t, "d@1", "d@2", "d@3", "d@4", "caught-up")

	g.setSkew(-3) // resends 2, 3 and 4
	g.killSubs(errSlow)
	clock.next(t).fire <- time.Now()
	g.subReq(t)
	rec.expect(t, "caught-up")
	if d := c.Status().Subscriptions[0].Duplicates; d != 3 {
		t.Fatalf("duplicates dropped = %d, want 3", d)
	}

	seed(t, g, "d", 2)
	rec.expect(t, "d@5", "d@6")
	g.killSubs(errSlow)
	w := clock.next(t)
	seed(t, g, "d", 2) // 7 and 8, while away
	g.setSkew(+1)      // the gateway resumes after 7: a gap
	w.fire <- time.Now()
	g.subReq(t)
	w = clock.next(t)
	if err := c.Status().Subscriptions[0].LastError; !errors.Is(err, client.ErrCursorGap) {
		t.Fatalf("last error %v, want ErrCursorGap", err)
	}
	g.setSkew(0)
	w.fire <- time.Now()
	if r := g.subReq(t); r.GetResume()["d"] != 6 {
		t.Fatalf("resumed from %d after the gap, want 6", r.GetResume()["d"])
	}
	rec.expect(t, "d@7", "d@8", "caught-up")
}

// A cursor the gateway no longer retains, or one ahead of the document,
// gets a snapshot; the commits after it follow.
func TestSubscribeSnapshots(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	seed(t, g, "d", 3)
	state := commit.Commit{Deltas: []commit.Delta{set("k", "3"), set("other", "x")}}
	g.retain("d", 2, stateProto(t, state))
	rec := newRecorder()
	var snap client.Event
	got := make(chan struct{}, 1)
	fn := func(ev client.Event) error {
		if ev.Kind == client.SnapshotEvent {
			snap = ev
			got <- struct{}{}
		}
		return rec.fn(ev)
	}
	subscribeAsync(c, t.Context(), "d", 1, fn)
	rec.expect(t, "snapshot d@3 expired 2 deltas", "caught-up")
	<-got
	b, _ := canonical(t, state)
	if snap.Root != (client.Root{ID: rootID, Kind: commit.Object}) || string(snap.Encoded) != string(b) {
		t.Fatalf("snapshot = %+v", snap)
	}
	inside := make(chan client.Cursors, 1)
	onEvent := func(client.Event) { inside <- c.Status().Subscriptions[0].Documents["d"] }
	rec.on.Store(&onEvent)
	g.addCommit(t, "d")
	rec.expect(t, "d@4")
	if cur := wait(t, inside, "cursors"); cur != (client.Cursors{Observed: 4, Applied: 3}) {
		t.Fatalf("cursors = %+v, want the snapshot's 3 applied", cur)
	}

	ahead := newRecorder()
	subscribeAsync(c, t.Context(), "d", 99, ahead.fn)
	ahead.expect(t, "snapshot d@4 ahead 2 deltas", "caught-up")
}

// fn's error ends Subscribe with that error; so does a request retrying
// cannot fix, without waiting on the backoff.
func TestSubscribeEnds(t *testing.T) {
	g := newFake(t, "secret-token-1234")
	asked := make(chan int, 4)
	o := g.options()
	o.Token, o.Backoff = "secret-token-1234", recordingBackoff{asked}
	c := g.dial(t, o)
	seed(t, g, "d", 3)
	stop := errors.New("stop here")
	rec := newRecorder()
	rec.fail = map[string]error{"d@2": stop}
	if err := c.Subscribe(t.Context(), "d", 0, rec.fn); !errors.Is(err, stop) {
		t.Fatalf("Subscribe = %v, want the callback's error", err)
	}
	rec.expect(t, "d@1")
	g.subReq(t)

	o.Token = "wrong-token-12345"
	bad := g.dial(t, o)
	err := bad.Subscribe(t.Context(), "d", 0, rec.fn)
	if status.Code(errors.Unwrap(err)) != codes.Unauthenticated {
		t.Fatalf("Subscribe with a bad token = %v, want Unauthenticated", err)
	}
	select {
	case n := <-asked:
		t.Fatalf("the backoff was asked (%d): a refused token must not be retried", n)
	default:
	}

	running := subscribeAsync(c, context.Background(), "d", 3, newRecorder().fn)
	g.subReq(t)
	c.Close()
	if err := wait(t, running, "Subscribe"); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("Subscribe after Close = %v, want ErrClosed", err)
	}
}

// A pattern subscription resumes every document it saw and, after a
// reconnect, starts documents it had not seen with a snapshot.
func TestSubscribePattern(t *testing.T) {
	g := newFake(t, "")
	clock := newStepClock()
	o := g.options()
	o.Clock = clock
	c := g.dial(t, o)
	seed(t, g, "p:a", 2)
	seed(t, g, "p:b", 1)
	seed(t, g, "q", 1)
	rec := newRecorder()
	go c.SubscribePattern(t.Context(), client.Prefix("p:"), client.SubscribeOptions{Resume: map[string]uint64{"p:a": 0}}, rec.fn)
	r := g.subReq(t)
	if r.GetPattern().GetPrefix() != "p:" || r.GetStart() != v1.StartPosition_START_POSITION_LIVE || len(r.GetResume()) != 1 {
		t.Fatalf("request = %v", r)
	}
	rec.expect(t, "p:a@1", "p:a@2", "caught-up")
	g.addCommit(t, "p:b")
	g.addCommit(t, "q")
	rec.expect(t, "p:b@2")

	g.killSubs(errSlow)
	w := clock.next(t)
	seed(t, g, "p:c", 2)
	g.retain("p:c", 0, stateProto(t, commit.Commit{Deltas: []commit.Delta{set("k", "2")}}))
	w.fire <- time.Now()
	r = g.subReq(t)
	if r.GetStart() != v1.StartPosition_START_POSITION_SNAPSHOT || r.GetResume()["p:a"] != 2 || r.GetResume()["p:b"] != 2 || len(r.GetResume()) != 2 {
		t.Fatalf("resume request = %v", r)
	}
	rec.expect(t, "snapshot p:c@2 requested 1 deltas", "caught-up")
	g.addCommit(t, "p:c")
	rec.expect(t, "p:c@3")
	docs := c.Status().Subscriptions[0].Documents
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range docs {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(keys, []string{"p:a", "p:b", "p:c"}) {
		t.Fatalf("followed %v", keys)
	}
}

func TestSubscribePatternResumeBound(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	resume := map[string]uint64{}
	for i := range client.MaxResumeDocuments + 1 {
		resume[fmt.Sprint(i)] = 1
	}
	err := c.SubscribePattern(t.Context(), client.Prefix(""), client.SubscribeOptions{Resume: resume}, newRecorder().fn)
	if !errors.Is(err, client.ErrTooManyResumed) {
		t.Fatalf("got %v, want ErrTooManyResumed", err)
	}
}
