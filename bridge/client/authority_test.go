package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge/client"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
	"google.golang.org/protobuf/proto"
)

// claimAsync claims in the background and returns a channel with the
// outcome, so the test can play the gateway meanwhile.
func claimAsync(c *client.Client, p client.Pattern, h client.Handlers) <-chan claimOutcome {
	ch := make(chan claimOutcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		cl, err := c.Claim(ctx, p, h)
		ch <- claimOutcome{cl, err}
	}()
	return ch
}

type claimOutcome struct {
	cl  *client.Claim
	err error
}

// refuseAdmin is the README's rule: no writes under /admin.
func refuseAdmin(_ context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
	var rs []client.Reason
	for _, i := range q.Under("admin") {
		rs = append(rs, client.Refuse("forbidden", "admin is read-only", q.Paths[i]...))
	}
	return rs, nil
}

func TestClaimAndAccept(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	done := claimAsync(c, client.Prefix("board:"), client.Handlers{Accept: refuseAdmin, Timeout: 3 * time.Second})

	fs := g.stream(t)
	h := fs.welcome(t, 9, &v1.Limits{MaxInFlight: 8})
	if h.GetBackend() != "test" || h.GetMaxInFlight() != client.DefaultMaxInFlight {
		t.Fatalf("hello = %v", h)
	}
	cl := fs.grant(t)
	if cl.GetPattern().GetPrefix() != "board:" || !slices.Equal(cl.GetKinds(), []v1.QuestionKind{v1.QuestionKind_QUESTION_KIND_ACCEPT}) ||
		cl.GetTimeout().AsDuration() != 3*time.Second {
		t.Fatalf("claim = %v", cl)
	}
	out := wait(t, done, "the claim")
	if out.err != nil {
		t.Fatalf("Claim: %v", out.err)
	}
	if out.cl.ID() != cl.GetClaimId() {
		t.Fatalf("claim id %d, the gateway saw %d", out.cl.ID(), cl.GetClaimId())
	}

	fs.ask(t,
		acceptQ(t, 1, cl.GetClaimId(), "board:1", commit.Commit{Deltas: []commit.Delta{set("title", "hi")}}),
		acceptQ(t, 2, cl.GetClaimId(), "board:1", commit.Commit{Deltas: []commit.Delta{set("admin", "x"), set("b", "y")}}))
	as := byID(fs.answers(t, 2))
	if a := as[1].GetAccept(); a == nil || !a.GetAccepted() || len(a.GetReasons()) != 0 {
		t.Fatalf("answer 1 = %v, want accepted", as[1])
	}
	a := as[2].GetAccept()
	want := &v1.AcceptAnswer{Reasons: []*v1.Reason{{Code: "forbidden", Message: "admin is read-only", Path: &v1.Path{Steps: []string{"admin"}}}}}
	if !proto.Equal(a, want) {
		t.Fatalf("answer 2 = %v, want %v", a, want)
	}
	st := c.Status()
	if st.State != client.StateConnected || st.StreamID != 9 || st.Limits.MaxInFlight != 8 || len(st.Claims) != 1 || !st.Claims[0].Granted {
		t.Fatalf("status = %+v", st)
	}
}

// The handler sees the commit decoded from its bytes, the typed paths,
// the origin and the question's facts.
func TestAcceptQuestionView(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	seen := make(chan client.AcceptQuestion, 1)
	done := claimAsync(c, client.Exact("doc"), client.Handlers{Accept: func(_ context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
		seen <- q
		return nil, nil
	}})
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	cl := fs.grant(t)
	wait(t, done, "claim")
	cm := commit.Commit{Deltas: []commit.Delta{set("z", "1"), set("a", "2")}, Tag: []byte{1, 2, 3, 4}}
	fs.ask(t, acceptQ(t, 5, cl.GetClaimId(), "doc", cm))
	q := wait(t, seen, "the accept handler")
	b, canon := canonical(t, cm)
	if q.Document != "doc" || q.Cursor != 7 || q.QuestionID != 5 || q.Attempt != 1 || q.Timeout != guard {
		t.Fatalf("question facts = %+v", q.Asked)
	}
	if string(q.Encoded) != string(b) || !slices.EqualFunc(q.Commit.Deltas, canon.Deltas, func(a, b commit.Delta) bool { return a == b }) ||
		string(q.Commit.Tag) != string(canon.Tag) {
		t.Fatalf("commit = %+v", q.Commit)
	}
	if len(q.Paths) != 2 || !slices.Equal(q.Paths[0], []string{"a"}) || !slices.Equal(q.Paths[1], []string{"z"}) {
		t.Fatalf("paths = %v", q.Paths)
	}
	if p := q.Origin.Peer; p == nil || p.Identity.ID != "u1" || !p.Identity.HasRole("editor") || p.ConnectionID != 3 || q.Origin.Backend != nil {
		t.Fatalf("origin = %+v", q.Origin)
	}
	fs.answers(t, 1)
}

