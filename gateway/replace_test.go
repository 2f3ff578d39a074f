package gateway_test

import (
	"errors"
	"testing"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// ReplaceState with an expected cursor is a compare-and-swap made where the
// state is reconciled, and it returns the commit every link receives.
func TestReplaceStateCompareAndSwap(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	a := dial(t, ts.url, peer.Options{})
	da, err := a.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "title", text("one")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, ts.Server, "doc", 1)
	root, kind := da.Root()
	want := document.New(root, kind, document.Limits{})
	if _, err := want.Apply(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("title"), Value: text("two")}}}); err != nil {
		t.Fatal(err)
	}
	state, err := commit.Encode(want.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	origin := gateway.Origin{Kind: "backend", ID: "ops"}
	stale := uint64(0)
	_, diff, err := ts.ReplaceState(ctxT(t), "doc", origin, state, &stale)
	var cm *gateway.CursorMismatch
	if !errors.As(err, &cm) || cm.Actual != 1 || diff != nil {
		t.Fatalf("stale expect: %v, %x; want a cursor mismatch at 1", err, diff)
	}
	current := uint64(1)
	cur, diff, err := ts.ReplaceState(ctxT(t), "doc", origin, state, &current)
	if err != nil || cur != 2 || diff == nil {
		t.Fatalf("ReplaceState = %d, %x, %v; want cursor 2 and the commit", cur, diff, err)
	}
	got := waitApplied(t, da, 1)
	b, err := commit.Encode(got[0].Commit)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(diff) {
		t.Fatal("the returned commit is not the one the link received")
	}
	// The same state again changes nothing and returns no commit.
	if cur, diff, err := ts.ReplaceState(ctxT(t), "doc", origin, state, nil); err != nil || cur != 2 || diff != nil {
		t.Fatalf("again = %d, %x, %v; want unchanged at 2", cur, diff, err)
	}
}
