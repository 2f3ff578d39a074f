package gateway_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
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
	opener atomic.Pointer[gateway.Origin] // of the last load of "stored"
}

var _ gateway.Loader = (*loadingAuthority)(nil)

func (l *loadingAuthority) Load(_ context.Context, req gateway.LoadRequest) (gateway.Loaded, bool, error) {
	l.asked.Add(1)
	if req.Document != "stored" {
		return gateway.Loaded{}, false, nil
	}
	l.opener.Store(req.Opener)
	return gateway.Loaded{Root: l.root, State: l.state, Cursor: l.cursor}, true, nil
}

// A document the gateway does not hold is loaded from the backend before
// anything is minted, made durable, and served, and its cursors continue
// from the backend's.
func TestLoaderServesDocumentsTheGatewayDoesNotHold(t *testing.T) {
	doc, state := backendDoc(t, 41)
	id := doc.Root.ID
	la := &loadingAuthority{root: doc.Root, state: doc.State, cursor: doc.Cursor}
	ts := startGateway(t, gateway.Config{Authority: la})
	p := dial(t, ts.url, peer.Options{})
	pd, err := p.Join(ctxT(t), "stored")
	if err != nil {
		t.Fatal(err)
	}
	if got := stateOf(t, pd); got != state {
		t.Fatal("the joiner did not get the backend's document")
	}
	if r, _ := pd.Root(); r != id {
		t.Fatal("the document's root is not the backend's")
	}
	// The loader is told whose open asked: the one link there is.
	links := ts.Status(ctxT(t)).Links
	if o := la.opener.Load(); o == nil || len(links) != 1 || o.Kind != "link" || o.ID != links[0].ID ||
		o.RemoteAddr != links[0].Addr || !o.Identity.Anonymous {
		t.Fatalf("the load named opener %+v, want the link %+v", o, links)
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

// scriptedLoader answers each load with the next of its answers; past the
// last it keeps giving the last.
type scriptedLoader struct {
	gateway.Policy
	mu      sync.Mutex
	answers []loadAnswer
	asked   int
}

type loadAnswer struct {
	doc   gateway.Loaded
	found bool
	err   error
}

func (l *scriptedLoader) Load(context.Context, gateway.LoadRequest) (gateway.Loaded, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.answers[min(l.asked, len(l.answers)-1)]
	l.asked++
	return a.doc, a.found, a.err
}

func (l *scriptedLoader) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.asked
}

// backendDoc is a one-field document a backend holds, as a Loaded at cursor.
func backendDoc(t *testing.T, cursor uint64) (gateway.Loaded, string) {
	t.Helper()
	d := newDoc()
	id, kind := d.Root()
	if _, err := d.Apply(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: id, Ref: commit.ObjectKey("from"), Value: text("backend")}}}); err != nil {
		t.Fatal(err)
	}
	state, err := commit.Encode(d.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	return gateway.Loaded{Root: frame.Root{ID: id, Kind: kind}, State: state, Cursor: cursor}, string(state)
}

// The backend API reads and writes documents only a backend holds: State
// and Write ask the Loader first, as an open does, and the loaded document
// is the one peers then join.
func TestBackendCallsLoadFirst(t *testing.T) {
	doc, state := backendDoc(t, 7)
	l := &scriptedLoader{answers: []loadAnswer{{doc: doc, found: true}}}
	ts := startGateway(t, gateway.Config{Authority: l})

	root, got, cursor, err := ts.State(ctxT(t), "held-elsewhere")
	if err != nil || root != doc.Root || string(got) != state || cursor != 7 {
		t.Fatalf("State = %v, %d bytes, %d, %v; want the backend's document at 7", root, len(got), cursor, err)
	}
	c := commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: doc.Root.ID, Ref: commit.ObjectKey("more"), Value: text("x")}}}
	b, err := commit.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := ts.Write(ctxT(t), "written-elsewhere", gateway.Origin{ID: "backend"}, b, nil)
	if err != nil || cur != 8 {
		t.Fatalf("Write into a document only the backend holds = %d, %v; want cursor 8", cur, err)
	}
	pd, err := dial(t, ts.url, peer.Options{}).Join(ctxT(t), "written-elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := pd.Root(); r != doc.Root.ID || len(pd.Snapshot().Deltas) != 2 {
		t.Fatalf("the joiner got %+v, want the backend's document and the write", pd.Snapshot())
	}
	if n := l.count(); n != 2 {
		t.Fatalf("the loader was asked %d times, want once per name", n)
	}
}

// A load that fails declines the open with its reason and mints nothing (a
// peer's root would make a second document under the name); a load that
// finds nothing is not final either. Both are asked again next time, and
// the backend's document is served once it has it.
func TestFailedOrEmptyLoadIsAskedAgain(t *testing.T) {
	doc, state := backendDoc(t, 3)
	timeout := protocol.Reason("authority-timeout")
	l := &scriptedLoader{answers: []loadAnswer{
		{err: protocol.Errorf(timeout, "the load authority did not answer in time")},
		{err: errors.New("disk on fire")},
		{found: false},
		{doc: doc, found: true},
	}}
	ts := startGateway(t, gateway.Config{Authority: l})
	p := dial(t, ts.url, peer.Options{})

	_, err := p.Share(ctxT(t), "d", newDoc())
	if r := protocol.ReasonOf(err); r != timeout {
		t.Fatalf("share while the load timed out = %v, want declined with %s", err, timeout)
	}
	if _, _, _, err := ts.State(ctxT(t), "d"); protocol.ReasonOf(err) != gateway.ReasonStoreUnavailable {
		t.Fatalf("State while the load failed = %v, want %s", err, gateway.ReasonStoreUnavailable)
	}
	if _, err := p.Join(ctxT(t), "d"); protocol.ReasonOf(err) != protocol.NoDocument {
		t.Fatalf("join while the backend has nothing = %v, want %s", err, protocol.NoDocument)
	}
	pd, err := p.Join(ctxT(t), "d")
	if err != nil {
		t.Fatalf("join once the backend has the document: %v", err)
	}
	if got := stateOf(t, pd); got != state {
		t.Fatal("the joiner did not get the backend's document")
	}
	if n := l.count(); n != 4 {
		t.Fatalf("the loader was asked %d times, want 4 (once per attempt)", n)
	}
}

// A backend's document that cannot be taken (its state does not decode)
// declines the open with store-unavailable, not the state's own reason:
// the peer sent nothing wrong.
func TestUnreadableLoadDeclinesWithStoreUnavailable(t *testing.T) {
	doc, _ := backendDoc(t, 1)
	doc.State = []byte{0xff, 0x00}
	ts := startGateway(t, gateway.Config{Authority: &scriptedLoader{answers: []loadAnswer{{doc: doc, found: true}}}})
	_, err := dial(t, ts.url, peer.Options{}).Share(ctxT(t), "d", newDoc())
	if r := protocol.ReasonOf(err); r != gateway.ReasonStoreUnavailable {
		t.Fatalf("share when the backend's state is unreadable = %v, want %s", err, gateway.ReasonStoreUnavailable)
	}
}
