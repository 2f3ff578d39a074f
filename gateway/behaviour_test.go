package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// The aweft page client re-shares a document it holds with open(want
// false) then at once open(want true) (notes section 12). On a gateway that
// holds nothing the peer's state must become the document, and the want
// must be answered with it, never with an empty state that wipes the peer.
func TestBackToBackOpensDoNotWipeThePeer(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	d := newDoc()
	root, _ := d.Root()
	if _, err := d.Apply(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("title"), Value: text("kept")}}}); err != nil {
		t.Fatal(err)
	}
	want := encodeState(t, d.Snapshot())
	p := dial(t, ts.url, peer.Options{})
	pd, err := p.Share(ctxT(t), "page", d)
	if err != nil {
		t.Fatal(err)
	}
	if err := pd.Resync(); err != nil {
		t.Fatal(err)
	}
	nextEvent[peer.StateApplied](t, pd)
	if got := stateOf(t, pd); got != want {
		t.Fatal("the peer's document changed on its own resync")
	}
	if got := gatewayState(t, ts.Server, "page"); got != want {
		t.Fatal("the gateway did not take the peer's state")
	}
}

// A peer that reconnects re-opens with want on a live topic and gets the
// gateway's state, which wins.
func TestReconnectResyncGetsGatewayState(t *testing.T) {
	eachTopology(t, gateway.Config{}, testReconnectResync)
}

