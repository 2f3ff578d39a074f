package gateway_test

import (
	"sync"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
)

// silentAuthority accepts at once every commit but those writing a key
// that starts with "silent", whose replies it keeps and never calls itself.
type silentAuthority struct {
	gateway.Policy
	mu      sync.Mutex
	replies []func(gateway.Verdict)
}

func (a *silentAuthority) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	if d := req.Commit.Deltas[0]; d.Ref.Kind == commit.Object && len(d.Ref.Key) >= 6 && d.Ref.Key[:6] == "silent" {
		a.mu.Lock()
		a.replies = append(a.replies, reply)
		a.mu.Unlock()
		return
	}
	reply(gateway.Verdict{})
}

// A commit the authority never answers is refused with authority-timeout
// after JudgeTimeout, in order with the ones around it, and a verdict that
// comes after that changes nothing.
func TestJudgeTimeoutRefusesInOrder(t *testing.T) {
	auth := &silentAuthority{}
	ts := startGateway(t, gateway.Config{Authority: auth, JudgeTimeout: 300 * time.Millisecond})
	da, db := sharedPair(t, ts.url, "doc")
	var silent []uint64
	for _, k := range []string{"ok1", "silent1", "silent2", "ok2"} {
		seq, err := set(da, k, text(k))
		if err != nil {
			t.Fatal(err)
		}
		if k[0] == 's' {
			silent = append(silent, seq)
		}
	}
	for _, want := range silent {
		r := nextEvent[peer.Refused](t, da)
		if !r.Mine || r.Seq != want || len(r.Reasons) != 1 || r.Reasons[0].Code != string(gateway.ReasonAuthorityTimeout) {
			t.Fatalf("refused %+v, want seq %d with %s", r, want, gateway.ReasonAuthorityTimeout)
		}
	}
	got := waitApplied(t, db, 2)
	if got[0].Commit.Deltas[0].Ref.Key != "ok1" || got[1].Commit.Deltas[0].Ref.Key != "ok2" {
		t.Fatalf("b saw %v and %v, want ok1 then ok2", got[0].Commit.Deltas[0].Ref.Key, got[1].Commit.Deltas[0].Ref.Key)
	}
	// The authority wakes up and accepts what it was asked: too late.
	auth.mu.Lock()
	late := auth.replies
	auth.mu.Unlock()
	if len(late) != 2 {
		t.Fatalf("%d silent questions, want 2", len(late))
	}
	for _, reply := range late {
		reply(gateway.Verdict{})
	}
	if _, err := set(da, "ok3", text("ok3")); err != nil {
		t.Fatal(err)
	}
	if got := waitApplied(t, db, 1); got[0].Commit.Deltas[0].Ref.Key != "ok3" {
		t.Fatalf("b saw %v after the late verdicts, want ok3", got[0].Commit.Deltas[0].Ref.Key)
	}
	if _, _, cursor, _ := ts.State(ctxT(t), "doc"); cursor != 3 {
		t.Fatalf("cursor %d, want 3: no late verdict lands a commit", cursor)
	}
	// A question asked after the others expired has its own deadline.
	seq, err := set(da, "silent3", text("silent3"))
	if err != nil {
		t.Fatal(err)
	}
	if r := nextEvent[peer.Refused](t, da); r.Seq != seq || r.Reasons[0].Code != string(gateway.ReasonAuthorityTimeout) {
		t.Fatalf("refused %+v, want seq %d with %s", r, seq, gateway.ReasonAuthorityTimeout)
	}
}
