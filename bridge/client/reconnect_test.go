package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge/client"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestExponentialBackoff(t *testing.T) {
	top := func(n int64) int64 { return n - 1 }
	e := client.Exponential{Base: 100 * time.Millisecond, Max: 30 * time.Second, Int64N: top}
	want := []time.Duration{0, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000}
	for n, w := range want {
		w *= time.Millisecond
		if got := e.Ceiling(n); got != w {
			t.Errorf("Ceiling(%d) = %v, want %v", n, got, w)
		}
		if got := e.Delay(n); got != w {
			t.Errorf("Delay(%d) at the top of the jitter = %v, want %v", n, got, w)
		}
	}
	if got := e.Ceiling(1000); got != 30*time.Second {
		t.Errorf("Ceiling(1000) = %v: the doubling must stop at Max", got)
	}
	e.Int64N = func(int64) int64 { return 0 }
	if got := e.Delay(5); got != 0 {
		t.Errorf("full jitter may wait 0, got %v", got)
	}
	// The real source stays within [0, ceiling].
	real := client.Exponential{Base: 100 * time.Millisecond, Max: 30 * time.Second}
	for n := 1; n < 15; n++ {
		for range 50 {
			if d := real.Delay(n); d < 0 || d > real.Ceiling(n) {
				t.Fatalf("Delay(%d) = %v outside [0, %v]", n, d, real.Ceiling(n))
			}
		}
	}
}

// The stream comes back after failures with the backoff asked about each
// consecutive failure, claims everything again, and a Welcome resets the
// count.
func TestReconnectReclaims(t *testing.T) {
	g := newFake(t, "")
	clock := newStepClock()
	asked := make(chan int, 16)
	o := g.options()
	o.Clock, o.Backoff = clock, recordingBackoff{asked}
	c := g.dial(t, o)
	accept := client.Handlers{Accept: func(context.Context, client.AcceptQuestion) ([]client.Reason, error) { return nil, nil }}
	d1 := claimAsync(c, client.Prefix("a:"), accept)
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	c1 := fs.grant(t)
	wait(t, d1, "claim 1")
	d2 := claimAsync(c, client.Exact("b"), accept)
	c2 := fs.grant(t)
	wait(t, d2, "claim 2")

	fs.close(errUnavailable)
	if n := wait(t, asked, "backoff"); n != 1 {
		t.Fatalf("first failure asked the backoff about %d", n)
	}
	w := clock.next(t)
	if w.d != time.Millisecond {
		t.Fatalf("waited %v, want the backoff's 1ms", w.d)
	}
	st := c.Status()
	if st.State != client.StateBackoff || st.ConsecutiveFailures != 1 || status.Code(st.LastError) != codes.Unavailable {
		t.Fatalf("status in backoff = %+v", st)
	}
	w.fire <- time.Now()

	// The next stream fails before its Welcome: two in a row.
	g.stream(t).close(errUnavailable)
	if n := wait(t, asked, "backoff"); n != 2 {
		t.Fatalf("second failure asked about %d", n)
	}
	clock.next(t).fire <- time.Now()

	fs = g.stream(t)
	fs.welcome(t, 2, nil)
	r1, r2 := fs.grant(t), fs.grant(t)
	if r1.GetClaimId() != c1.GetClaimId() || r1.GetPattern().GetPrefix() != "a:" ||
		r2.GetClaimId() != c2.GetClaimId() || r2.GetPattern().GetExact() != "b" {
		t.Fatalf("re-claimed %v and %v, want the first stream's claims", r1, r2)
	}
	fs.ask(t, acceptQ(t, 1, r2.GetClaimId(), "b", commit.Commit{Deltas: []commit.Delta{set("k", "v")}}))
	if a := fs.answers(t, 1)[0]; !a.GetAccept().GetAccepted() {
		t.Fatalf("after the reconnect: %v", a)
	}
	st = c.Status()
	if st.State != client.StateConnected || st.ConsecutiveFailures != 0 || st.Connects != 2 || st.StreamID != 2 || len(st.Claims) != 2 {
		t.Fatalf("status after reconnect = %+v", st)
	}
	fs.close(errUnavailable)
	if n := wait(t, asked, "backoff"); n != 1 {
		t.Fatalf("after a Welcome the count restarts at 1, got %d", n)
	}
	clock.next(t).fire <- time.Now()
	g.stream(t).welcome(t, 3, nil)
}

