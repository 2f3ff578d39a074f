package client_test

import (
	"errors"
	"testing"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// The operator's calls through the SDK: a document's topics end with the
// operator's reason, one link ends whole, and a delete removes the
// document (the next GetState finds nothing).
func TestOperatorCalls(t *testing.T) {
	lc := startLocalT(t, bridge.Config{})
	c := dialLocal(t, lc, client.Options{Backend: "ops"})
	share := func(p *peer.Peer, name string) *peer.Doc {
		root := commit.NewID()
		d, err := p.Share(ctxT(t), name, document.New(root, commit.Object, document.Limits{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Commit(commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey("k"), Value: commit.TextValue("v")}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := share(dialPeer(t, lc), "a")
	if _, err := c.EndLink(ctxT(t), "nope", "banned", ""); err == nil {
		t.Fatal("EndLink took a link id that is not one")
	}
	n, err := c.EndDocumentLinks(ctxT(t), "a", "maintenance", "back soon")
	if err != nil || n != 1 {
		t.Fatalf("EndDocumentLinks: %d, %v; want 1 topic ended", n, err)
	}
	nextEvent[peer.Ended](t, a)
	if protocol.ReasonOf(a.Err()) != "maintenance" {
		t.Fatalf("the topic ended with %v, want maintenance", a.Err())
	}

	b := dialPeer(t, lc)
	share(b, "b")
	// Its commit has landed (so the document outlives its creator's link)
	// once a subscription from cursor 0 sees it.
	landed := errors.New("landed")
	if err := c.Subscribe(ctxT(t), "b", 0, func(client.Event) error { return landed }); !errors.Is(err, landed) {
		t.Fatalf("waiting for b's commit: %v", err)
	}
	if n, err := c.EndLink(ctxT(t), "c2", "banned", "bye"); err != nil || n != 1 {
		t.Fatalf("EndLink c2: %d, %v; want 1", n, err)
	}

	if _, cur, err := c.GetState(ctxT(t), "b"); err != nil || cur != 1 {
		t.Fatalf("GetState before the delete: cursor %d, %v; want 1", cur, err)
	}
	if _, err := c.DeleteDocument(ctxT(t), "b"); err != nil {
		t.Fatalf("DeleteDocument: %v", err)
	}
	if _, _, err := c.GetState(ctxT(t), "b"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("GetState after the delete: %v, want ErrNotFound", err)
	}
	if _, err := c.DeleteDocument(ctxT(t), "b"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("a second delete: %v, want ErrNotFound", err)
	}
}
