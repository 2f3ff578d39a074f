package bridge_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/soak"
	"github.com/weftgate/weftgate/peer"
)

// soakRounds runs one round of f in CI, and more under WEFTGATE_SOAK, each
// on a fresh gateway and bridge.
func soakRounds(t *testing.T, f func(*testing.T)) {
	start := time.Now()
	for round := 0; soak.Until(start, round, 1); round++ {
		if !t.Run(fmt.Sprintf("round-%d", round), f) {
			return
		}
	}
}

// holdCommits shares doc, commits n keys, and waits until the backend
// holds all n accept questions unanswered.
func holdCommits(t *testing.T, e *env, held *backend, n int) (*peer.Doc, []uint64, uint64) {
	t.Helper()
	p := dialPeer(t, e, peer.Options{})
	d, err := p.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	start := cursorOf(t, e.gw, "doc")
	var seqs []uint64
	for i := range n {
		seq, err := set(d, fmt.Sprintf("k%d", i), text("v"))
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	for range n {
		if q := held.nextQuestion(); q.GetAccept() == nil || q.Attempt != 1 {
			t.Fatalf("question %v, want a first accept", q)
		}
	}
	return d, seqs, start
}

// Under closed, commits in flight when their claimant's stream is cut go
// to the next claimant, which decides: nothing lands without its verdict.
func TestCutStreamClosedAsksTheNextClaimant(t *testing.T) {
	soakRounds(t, testCutStreamClosedAsksTheNextClaimant)
}

func testCutStreamClosedAsksTheNextClaimant(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	allowOpens(t, e)
	first := openBackend(t, e, "first", 0)
	first.mustClaim(1, prefix(""), 0, kAccept)
	second := openBackend(t, e, "second", 0)
	second.mustClaim(1, prefix(""), 0, kAccept)
	const n = 8
	d, seqs, start := holdCommits(t, e, first, n)
	first.cut()
	// The second claimant gets each again, attempt 2; nothing landed yet.
	var qs []*v1.Question
	for range n {
		q := second.nextQuestion()
		if q.Attempt != 2 || q.GetAccept() == nil {
			t.Fatalf("question %v, want an accept at attempt 2", q)
		}
		qs = append(qs, q)
	}
	if got := cursorOf(t, e.gw, "doc"); got != start {
		t.Fatalf("cursor %d before any verdict, want %d", got, start)
	}
	// It accepts the even ones and refuses the odd ones, answering backwards.
	for i := len(qs) - 1; i >= 0; i-- {
		if i%2 == 0 {
			second.answer(accept(qs[i].Id))
		} else {
			second.answer(refuse(qs[i].Id, &v1.Reason{Code: "odd"}))
		}
	}
	for i := 1; i < n; i += 2 {
		r := nextEvent[peer.Refused](t, d)
		if r.Seq != seqs[i] || r.Reasons[0].Code != "odd" {
			t.Fatalf("refused %+v, want seq %d odd", r, seqs[i])
		}
	}
	waitCursor(t, e.gw, "doc", start+n/2)
	keys := keysOf(t, e, "doc")
	for i := range n {
		_, ok := keys[fmt.Sprintf("k%d", i)]
		if ok != (i%2 == 0) {
			t.Fatalf("key k%d present %v: %v", i, ok, keys)
		}
	}
	if got := cursorOf(t, e.gw, "doc"); got != start+n/2 {
		t.Fatalf("cursor %d, want %d: each accepted commit applied once", got, start+n/2)
	}
}

// Under closed with no other claimant, the fallback refuses every commit in
// flight: none is applied.
func TestCutStreamClosedRefusesWithoutClaimant(t *testing.T) {
	soakRounds(t, testCutStreamClosedRefusesWithoutClaimant)
}

func testCutStreamClosedRefusesWithoutClaimant(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	allowOpens(t, e)
	only := openBackend(t, e, "only", 0)
	only.mustClaim(1, prefix(""), 0, kAccept)
	if b := backendNamed(e.b, "only"); b.State != "connected" || b.Claims != 1 {
		t.Fatalf("backend %+v, want connected with one claim", b)
	}
	const n = 6
	d, seqs, start := holdCommits(t, e, only, n)
	only.cut()
	for _, want := range seqs {
		r := nextEvent[peer.Refused](t, d)
		if r.Seq != want || len(r.Reasons) != 1 || r.Reasons[0].Code != string(bridge.ReasonAuthorityTimeout) {
			t.Fatalf("refused %+v, want seq %d authority-timeout", r, want)
		}
	}
	// The status of a backend whose stream was cut says so.
	if b := backendNamed(e.b, "only"); b.State != "disconnected" || b.ConsecutiveFailures < 1 || b.LastError == "" {
		t.Fatalf("backend %+v, want disconnected with its failure", b)
	}
	if got := cursorOf(t, e.gw, "doc"); got != start {
		t.Fatalf("cursor %d, want %d: nothing applied", got, start)
	}
	// A document nobody claims any more is refused no-authority.
	if _, err := set(d, "later", text("x")); err != nil {
		t.Fatal(err)
	}
	if r := nextEvent[peer.Refused](t, d); r.Reasons[0].Code != string(bridge.ReasonNoAuthority) {
		t.Fatalf("refused %+v, want no-authority", r)
	}
}

// Under open, commits in flight on a cut stream with no other claimant are
// accepted by the fallback, each applied exactly once.
func TestCutStreamOpenAppliesEachOnce(t *testing.T) {
	e := startEnv(t, envOpts{})
	only := openBackend(t, e, "only", 0)
	only.mustClaim(1, prefix(""), 0, kAccept)
	const n = 6
	_, _, start := holdCommits(t, e, only, n)
	only.cut()
	waitCursor(t, e.gw, "doc", start+n)
	if got := cursorOf(t, e.gw, "doc"); got != start+n {
		t.Fatalf("cursor %d, want %d", got, start+n)
	}
	if keys := keysOf(t, e, "doc"); len(keys) != n {
		t.Fatalf("keys %v, want %d", keys, n)
	}
	_ = context.Background
}

func backendNamed(b *bridge.Server, name string) bridge.BackendStatus {
	for _, s := range b.Backends() {
		if s.Backend == name {
			return s
		}
	}
	return bridge.BackendStatus{}
}