func TestClaimRefused(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	done := claimAsync(c, client.Prefix(""), client.Handlers{Accept: refuseAdmin})
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	cl := fs.must(t).GetClaim()
	fs.send(t, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_ClaimResult{ClaimResult: &v1.ClaimResult{
		ClaimId: cl.GetClaimId(), Reasons: []*v1.Reason{{Code: "too-many-claims"}}}}})
	out := wait(t, done, "claim")
	var ce *client.ClaimError
	if !errors.As(out.err, &ce) || len(ce.Reasons) != 1 || ce.Reasons[0].Code != "too-many-claims" {
		t.Fatalf("Claim err = %v, want a ClaimError with too-many-claims", out.err)
	}
	if st := c.Status(); len(st.Claims) != 0 {
		t.Fatalf("a refused claim is still listed: %+v", st.Claims)
	}
	// A question for it now is answered with a Failure, not dropped.
	fs.ask(t, acceptQ(t, 1, cl.GetClaimId(), "d", commit.Commit{Deltas: []commit.Delta{set("a", "b")}}))
	if f := fs.answers(t, 1)[0].GetFailure(); f == nil {
		t.Fatal("a question for a refused claim was not answered with a Failure")
	}
}

func TestClaimArgumentsRefused(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	ctx := context.Background()
	if _, err := c.Claim(ctx, client.Prefix("x"), client.Handlers{}); err == nil {
		t.Error("a claim with no handler was accepted")
	}
	long := make([]byte, client.MaxPatternBytes+1)
	if _, err := c.Claim(ctx, client.Exact(string(long)), client.Handlers{Accept: refuseAdmin}); err == nil {
		t.Error("an over-long pattern was accepted")
	}
	if st := c.Status(); st.State != client.StateIdle {
		t.Errorf("a refused claim opened the stream: %v", st.State)
	}
}

// Handlers run concurrently, at most MaxInFlight at once; answers go back
// by id in the order they finish; past the queue the answer is a Failure.
func TestHandlersBoundedAndOutOfOrder(t *testing.T) {
	g := newFake(t, "")
	o := g.options()
	o.MaxInFlight = 2
	c := g.dial(t, o)
	var running, peak atomic.Int32
	release := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{}), "c": make(chan struct{}), "d": make(chan struct{})}
	started := make(chan string, 8)
	done := claimAsync(c, client.Prefix(""), client.Handlers{Accept: func(ctx context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		started <- q.Document
		select {
		case <-release[q.Document]:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return nil, nil
	}})
	fs := g.stream(t)
	fs.welcome(t, 1, &v1.Limits{MaxInFlight: 10}) // the client's 2 is lower
	cl := fs.grant(t)
	wait(t, done, "claim")
	cm := commit.Commit{Deltas: []commit.Delta{set("k", "v")}}
	fs.ask(t, acceptQ(t, 1, cl.GetClaimId(), "a", cm), acceptQ(t, 2, cl.GetClaimId(), "b", cm),
		acceptQ(t, 3, cl.GetClaimId(), "c", cm), acceptQ(t, 4, cl.GetClaimId(), "d", cm),
		acceptQ(t, 5, cl.GetClaimId(), "e", cm))
	// 2 run, 2 queue, the fifth is over the bound.
	over := fs.answers(t, 1)[0]
	if over.GetQuestionId() != 5 || over.GetFailure() == nil {
		t.Fatalf("the fifth question got %v, want a Failure", over)
	}
	first := []string{wait(t, started, "a start"), wait(t, started, "a start")}
	slices.Sort(first)
	if !slices.Equal(first, []string{"a", "b"}) {
		t.Fatalf("started %v first, want a and b", first)
	}
	close(release["b"]) // b finishes first; c takes its slot
	if a := fs.answers(t, 1)[0]; a.GetQuestionId() != 2 || !a.GetAccept().GetAccepted() {
		t.Fatalf("got %v, want question 2 accepted", a)
	}
	if s := wait(t, started, "c"); s != "c" {
		t.Fatalf("%s started, want c", s)
	}
	close(release["c"])
	close(release["a"])
	close(release["d"])
	got := byID(fs.answers(t, 3))
	for _, id := range []uint64{1, 3, 4} {
		if !got[id].GetAccept().GetAccepted() {
			t.Fatalf("question %d: %v", id, got[id])
		}
	}
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak concurrency %d, want 2", p)
	}
}

