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
	root  frame.Root
	state []byte
	asked atomic.Int32
}

func (l *loadingAuthority) Load(_ context.Context, name string) (frame.Root, []byte, bool, error) {
	l.asked.Add(1)
	if name != "stored" {
		return frame.Root{}, nil, false, nil
	}
	return l.root, l.state, true, nil
}

// A document the gateway does not hold is loaded from the backend before
// anything is minted, made durable, and served.
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
	la := &loadingAuthority{root: frame.Root{ID: id, Kind: kind}, state: state}
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
