package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// A document nobody has open leaves memory after IdleUnload and comes back
// from the store, whole, when it is opened again.
func TestIdleDocumentsUnloadAndReload(t *testing.T) {
	st := store.NewMemory()
	defer st.Close()
	ts := startGateway(t, gateway.Config{Store: st, IdleUnload: 10 * time.Millisecond})
	a := dial(t, ts.url, peer.Options{})
	da, err := a.Share(ctxT(t), "idle", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := set(da, key(0, i), commit.IntValue(int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	waitCursor(t, ts.Server, "idle", 3)
	want := stateOf(t, da)
	if err := da.Leave(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the document to unload", func() bool {
		return len(ts.Documents(context.Background())) == 0
	})
	b := dial(t, ts.url, peer.Options{})
	db, err := b.Join(ctxT(t), "idle")
	if err != nil {
		t.Fatal(err)
	}
	if stateOf(t, db) != want {
		t.Fatal("the reloaded document differs")
	}
	if _, _, cursor, _ := ts.State(ctxT(t), "idle"); cursor != 3 {
		t.Fatalf("cursor %d after reload, want 3", cursor)
	}
}

func TestMaxDocumentsIsANamedRefusal(t *testing.T) {
	ts := startGateway(t, gateway.Config{MaxDocuments: 2})
	p := dial(t, ts.url, peer.Options{})
	for _, n := range []string{"one", "two"} {
		if _, err := p.Share(ctxT(t), n, newDoc()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Share(ctxT(t), "three", newDoc()); protocol.ReasonOf(err) != gateway.ReasonTooManyDocuments {
		t.Fatalf("third share: %v, want too-many-documents", err)
	}
}

// holdSnapshots holds every snapshot past cursor 0 (not a creation) until
// released.
type holdSnapshots struct {
	store.Store
	entered chan uint64
	release chan struct{}
}

func (s *holdSnapshots) PutSnapshot(ctx context.Context, doc string, snap store.Snapshot) error {
	if snap.Cursor > 0 {
		s.entered <- snap.Cursor
		<-s.release
	}
	return s.Store.PutSnapshot(ctx, doc, snap)
}

// A quiet document's final snapshot is a store call like any (issue 16):
// the hub stores it off its goroutine and stays registered meanwhile, so
// the status still answers for it, a peer that opens it then keeps it, and
// it leaves only once stored and still quiet.
func TestFinalSnapshotIsStoredBeforeTheHubLeaves(t *testing.T) {
	st := &holdSnapshots{Store: store.NewMemory(), entered: make(chan uint64, 1), release: make(chan struct{})}
	ts := startGateway(t, gateway.Config{Store: st, IdleUnload: 10 * time.Millisecond})
	da, err := dial(t, ts.url, peer.Options{}).Share(ctxT(t), "quiet", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "k", text("v")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, ts.Server, "quiet", 1)
	if err := da.Leave(); err != nil {
		t.Fatal(err)
	}
	if c := <-st.entered; c != 1 {
		t.Fatalf("final snapshot at %d, want 1", c)
	}
	listed := func() bool {
		for _, d := range ts.Status(ctxT(t)).Documents {
			if d.Name == "quiet" {
				return true
			}
		}
		return false
	}
	if !listed() {
		t.Fatal("the hub left the registry before its final snapshot was stored")
	}
	close(st.release)
	eventually(t, "the document to leave once its snapshot is stored", func() bool { return !listed() })
	db, err := dial(t, ts.url, peer.Options{}).Join(ctxT(t), "quiet")
	if err != nil {
		t.Fatal(err)
	}
	if stateOf(t, db) != stateOf(t, da) {
		t.Fatal("the reloaded document differs")
	}
}