// A withdrawn question's handler is cancelled and its answer never sent.
func TestWithdrawCancelsHandler(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	cancelled := make(chan error, 1)
	done := claimAsync(c, client.Prefix(""), client.Handlers{Accept: func(ctx context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
		if q.Document == "slow" {
			<-ctx.Done()
			cancelled <- ctx.Err()
			return nil, nil // would accept: must not be sent
		}
		return nil, nil
	}})
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	cl := fs.grant(t)
	wait(t, done, "claim")
	cm := commit.Commit{Deltas: []commit.Delta{set("k", "v")}}
	fs.ask(t, acceptQ(t, 1, cl.GetClaimId(), "slow", cm))
	fs.send(t, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Withdrawn{Withdrawn: &v1.Withdrawn{
		QuestionIds: []uint64{1}, Reason: v1.WithdrawReason_WITHDRAW_REASON_TIMEOUT}}})
	if err := wait(t, cancelled, "the cancellation"); !errors.Is(err, context.Canceled) {
		t.Fatalf("handler ctx ended with %v", err)
	}
	fs.ask(t, acceptQ(t, 2, cl.GetClaimId(), "fast", cm))
	if a := fs.answers(t, 1)[0]; a.GetQuestionId() != 2 {
		t.Fatalf("got an answer for %d, want only 2's", a.GetQuestionId())
	}
}

// Handler errors, panics, reasons without a code and commits whose two
// forms disagree all answer with a Failure: the gateway refuses.
func TestFailuresFailClosed(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	done := claimAsync(c, client.Prefix(""), client.Handlers{Accept: func(_ context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
		switch q.Document {
		case "error":
			return nil, errors.New("store down")
		case "panic":
			panic("boom")
		case "nocode":
			return []client.Reason{{Message: "no code"}}, nil
		}
		return nil, nil
	}})
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	cl := fs.grant(t)
	wait(t, done, "claim")
	cm := commit.Commit{Deltas: []commit.Delta{set("k", "v")}}
	lying := acceptQ(t, 4, cl.GetClaimId(), "lying", cm)
	lying.GetAccept().GetCommit().GetDeltas()[0].Value = &v1.Value{Kind: &v1.Value_TextValue{TextValue: "other"}}
	undecodable := acceptQ(t, 5, cl.GetClaimId(), "bytes", cm)
	undecodable.GetAccept().GetCommit().Encoded = []byte{0xff}
	loadQ := &v1.Question{Id: 6, ClaimId: cl.GetClaimId(), Kind: &v1.Question_Load{Load: &v1.LoadQuestion{Document: "x"}}}
	fs.ask(t, acceptQ(t, 1, cl.GetClaimId(), "error", cm), acceptQ(t, 2, cl.GetClaimId(), "panic", cm),
		acceptQ(t, 3, cl.GetClaimId(), "nocode", cm), lying, undecodable, loadQ)
	got := byID(fs.answers(t, 6))
	for id := uint64(1); id <= 6; id++ {
		if got[id].GetFailure() == nil {
			t.Errorf("question %d: %v, want a Failure", id, got[id])
		}
	}
	if m := got[1].GetFailure().GetMessage(); m != "store down" {
		t.Errorf("the error's message is %q", m)
	}
}

