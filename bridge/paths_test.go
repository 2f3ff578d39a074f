package bridge_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/peer"
)

// pathsOf is a commit's delta paths as one comparable string.
func pathsOf(c *v1.Commit) string {
	var b strings.Builder
	for _, d := range c.GetDeltas() {
		fmt.Fprintf(&b, "[%s]", strings.Join(d.GetPath().GetSteps(), "/"))
	}
	return b.String()
}

// Issue 18: a commit's paths are computed once, at apply, and the same
// paths go to the authority's accept question and to every subscriber fed
// from the document's tail.
func TestAcceptAndSubscriptionShowTheSamePaths(t *testing.T) {
	e := startEnv(t, envOpts{bridge: bridge.Config{Policy: bridge.PolicyClosed}})
	allowOpens(t, e)
	auth := openBackend(t, e, "auth", 0)
	auth.mustClaim(1, prefix("doc"), 0, kAccept)
	var mu sync.Mutex
	asked := map[string]string{} // encoded commit to its paths
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	auth.serveAccept(ctx, func(q *v1.Question) *v1.Answer {
		c := q.GetAccept().GetCommit()
		mu.Lock()
		asked[string(c.GetEncoded())] = pathsOf(c)
		mu.Unlock()
		return accept(q.Id)
	})
	a := dialPeer(t, e, peer.Options{})
	da, err := a.Share(ctxT(t), "doc1", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	sub := subscribeDoc(t, e, ctxT(t), "doc1", nil)
	if ev, err := sub.Recv(); err != nil || ev.GetCaughtUp() == nil {
		t.Fatalf("first event %v, %v; want CaughtUp", ev, err)
	}
	const n = 20
	for i := range n {
		if _, err := set(da, fmt.Sprintf("k%d", i%4), text(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	for got := 0; got < n; {
		ev, err := sub.Recv()
		if err != nil {
			t.Fatal(err)
		}
		c := ev.GetCommit().GetCommit()
		if c == nil {
			continue
		}
		mu.Lock()
		want, ok := asked[string(c.GetEncoded())]
		mu.Unlock()
		if !ok {
			continue // the creator's state, asked before the subscription
		}
		if p := pathsOf(c); p != want || p == "[]" {
			t.Fatalf("cursor %d: the subscription shows paths %s, the accept question showed %s", ev.GetCommit().GetCursor(), p, want)
		}
		got++
	}
}