// A gateway that does not start with Welcome breaks the protocol; the
// stream is dropped and retried.
func TestNoWelcomeIsProtocolError(t *testing.T) {
	g := newFake(t, "")
	asked := make(chan int, 4)
	o := g.options()
	o.Backoff = recordingBackoff{asked}
	c := g.dial(t, o)
	claimAsync(c, client.Prefix(""), client.Handlers{Accept: refuseAdmin})
	fs := g.stream(t)
	fs.must(t)
	fs.send(t, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Released{Released: &v1.Released{ClaimId: 1}}})
	wait(t, asked, "backoff")
	if err := c.Status().LastError; !errors.Is(err, client.ErrProtocol) {
		t.Fatalf("last error %v, want ErrProtocol", err)
	}
	g.stream(t).welcome(t, 2, nil)
}

func TestStreamWrite(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	type res struct {
		r   client.WriteResult
		err error
	}
	cm := commit.Commit{Deltas: []commit.Delta{set("title", "x")}}
	out := make(chan res, 1)
	go func() {
		r, err := c.StreamWriteCommit(context.Background(), "doc", cm, client.WriteOptions{
			ExpectedCursor: client.Expect(0), CreateRoot: &client.Root{ID: rootID, Kind: commit.Object}, Label: "import-1"})
		out <- res{r, err}
	}()
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	w := fs.must(t).GetWrite()
	cw := w.GetCommit()
	b, _ := canonical(t, cm)
	if w.GetWriteId() == 0 || cw.GetDocument() != "doc" || cw.ExpectedCursor == nil || *cw.ExpectedCursor != 0 ||
		string(cw.GetCommit().GetEncoded()) != string(b) || len(cw.GetCommit().GetDeltas()) != 0 ||
		cw.GetCreateRoot().GetKind() != v1.Kind_KIND_OBJECT || cw.GetLabel() != "import-1" {
		t.Fatalf("write = %v", w)
	}
	fs.send(t, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_WriteAck{WriteAck: &v1.WriteAck{WriteId: w.GetWriteId(),
		Result: &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_APPLIED, Cursor: 1, Commit: both(t, cm)}}}})
	r := wait(t, out, "the write")
	if r.err != nil || r.r.Status != client.WriteApplied || r.r.Cursor != 1 || r.r.Applied == nil ||
		len(r.r.Applied.Paths) != 1 || r.r.Applied.Paths[0][0] != "title" {
		t.Fatalf("result = %+v, %v", r.r, r.err)
	}

	// A state write refused, then one whose stream ends first.
	go func() {
		r, err := c.StreamReplaceState(context.Background(), "doc", client.State{Root: client.Root{ID: rootID, Kind: commit.Object}}, client.WriteOptions{})
		out <- res{r, err}
	}()
	w = fs.must(t).GetWrite()
	if w.GetState().GetState().GetCommit() != nil || w.GetState().GetDocument() != "doc" {
		t.Fatalf("state write = %v", w)
	}
	fs.send(t, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_WriteAck{WriteAck: &v1.WriteAck{WriteId: w.GetWriteId(),
		Result: &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_REFUSED, Cursor: 1, Reasons: []*v1.Reason{{Code: "root-mismatch"}}}}}})
	r = wait(t, out, "the state write")
	if r.err != nil || r.r.Status != client.WriteRefused || r.r.Reasons[0].Code != "root-mismatch" {
		t.Fatalf("refused result = %+v, %v", r.r, r.err)
	}
	go func() {
		r, err := c.StreamWriteCommit(context.Background(), "doc", cm, client.WriteOptions{})
		out <- res{r, err}
	}()
	fs.must(t)
	fs.close(errUnavailable)
	if r := wait(t, out, "the lost write"); !errors.Is(r.err, client.ErrOutcomeUnknown) {
		t.Fatalf("a write whose stream ended: %v, want ErrOutcomeUnknown", r.err)
	}
	g.stream(t).welcome(t, 2, nil)
}

