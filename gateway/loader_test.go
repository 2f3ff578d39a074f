package gateway_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// loadingAuthority is the local policy plus a backend that holds one
// document the gateway does not.
type loadingAuthority struct {
	gateway.Policy
	root   frame.Root
	state  []byte
	cursor uint64
	asked  atomic.Int32
}

var _ gateway.Loader = (*loadingAuthority)(nil)

func (l *loadingAuthority) Load(_ context.Context, name string) (gateway.Loaded, bool, error) {
	l.asked.Add(1)
	if name != "stored" {
		return gateway.Loaded{}, false, nil
	}
	return gateway.Loaded{Root: l.root, State: l.state, Cursor: l.cursor}, true, nil
}

// A document the gateway does not hold is loaded from the backend before
// anything is minted, made durable, and served, and its cursors continue
// from the backend's.
func TestLoaderServesDocumentsTheGatewayDoesNotHold(t *testing.T) {
	d := newDoc()
	id, kind := d.Root()
	if _, err := d.Apply(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: id, Ref: commit.ObjectKey("from"), Value: text("backend")}}}); err != nil {
		t.Fatal(err)
	}
	state, err := commit.Encode(d.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	la := &loadingAuthority{root: frame.Root{ID: id, Kind: kind}, state: state, cursor: 41}
	ts := startGateway(t, gateway.Config{Authority: la})
	p := dial(t, ts.url, peer.Options{})
	pd, err := p.Join(ctxT(t), "stored")
	if err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, pd); got != string(state) {
		t.Fatal("the joiner did not get the backend's document")
	}
	if r, _ := pd.Root(); r != id {
		t.Fatal("the document's root is not the backend's")
	}
	if _, _, cursor, _ := ts.State(ctxT(t), "stored"); cursor != 41 {
		t.Fatalf("cursor %d after the load, want the backend's 41", cursor)
	}
	if _, err := set(pd, "next", text("1")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, ts.Server, "stored", 42)
	// A name the backend does not hold either is still no-document, and a
	// peer that holds one still creates it.
	if _, err := p.Join(ctxT(t), "absent"); err == nil {
		t.Fatal("join of a name nobody holds succeeded")
	}
	if _, err := p.Share(ctxT(t), "fresh", document.New(commit.NewID(), commit.Object, document.Limits{})); err != nil {
		t.Fatal(err)
	}
	if la.asked.Load() != 3 {
		t.Fatalf("the loader was asked %d times, want once per name", la.asked.Load())
	}
}