// Load, identify, may-open and call answers have the proto's shapes.
func TestOtherQuestionKinds(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	state := commit.Commit{Deltas: []commit.Delta{set("title", "saved")}}
	progressed := make(chan error, 1)
	done := claimAsync(c, client.Prefix(""), client.Handlers{
		Load: func(_ context.Context, q client.LoadQuestion) (*client.Loaded, error) {
			if q.Document == "missing" {
				return nil, nil
			}
			return &client.Loaded{State: client.State{Root: client.Root{ID: rootID, Kind: commit.Object}, Commit: state}, Cursor: 41}, nil
		},
		Identify: func(_ context.Context, q client.IdentifyQuestion) (*client.Identity, []client.Reason, error) {
			if q.Handshake.Header.Get("Cookie") != "session=ok" {
				return nil, []client.Reason{client.Refuse("unauthenticated", "no session")}, nil
			}
			return &client.Identity{ID: "u7", Roles: []string{"admin"}}, nil, nil
		},
		MayOpen: func(_ context.Context, q client.MayOpenQuestion) ([]client.Reason, error) {
			if q.Root == nil || q.Root.ID != rootID || !q.Want || q.Exists {
				return nil, errors.New("unexpected question")
			}
			if !q.Peer.Identity.HasRole("admin") {
				return []client.Reason{client.Refuse("forbidden", "")}, nil
			}
			return nil, nil
		},
		Call: func(_ context.Context, q client.CallQuestion, progress func(json.RawMessage) error) (json.RawMessage, error) {
			switch q.Name {
			case "refuse":
				return nil, &client.CallError{Reason: "refused", Message: "no", Reasons: []client.Reason{client.Refuse("quota", "")}}
			case "bad":
				return json.RawMessage("{not json"), nil
			}
			progressed <- progress(json.RawMessage(`{"step":1}`))
			return append([]byte(`{"echo":`), append(q.Args, '}')...), nil
		},
	})
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	cl := fs.grant(t)
	if len(cl.GetKinds()) != 4 {
		t.Fatalf("kinds = %v", cl.GetKinds())
	}
	wait(t, done, "claim")
	id := cl.GetClaimId()
	peer := &v1.Peer{Identity: &v1.Identity{Id: "u7", Roles: []string{"admin"}}, ConnectionId: 2}
	fs.ask(t,
		&v1.Question{Id: 1, ClaimId: id, Kind: &v1.Question_Load{Load: &v1.LoadQuestion{Document: "d"}}},
		&v1.Question{Id: 2, ClaimId: id, Kind: &v1.Question_Load{Load: &v1.LoadQuestion{Document: "missing"}}},
		&v1.Question{Id: 3, ClaimId: id, Kind: &v1.Question_Identify{Identify: &v1.IdentifyQuestion{Handshake: &v1.Handshake{
			Path: "/ws", Headers: []*v1.Header{{Name: "cookie", Values: []string{"session=ok"}}}}}}},
		&v1.Question{Id: 4, ClaimId: id, Kind: &v1.Question_Identify{Identify: &v1.IdentifyQuestion{Handshake: &v1.Handshake{Path: "/ws"}}}},
		&v1.Question{Id: 5, ClaimId: id, Kind: &v1.Question_MayOpen{MayOpen: &v1.MayOpenQuestion{Document: "d", Peer: peer, Root: rootProto(), Want: true}}},
		&v1.Question{Id: 6, ClaimId: id, Kind: &v1.Question_MayOpen{MayOpen: &v1.MayOpenQuestion{Document: "d", Peer: &v1.Peer{}, Root: rootProto(), Want: true}}},
	)
	got := byID(fs.answers(t, 6))
	la := got[1].GetLoad()
	if !la.GetFound() || la.GetCursor() != 41 || !proto.Equal(la.GetState().GetRoot(), rootProto()) {
		t.Fatalf("load = %v", la)
	}
	if b, _ := canonical(t, state); string(la.GetState().GetCommit().GetEncoded()) != string(b) {
		t.Fatal("the loaded state's bytes differ")
	}
	if l := got[2].GetLoad(); l == nil || l.GetFound() {
		t.Fatalf("missing load = %v", got[2])
	}
	if ia := got[3].GetIdentify(); !ia.GetAdmitted() || ia.GetIdentity().GetId() != "u7" {
		t.Fatalf("identify = %v", got[3])
	}
	if ia := got[4].GetIdentify(); ia.GetAdmitted() || ia.GetReasons()[0].GetCode() != "unauthenticated" || ia.GetIdentity() != nil {
		t.Fatalf("refused identify = %v", got[4])
	}
	if ma := got[5].GetMayOpen(); !ma.GetAllowed() {
		t.Fatalf("may-open = %v", got[5])
	}
	if ma := got[6].GetMayOpen(); ma.GetAllowed() || ma.GetReasons()[0].GetCode() != "forbidden" {
		t.Fatalf("refused may-open = %v", got[6])
	}

	// Calls: progress first, then the result, in that order.
	fs.ask(t, &v1.Question{Id: 7, ClaimId: id, Kind: &v1.Question_Call{Call: &v1.CallQuestion{Name: "echo", ArgsJson: `[1,2]`}}})
	calls := fs.answers(t, 2)
	if p := calls[0].GetCallProgress(); p.GetProgressJson() != `{"step":1}` {
		t.Fatalf("first call answer = %v, want progress", calls[0])
	}
	if r := calls[1].GetCall().GetResultJson(); r != `{"echo":[1,2]}` {
		t.Fatalf("call result = %v", calls[1])
	}
	if err := wait(t, progressed, "progress"); err != nil {
		t.Fatalf("progress: %v", err)
	}
	fs.ask(t, &v1.Question{Id: 8, ClaimId: id, Kind: &v1.Question_Call{Call: &v1.CallQuestion{Name: "refuse"}}},
		&v1.Question{Id: 9, ClaimId: id, Kind: &v1.Question_Call{Call: &v1.CallQuestion{Name: "bad"}}})
	got = byID(fs.answers(t, 2))
	if e := got[8].GetCall().GetError(); e.GetReason() != "refused" || e.GetReasons()[0].GetCode() != "quota" {
		t.Fatalf("refused call = %v", got[8])
	}
	if got[9].GetFailure() == nil {
		t.Fatalf("a non-JSON result got %v, want a Failure", got[9])
	}
}