// Release waits for Released; questions for the claim after it are
// answered with a Failure.
func TestRelease(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	d := claimAsync(c, client.Prefix(""), client.Handlers{Accept: refuseAdmin})
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	cl := fs.grant(t)
	claim := wait(t, d, "claim").cl
	released := make(chan error, 1)
	go func() { released <- claim.Release(context.Background()) }()
	if r := fs.must(t).GetRelease(); r.GetClaimId() != cl.GetClaimId() {
		t.Fatalf("got %v, want a Release", r)
	}
	// A question asked before the gateway saw the Release is still answered.
	fs.ask(t, acceptQ(t, 1, cl.GetClaimId(), "d", commit.Commit{Deltas: []commit.Delta{set("k", "v")}}))
	if a := fs.answers(t, 1)[0]; !a.GetAccept().GetAccepted() {
		t.Fatalf("a question before Released: %v", a)
	}
	fs.send(t, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Released{Released: &v1.Released{ClaimId: cl.GetClaimId()}}})
	if err := wait(t, released, "Release"); err != nil {
		t.Fatal(err)
	}
	if len(c.Status().Claims) != 0 {
		t.Fatal("a released claim is still listed")
	}
	fs.ask(t, acceptQ(t, 2, cl.GetClaimId(), "d", commit.Commit{Deltas: []commit.Delta{set("k", "v")}}))
	if a := fs.answers(t, 1)[0]; a.GetFailure() == nil {
		t.Fatalf("a question after Released: %v, want a Failure", a)
	}
}

// Close half-closes the stream, cancels running handlers, and returns
// once everything stopped (TestMain checks no goroutine is left).
func TestCloseHalfCloses(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	running := make(chan struct{})
	cancelled := make(chan struct{})
	d := claimAsync(c, client.Prefix(""), client.Handlers{Accept: func(ctx context.Context, _ client.AcceptQuestion) ([]client.Reason, error) {
		close(running)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}})
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	cl := fs.grant(t)
	wait(t, d, "claim")
	fs.ask(t, acceptQ(t, 1, cl.GetClaimId(), "d", commit.Commit{Deltas: []commit.Delta{set("k", "v")}}))
	wait(t, running, "the handler")
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, ok := fs.next(t); ok {
		t.Fatal("the stream carried more after Close, want only the half-close")
	}
	wait(t, cancelled, "the handler's cancellation")
	if st := c.Status(); st.State != client.StateClosed {
		t.Fatalf("state after Close = %v", st.State)
	}
	if _, err := c.Claim(context.Background(), client.Prefix(""), client.Handlers{Accept: refuseAdmin}); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("Claim after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// A Claim made while the stream is down is sent when it comes back; one
// whose context ends first returns the stream's last error with it.
func TestClaimWaitsForStream(t *testing.T) {
	g := newFake(t, "")
	clock := newStepClock()
	o := g.options()
	o.Clock = clock
	c := g.dial(t, o)
	d := claimAsync(c, client.Prefix("x"), client.Handlers{Accept: refuseAdmin})
	g.stream(t).close(errUnavailable)
	w := clock.next(t)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Claim(ctx, client.Prefix("y"), client.Handlers{Accept: refuseAdmin}); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "Unavailable") {
		t.Fatalf("a cancelled Claim: %v", err)
	}
	w.fire <- time.Now()
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	if p := fs.grant(t).GetPattern().GetPrefix(); p != "x" {
		t.Fatalf("claimed %q, want only x (y was given up)", p)
	}
	if out := wait(t, d, "claim"); out.err != nil {
		t.Fatal(out.err)
	}
}
