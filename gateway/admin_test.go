package gateway_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// ended waits for d's topic to end and returns its reason.
func ended(t *testing.T, d *peer.Doc) protocol.Reason {
	t.Helper()
	select {
	case <-d.Done():
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not end", d.Name())
	}
	return protocol.ReasonOf(d.Err())
}

// A delete ends every topic and subscription of the document with deleted,
// removes it from the store for good, and the name then starts a new
// document; the links stay open.
func TestDeleteDocument(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := startGateway(t, gateway.Config{Store: st})
	pa := dial(t, ts.url, peer.Options{})
	da, err := pa.Share(ctxT(t), "d", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	db, err := dial(t, ts.url, peer.Options{}).Join(ctxT(t), "d")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if _, err := set(da, k, text("secret "+k)); err != nil {
			t.Fatal(err)
		}
	}
	waitApplied(t, db, 3)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	subbed := make(chan error, 1)
	got := make(chan uint64, 16)
	go func() {
		subbed <- ts.Subscribe(ctx, "d", 0, func(ev gateway.Event) error {
			got <- ev.Cursor
			return nil
		})
	}()
	for range 3 {
		<-got // the subscriber is registered and caught up
	}

	del, err := ts.DeleteDocument(ctxT(t), "d")
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	if del.Links != 2 || del.Subscribers != 1 {
		t.Fatalf("delete ended %+v, want 2 links and 1 subscriber", del)
	}
	for _, d := range []*peer.Doc{da, db} {
		if r := ended(t, d); r != gateway.ReasonDeleted {
			t.Fatalf("%s ended with %q (%v), want deleted", d.Name(), r, d.Err())
		}
	}
	select {
	case err := <-subbed:
		if protocol.ReasonOf(err) != gateway.ReasonDeleted {
			t.Fatalf("subscription ended with %v, want deleted", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the subscription did not end")
	}
	if _, err := st.Info(ctxT(t), "d"); !errors.Is(err, store.ErrUnknownDocument) {
		t.Fatalf("store info after delete: %v", err)
	}
	if _, _, _, err := ts.State(ctxT(t), "d"); protocol.ReasonOf(err) != protocol.NoDocument {
		t.Fatalf("state after delete: %v", err)
	}
	if _, err := ts.DeleteDocument(ctxT(t), "d"); protocol.ReasonOf(err) != protocol.NoDocument {
		t.Fatalf("second delete: %v, want no-document", err)
	}

	// The same link opens the name again: a new, empty document.
	fresh := newDoc()
	dn, err := pa.Share(ctxT(t), "d", fresh)
	if err != nil {
		t.Fatalf("share after delete: %v", err)
	}
	if _, err := set(dn, "new", text("x")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, ts.Server, "d", 1)
	root, state, cursor, err := ts.State(ctxT(t), "d")
	freshRoot, _ := fresh.Root()
	if err != nil || cursor != 1 || root.ID != freshRoot {
		t.Fatalf("new document: root %v cursor %d err %v, want root %v at 1", root.ID, cursor, err, freshRoot)
	}
	if want := stateOf(t, dn); string(state) != want {
		t.Fatal("the new document holds something of the deleted one")
	}
}

// holdingAuthority accepts at once commits whose first key does not start
// with "held", and keeps the replies of the others, telling asked.
type holdingAuthority struct {
	gateway.Policy
	asked chan func(gateway.Verdict)
}

func (a *holdingAuthority) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	if d := req.Commit.Deltas[0]; len(d.Ref.Key) >= 4 && d.Ref.Key[:4] == "held" {
		a.asked <- reply
		return
	}
	reply(gateway.Verdict{})
}

// Commits waiting for a verdict when the delete comes are refused with
// deleted, and a verdict that comes later lands nothing.
func TestDeleteRefusesInFlight(t *testing.T) {
	auth := &holdingAuthority{asked: make(chan func(gateway.Verdict), 2)}
	ts := startGateway(t, gateway.Config{Authority: auth})
	da, err := dial(t, ts.url, peer.Options{}).Share(ctxT(t), "d", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "ok", text("1")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, ts.Server, "d", 1)
	if _, err := set(da, "held1", text("x")); err != nil {
		t.Fatal(err)
	}
	late := []func(gateway.Verdict){<-auth.asked}
	wrote := make(chan error, 1)
	go func() {
		_, err := ts.Write(ctxT(t), "d", gateway.Origin{Kind: "backend", ID: "b"}, encodeCommitSet(t, da, "held2"), nil)
		wrote <- err
	}()
	late = append(late, <-auth.asked)
	if _, err := ts.DeleteDocument(ctxT(t), "d"); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; protocol.ReasonOf(err) != gateway.ReasonDeleted {
		t.Fatalf("backend write in flight: %v, want deleted", err)
	}
	if r := ended(t, da); r != gateway.ReasonDeleted {
		t.Fatalf("topic ended with %q", r)
	}
	for _, reply := range late {
		reply(gateway.Verdict{})
	}
	if _, _, _, err := ts.State(ctxT(t), "d"); protocol.ReasonOf(err) != protocol.NoDocument {
		t.Fatalf("state after delete: %v, want no-document", err)
	}
}

func TestDeleteAbsentAndBadName(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	if _, err := ts.DeleteDocument(ctxT(t), "never"); protocol.ReasonOf(err) != protocol.NoDocument {
		t.Fatalf("delete of an absent name: %v", err)
	}
	if _, err := ts.DeleteDocument(ctxT(t), ""); protocol.ReasonOf(err) != gateway.ReasonBadName {
		t.Fatalf("delete of an empty name: %v", err)
	}
}

// EndLink ends a whole link: a fault on topic 0 with the operator's reason,
// then close 1008 with it; /status showed the link with its address,
// identity and documents.
func TestEndLink(t *testing.T) {
	ids := admission.IdentifierFunc(func(_ context.Context, p admission.Peer) (admission.Identity, error) {
		return admission.Identity{ID: "user-7", Roles: []string{"editor"}}, nil
	})
	ts := startGateway(t, gateway.Config{Admission: admission.Config{Identifier: ids}})
	p := dial(t, ts.url, peer.Options{})
	if _, err := p.Share(ctxT(t), "doc-b", newDoc()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Share(ctxT(t), "doc-a", newDoc()); err != nil {
		t.Fatal(err)
	}
	st := ts.Status(ctxT(t))
	if len(st.Links) != 1 {
		t.Fatalf("%d links in status", len(st.Links))
	}
	l := st.Links[0]
	if l.Addr != "127.0.0.1" || l.Identity.ID != "user-7" || len(l.Identity.Roles) != 1 ||
		len(l.Documents) != 2 || l.Documents[0] != "doc-a" || l.Documents[1] != "doc-b" {
		t.Fatalf("link status %+v", l)
	}

	raw := dialRaw(t, ts.url)
	var rawID string
	// The client's handshake can return before the gateway lists the link.
	eventually(t, "the second link in status", func() bool {
		for _, x := range ts.Status(ctxT(t)).Links {
			if x.ID != l.ID {
				rawID = x.ID
			}
		}
		return rawID != ""
	})
	if err := ts.EndLink(rawID, "banned", "abuse report 12"); err != nil {
		t.Fatal(err)
	}
	f := raw.expectFault(0, "banned")
	if f.Message != "abuse report 12" {
		t.Fatalf("fault message %q", f.Message)
	}
	_, err := raw.read()
	if s := websocket.CloseStatus(err); s != websocket.StatusPolicyViolation {
		t.Fatalf("close %v (%v), want 1008", s, err)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Reason != "banned" {
		t.Fatalf("close reason %+v", ce)
	}
	if err := ts.EndLink(rawID, "banned", ""); !errors.Is(err, gateway.ErrNoLink) {
		t.Fatalf("ending a gone link: %v", err)
	}
	for _, bad := range []string{"", "Banned", "1x", "has space", string(make([]byte, 65))} {
		if err := ts.EndLink(l.ID, protocol.Reason(bad), ""); !errors.Is(err, gateway.ErrBadReason) {
			t.Fatalf("reason %q: %v", bad, err)
		}
	}
	// The other link is untouched.
	if _, err := p.Share(ctxT(t), "doc-c", newDoc()); err != nil || p.Err() != nil {
		t.Fatalf("the other link after ending one: %v %v", err, p.Err())
	}
}

// EndDocumentLinks ends one document's topics on every link with the
// operator's reason; the links and their other documents go on.
func TestEndDocumentLinks(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	da, db := sharedPair(t, ts.url, "d")
	pc := dial(t, ts.url, peer.Options{})
	other, err := pc.Share(ctxT(t), "other", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	dc, err := pc.Join(ctxT(t), "d")
	if err != nil {
		t.Fatal(err)
	}
	n, err := ts.EndDocumentLinks(ctxT(t), "d", "maintenance", "back at noon")
	if err != nil || n != 3 {
		t.Fatalf("ended %d topics, %v; want 3", n, err)
	}
	for _, d := range []*peer.Doc{da, db, dc} {
		if r := ended(t, d); r != "maintenance" {
			t.Fatalf("%s ended with %q", d.Name(), r)
		}
		var ee *peer.EndedError
		if !errors.As(d.Err(), &ee) || ee.Message != "back at noon" {
			t.Fatalf("ended %v", d.Err())
		}
	}
	if _, err := set(other, "k", text("v")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, ts.Server, "other", 1)
	if pc.Err() != nil {
		t.Fatalf("the link ended: %v", pc.Err())
	}
	if n, err := ts.EndDocumentLinks(ctxT(t), "not-loaded", "maintenance", ""); n != 0 || err != nil {
		t.Fatalf("a document nobody holds: %d %v", n, err)
	}
	if _, err := ts.EndDocumentLinks(ctxT(t), "d", "Bad!", ""); !errors.Is(err, gateway.ErrBadReason) {
		t.Fatalf("bad reason: %v", err)
	}
}

// encodeCommitSet encodes a commit that adds key to d's root.
func encodeCommitSet(t *testing.T, d *peer.Doc, key string) []byte {
	t.Helper()
	root, _ := d.Root()
	b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey(key), Value: text("v")}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