func testReconnectResync(t *testing.T, tp topology) {
	a := dial(t, tp.url(0), peer.Options{})
	da, err := a.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	tp.stored(t, "doc")
	b := dial(t, tp.url(1), peer.Options{})
	db, err := b.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := set(da, key(0, i), commit.IntValue(int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	waitApplied(t, db, 5)
	// b, disconnected, edits its copy; on reconnect the gateway's state wins.
	b.Close()
	stale := db.Snapshot()
	rootID, kind := db.Root()
	local := document.New(rootID, kind, document.Limits{})
	if _, err := local.Apply(stale); err != nil {
		t.Fatal(err)
	}
	if _, err := local.Apply(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: rootID, Ref: commit.ObjectKey("offline"), Value: text("lost")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "after", text("x")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, tp.node(2).Server, "doc", 6)
	b2 := dial(t, tp.url(2), peer.Options{})
	db2, err := b2.Share(ctxT(t), "doc", local)
	if err != nil {
		t.Fatal(err)
	}
	if err := db2.Resync(); err != nil {
		t.Fatal(err)
	}
	nextEvent[peer.StateApplied](t, db2)
	if stateOf(t, db2) != gatewayState(t, tp.node(2).Server, "doc") {
		t.Fatal("after resync the peer does not hold the gateway's state")
	}
}

// refuseSecret refuses every commit that writes the key "secret".
type refuseSecret struct{ gateway.Policy }

func (refuseSecret) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	for i, d := range req.Commit.Deltas {
		if d.Ref.Kind == commit.Object && d.Ref.Key == "secret" {
			reply(gateway.Verdict{Reasons: []frame.Reason{{Code: "not-here", Message: "secret is read-only", Path: req.Paths[i]}}})
			return
		}
	}
	reply(gateway.Verdict{})
}

func TestRefusalsReachOnlyTheirOrigin(t *testing.T) {
	eachTopology(t, gateway.Config{Authority: refuseSecret{}}, testRefusalsReachOnlyTheirOrigin)
}

func testRefusalsReachOnlyTheirOrigin(t *testing.T, tp topology) {
	a := dial(t, tp.url(0), peer.Options{})
	da, err := a.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	tp.stored(t, "doc")
	b := dial(t, tp.url(1), peer.Options{})
	db, err := b.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "ok1", text("1")); err != nil {
		t.Fatal(err)
	}
	seq, err := set(da, "secret", text("2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "ok2", text("3")); err != nil {
		t.Fatal(err)
	}
	r := nextEvent[peer.Refused](t, da)
	if !r.Mine || r.Seq != seq || len(r.Reasons) != 1 || r.Reasons[0].Code != "not-here" || r.Commit == nil || r.Undo == nil {
		t.Fatalf("refusal %+v, want seq %d not-here with commit and undo", r, seq)
	}
	if p := r.Reasons[0].Path; len(p) != 1 || p[0] != "secret" {
		t.Fatalf("path %v, want [secret]", p)
	}
	got := waitApplied(t, db, 2)
	for _, a := range got {
		if a.Commit.Deltas[0].Ref.Key == "secret" {
			t.Fatal("b saw the refused commit")
		}
	}
	// a wrote three commits and saw none echoed: its next event is nothing
	// but what b writes now.
	if _, err := set(db, "fromb", text("4")); err != nil {
		t.Fatal(err)
	}
	if e := waitApplied(t, da, 1); e[0].Commit.Deltas[0].Ref.Key != "fromb" {
		t.Fatalf("a got %v, want only b's commit (no echo)", e[0].Commit.Deltas[0].Ref.Key)
	}
	for _, n := range tp.nodes {
		waitCursor(t, n.Server, "doc", 3)
		if _, _, cursor, _ := n.State(ctxT(t), "doc"); cursor != 3 {
			t.Fatalf("cursor %d, want 3 (the refused commit never landed)", cursor)
		}
	}
}

func TestReadOnlyPolicyRefusesWrites(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	a := dial(t, ts.url, peer.Options{})
	if _, err := a.Share(ctxT(t), "doc", newDoc()); err != nil {
		t.Fatal(err)
	}
	ro := startGateway(t, gateway.Config{Authority: gateway.Policy{ReadOnly: true}})
	b := dial(t, ro.url, peer.Options{})
	db, err := b.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	seq, _ := set(db, "x", text("y"))
	if r := nextEvent[peer.Refused](t, db); r.Seq != seq || r.Reasons[0].Code != string(gateway.ReasonReadOnly) {
		t.Fatalf("refusal %+v", r)
	}
}

func TestNoDocumentWhenNeitherHoldsIt(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	p := dial(t, ts.url, peer.Options{})
	_, err := p.Join(ctxT(t), "nothing")
	if protocol.ReasonOf(err) != protocol.NoDocument {
		t.Fatalf("join: %v, want no-document", err)
	}
}

type denyOpen struct{ gateway.Policy }

func (denyOpen) MayOpen(req gateway.OpenRequest, reply func(error)) {
	if strings.HasPrefix(req.Document, "private:") {
		reply(errors.New("not yours"))
		return
	}
	reply(nil)
}

func TestForbiddenOpenSeesNothing(t *testing.T) {
	ts := startGateway(t, gateway.Config{Authority: denyOpen{}})
	p := dial(t, ts.url, peer.Options{})
	_, err := p.Share(ctxT(t), "private:x", newDoc())
	if protocol.ReasonOf(err) != gateway.ReasonForbidden {
		t.Fatalf("share: %v, want forbidden", err)
	}
	if _, err := p.Share(ctxT(t), "public:x", newDoc()); err != nil {
		t.Fatalf("the link must carry on: %v", err)
	}
}

func TestHandshakeRefusals(t *testing.T) {
	refuse := admission.IdentifierFunc(func(_ context.Context, p admission.Peer) (admission.Identity, error) {
		if p.Header.Get("Authorization") != "" {
			return admission.Identity{ID: "u1"}, nil
		}
		return admission.Identity{}, &admission.Refusal{Reasons: []admission.Reason{{Code: "no-session", Message: "sign in first"}}}
	})
	ts := startGateway(t, gateway.Config{Admission: admission.Config{Identifier: refuse, Limit: 2}})
	cases := []struct {
		name   string
		header http.Header
		status int
		body   string
	}{
		{"identify", nil, 401, `{"reasons":[{"code":"no-session","message":"sign in first"}]}`},
		{"origin", http.Header{"Origin": {"https://evil.example"}, "Authorization": {"x"}}, 403, `"code":"origin"`},
		{"limit", nil, 429, `"code":"limit"`},
	}
	for _, c := range cases {
		_, err := peer.Dial(ctxT(t), ts.url, peer.Options{Header: c.header})
		var he *peer.HandshakeError
		if !errors.As(err, &he) || he.StatusCode != c.status || !strings.Contains(string(he.Body), c.body) {
			t.Fatalf("%s: %v, want %d with %s", c.name, err, c.status, c.body)
		}
	}
}

func TestRequestChannel(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	ws, _, err := websocket.Dial(ctxT(t), ts.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctxT(t), websocket.MessageText, []byte(`{"id":1,"name":"who","args":null}`)); err != nil {
		t.Fatal(err)
	}
	typ, b, err := ws.Read(ctxT(t))
	if err != nil || typ != websocket.MessageText || !strings.Contains(string(b), `"reason":"missing"`) {
		t.Fatalf("answer %s %q %v", typ, b, err)
	}
	// Text that is not a request frame closes the socket.
	if err := ws.Write(ctxT(t), websocket.MessageText, []byte(`not json`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ws.Read(ctxT(t)); websocket.CloseStatus(err) != websocket.StatusUnsupportedData {
		t.Fatalf("read after bad text: %v", err)
	}
}

// Bytes that are not a frame end the link without a fault.
func TestUndecodableBytesCloseTheSocket(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	ws, _, err := websocket.Dial(ctxT(t), ts.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctxT(t), websocket.MessageBinary, []byte{0x82, 0x04}); err != nil {
		t.Fatal(err)
	}
	_, _, err = ws.Read(ctxT(t))
	if websocket.CloseStatus(err) == -1 && !errors.Is(err, io.EOF) {
		t.Fatalf("want the socket closed, got %v", err)
	}
}

func TestShutdownClosesLinksWithGoingAway(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	p := dial(t, ts.url, peer.Options{})
	if _, err := p.Share(ctxT(t), "doc", newDoc()); err != nil {
		t.Fatal(err)
	}
	ts.stop(t)
	<-p.Done()
	var ee *peer.EndedError
	if !errors.As(p.Err(), &ee) || !ee.ByPeer {
		t.Fatalf("peer ended with %v", p.Err())
	}
	if !strings.Contains(p.Err().Error(), "StatusGoingAway") {
		t.Fatalf("peer ended with %v, want close 1001", p.Err())
	}
}

// Issue 16: a shutdown spreads the links' ends over DrainSpread, so their
// clients do not all reconnect in the same instant; every one still gets
// 1001 shutdown.
func TestShutdownSpreadsTheEnds(t *testing.T) {
	const spread = 400 * time.Millisecond
	ts := startGateway(t, gateway.Config{DrainSpread: spread})
	const n = 10
	ends := make(chan time.Time, n)
	for i := range n {
		r := dialRaw(t, ts.url)
		r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: fmt.Sprintf("doc%d", i), Root: rootOf()})
		r.next()
		go func() {
			_, err := r.read()
			if websocket.CloseStatus(err) != websocket.StatusGoingAway {
				t.Errorf("link ended with %v, want 1001", err)
			}
			ends <- time.Now()
		}()
	}
	ts.stop(t)
	var first, last time.Time
	for i := range n {
		at := <-ends
		if i == 0 || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
	}
	// The waits are lower bounds: a slower host only spreads them more.
	if got := last.Sub(first); got < spread/2 {
		t.Fatalf("the links ended within %v of each other, want them spread over %v", got, spread)
	}
}
