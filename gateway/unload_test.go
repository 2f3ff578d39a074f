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
