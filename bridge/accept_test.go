package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// refuseSecrets is an accept authority that refuses every commit with a
// delta under "secret", naming the delta's path.
func refuseSecrets(q *v1.Question) *v1.Answer {
	var rs []*v1.Reason
	for _, d := range q.GetAccept().GetCommit().GetDeltas() {
		if p := d.GetPath(); p != nil && len(p.Steps) > 0 && p.Steps[0] == "secret" {
			rs = append(rs, &v1.Reason{Code: "secret-is-read-only", Message: "no", Path: p})
		}
	}
	if len(rs) > 0 {
		return refuse(q.Id, rs...)
	}
	return accept(q.Id)
}

// allowOpens answers every may_open question allowed, on its own stream.
func allowOpens(t *testing.T, e *env) {
	o := openBackend(t, e, "opener", 0)
	o.mustClaim(1, prefix(""), 0, kMayOpen)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	o.serveAccept(ctx, func(q *v1.Question) *v1.Answer {
		return &v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_MayOpen{MayOpen: &v1.MayOpenAnswer{Allowed: true}}}
	})
}

// A backend refuses commits by path over the real gRPC API: the peer that
// made one gets refused with the backend's reasons and its seq, the other
// peer never sees it, and a subscriber sees only the accepted commits with
// gap-free cursors.
func TestBackendRefusesByPath(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	allowOpens(t, e)
	auth := openBackend(t, e, "auth", 0)
	auth.mustClaim(1, prefix("doc"), 0, kAccept)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	auth.serveAccept(ctx, refuseSecrets)

	a := dialPeer(t, e, peer.Options{})
	da, err := a.Share(ctxT(t), "doc1", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	b := dialPeer(t, e, peer.Options{})
	db, err := b.Join(ctxT(t), "doc1")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := e.client.Subscribe(ctxT(t), &v1.SubscribeRequest{Target: &v1.SubscribeRequest_Document{Document: "doc1"}, Start: v1.StartPosition_START_POSITION_LIVE})
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := sub.Recv(); err != nil || ev.GetCaughtUp() == nil {
		t.Fatalf("first event %v, %v; want CaughtUp", ev, err)
	}
	start := cursorOf(t, e.gw, "doc1")

	const n = 10
	var refusedSeqs []uint64
	for i := range n {
		key := "title" + string(rune('a'+i))
		if i%3 == 1 {
			key = "secret"
		}
		seq, err := set(da, key, text(key))
		if err != nil {
			t.Fatal(err)
		}
		if key == "secret" {
			refusedSeqs = append(refusedSeqs, seq)
		}
	}
	for _, want := range refusedSeqs {
		r := nextEvent[peer.Refused](t, da)
		if !r.Mine || r.Seq != want {
			t.Fatalf("refused %+v, want our seq %d", r, want)
		}
		if len(r.Reasons) != 1 || r.Reasons[0].Code != "secret-is-read-only" || strings.Join(r.Reasons[0].Path, "/") != "secret" {
			t.Fatalf("reasons %+v, want the backend's with path secret", r.Reasons)
		}
	}
	accepted := n - len(refusedSeqs)
	for i := range accepted {
		ap := nextEvent[peer.Applied](t, db)
		for _, d := range ap.Commit.Deltas {
			if d.Ref.Key == "secret" {
				t.Fatalf("commit %d: the other peer saw a refused commit", i)
			}
		}
	}
	for i := range accepted {
		ev, err := sub.Recv()
		if err != nil {
			t.Fatal(err)
		}
		c := ev.GetCommit()
		if c == nil || c.Cursor != start+uint64(i)+1 {
			t.Fatalf("event %d is %v, want the commit at cursor %d", i, ev, start+uint64(i)+1)
		}
		if c.Origin.GetPeer() == nil {
			t.Fatalf("origin %v, want a peer", c.Origin)
		}
		for _, d := range c.Commit.Deltas {
			if d.Path.GetSteps()[0] == "secret" {
				t.Fatal("the subscriber saw a refused commit")
			}
		}
	}
	if got := cursorOf(t, e.gw, "doc1"); got != start+uint64(accepted) {
		t.Fatalf("cursor %d, want %d", got, start+uint64(accepted))
	}
	_ = time.Second
}

// A may_open question and an accept question name the peer in full: its
// identity, connection id and address; may_open also carries the root the
// peer stated and whether it asked for state.
func TestQuestionsNameThePeer(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	auth := openBackend(t, e, "auth", 0)
	auth.mustClaim(1, prefix(""), 0, kMayOpen, kAccept)
	asked := make(chan *v1.Question, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	auth.serveAccept(ctx, func(q *v1.Question) *v1.Answer {
		asked <- q
		if q.GetMayOpen() != nil {
			return &v1.Answer{QuestionId: q.Id, Kind: &v1.Answer_MayOpen{MayOpen: &v1.MayOpenAnswer{Allowed: true}}}
		}
		return accept(q.Id)
	})
	a := dialPeer(t, e, peer.Options{})
	d := newDoc()
	da, err := a.Share(ctxT(t), "doc", d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "k", text("v")); err != nil {
		t.Fatal(err)
	}
	var open, judge *v1.Question
	for open == nil || judge == nil {
		select {
		case q := <-asked:
			if q.GetMayOpen() != nil {
				open = q
			} else if q.GetAccept() != nil && !q.GetAccept().GetState() {
				judge = q
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("asked may_open %v, accept %v", open, judge)
		}
	}
	mo := open.GetMayOpen()
	root, _ := d.Root()
	if mo.GetRoot() == nil || string(mo.GetRoot().GetId().GetValue()) != string(root[:]) || mo.GetWant() || mo.GetExists() {
		t.Fatalf("may_open root %v want %v exists %v; want the peer's root, no want, not existing", mo.GetRoot(), mo.GetWant(), mo.GetExists())
	}
	for _, p := range []*v1.Peer{mo.GetPeer(), judge.GetAccept().GetOrigin().GetPeer()} {
		if p.GetConnectionId() == 0 || p.GetRemoteAddr() != "127.0.0.1" || p.GetIdentity() == nil {
			t.Fatalf("peer %v: want its connection id, address 127.0.0.1 and identity", p)
		}
	}
}

// Issue 19: under the closed fallback with no accept claimant, a creating
// peer's state is a write nobody may judge: it is refused no-authority, the
// creator's topic ends with that reason, and nothing is created. (Opens are
// allowed by a may_open claimant, so it is the state that is refused.)
func TestCreatorStateUnderClosedWithNoAuthority(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	allowOpens(t, e)
	d := newDoc()
	root, _ := d.Root()
	if _, err := d.Apply(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("planted"), Value: commit.TextValue("yes")}}}); err != nil {
		t.Fatal(err)
	}
	shared, err := dialPeer(t, e, peer.Options{}).Share(ctxT(t), "doc", d)
	if err == nil {
		if r := endedWith(t, shared.Done(), shared.Err); r != bridge.ReasonNoAuthority {
			t.Fatalf("the creator's topic ended with %q, want no-authority", r)
		}
	} else if protocol.ReasonOf(err) != bridge.ReasonNoAuthority {
		t.Fatalf("share: %v, want no-authority", err)
	}
	if _, _, _, err := e.gw.State(ctxT(t), "doc"); protocol.ReasonOf(err) != protocol.NoDocument {
		t.Fatalf("state after the refused creation: %v, want no-document", err)
	}
}
