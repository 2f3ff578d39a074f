package gateway_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
)

func TestShareJoinAndLiveCommits(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	a := dial(t, ts.url, peer.Options{})
	da, err := a.Share(ctxT(t), "board:1", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	// The gateway minted the document from a's root and asked for its
	// state; a's replica must survive that.
	if _, err := set(da, "title", text("hello")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, ts.Server, "board:1", 1)
	b := dial(t, ts.url, peer.Options{})
	db, err := b.Join(ctxT(t), "board:1")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stateOf(t, db), stateOf(t, da); got != want {
		t.Fatalf("joiner state differs from sharer's")
	}
	if _, err := set(db, "title", text("world")); err != nil {
		t.Fatal(err)
	}
	got := waitApplied(t, da, 1)
	if v := got[0].Commit.Deltas[0].Value; v != text("world") {
		t.Fatalf("a got %v", v)
	}
	if stateOf(t, da) != stateOf(t, db) || gatewayState(t, ts.Server, "board:1") != stateOf(t, da) {
		t.Fatal("replicas differ")
	}
}

// Several peers on several documents, each writing its own keys, converge
// to the gateway's replica; nobody sees its own commits echoed.
func TestConvergenceUnderRandomCommits(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	const peers, docs, commits = 4, 3, 40
	names := []string{"doc:a", "doc:b", "doc:c"}
	// The first peer creates every document.
	all := make([][]*peer.Doc, peers)
	for i := range peers {
		p := dial(t, ts.url, peer.Options{EventBuffer: 4096})
		for _, n := range names {
			var d *peer.Doc
			var err error
			if i == 0 {
				d, err = p.Share(ctxT(t), n, newDoc())
			} else {
				d, err = p.Join(ctxT(t), n)
			}
			if err != nil {
				t.Fatalf("peer %d %s: %v", i, n, err)
			}
			all[i] = append(all[i], d)
		}
	}
	sent := make([][]int, peers)
	var wg sync.WaitGroup
	for i := range peers {
		sent[i] = make([]int, docs)
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			for j := range commits {
				k := r.IntN(docs)
				d := all[i][k]
				sent[i][k]++
				if _, err := set(d, key(i, r.IntN(5)), commit.IntValue(int64(j))); err != nil {
					t.Errorf("peer %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// Every peer sees every commit on its documents but its own, and then
	// the gateway has applied them all (each was delivered to someone).
	for k, n := range names {
		total := 0
		for i := range peers {
			total += sent[i][k]
		}
		for i := range peers {
			waitApplied(t, all[i][k], total-sent[i][k])
		}
		if _, _, cursor, err := ts.State(ctxT(t), n); err != nil || cursor != uint64(total) {
			t.Fatalf("%s: cursor %d, want %d (%v)", n, cursor, total, err)
		}
		want := gatewayState(t, ts.Server, n)
		for i := range peers {
			if stateOf(t, all[i][k]) != want {
				t.Errorf("peer %d %s differs from the gateway", i, n)
			}
		}
	}
}