// With InlineAccept, Accept runs on the stream's receive loop: questions
// are judged one after another, in the order asked, and each is answered;
// a panic is a Failure, as on a goroutine of its own.
func TestInlineAcceptJudgesInOrder(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	var running, returned atomic.Int32
	var overlapped atomic.Bool
	done := claimAsync(c, client.Prefix(""), client.Handlers{InlineAccept: true, Accept: func(ctx context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
		if running.Add(1) > 1 {
			overlapped.Store(true)
		}
		defer running.Add(-1)
		if want := int32(q.QuestionID - 1); returned.Load() != want {
			t.Errorf("question %d judged after %d returned, want %d", q.QuestionID, returned.Load(), want)
		}
		defer returned.Add(1)
		switch q.Document {
		case "panics":
			panic("boom")
		case "refused":
			return []client.Reason{{Code: "no"}}, nil
		}
		return nil, nil
	}})
	fs := g.stream(t)
	fs.welcome(t, 1, nil)
	cl := fs.grant(t)
	wait(t, done, "claim")
	cm := commit.Commit{Deltas: []commit.Delta{set("k", "v")}}
	fs.ask(t, acceptQ(t, 1, cl.GetClaimId(), "a", cm), acceptQ(t, 2, cl.GetClaimId(), "refused", cm),
		acceptQ(t, 3, cl.GetClaimId(), "panics", cm), acceptQ(t, 4, cl.GetClaimId(), "b", cm))
	got := byID(fs.answers(t, 4))
	if !got[1].GetAccept().GetAccepted() || !got[4].GetAccept().GetAccepted() {
		t.Errorf("a and b: %v, %v, want accepted", got[1], got[4])
	}
	if r := got[2].GetAccept(); r == nil || r.GetAccepted() || len(r.GetReasons()) != 1 {
		t.Errorf("refused: %v", got[2])
	}
	if got[3].GetFailure() == nil {
		t.Errorf("the panic answered %v, want a Failure", got[3])
	}
	if overlapped.Load() {
		t.Error("two inline Accepts ran at once")
	}
}
