package bridge_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
)

func wantCode(t *testing.T, err error, c codes.Code) {
	t.Helper()
	if status.Code(err) != c {
		t.Fatalf("got %v, want %v", err, c)
	}
}

func endedWith(t *testing.T, done <-chan struct{}, err func() error) protocol.Reason {
	t.Helper()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("did not end")
	}
	return protocol.ReasonOf(err())
}

// DeleteDocument over gRPC: the peer's topic and the Subscribe stream end
// with deleted, the document is gone, and only a caller with the token may.
func TestDeleteDocumentOverGRPC(t *testing.T) {
	e := startEnv(t, envOpts{})
	d, err := dialPeer(t, e, peer.Options{}).Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(d, "a", text("private")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, e.gw, "doc", 1)
	sub := subscribeDoc(t, e, ctxT(t), "doc", map[string]uint64{"doc": 1})
	if _, err := set(d, "b", text("private")); err != nil {
		t.Fatal(err)
	}
	for { // a commit event proves the stream follows the document
		m, err := sub.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetCommit() != nil {
			break
		}
	}

	resp, err := e.client.DeleteDocument(ctxT(t), &v1.DeleteDocumentRequest{Document: "doc"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.LinksEnded != 1 || resp.SubscribersEnded != 1 {
		t.Fatalf("response %v, want 1 link and 1 subscriber", resp)
	}
	if r := endedWith(t, d.Done(), d.Err); r != gateway.ReasonDeleted {
		t.Fatalf("topic ended with %q", r)
	}
	for err == nil { // a CaughtUp may come first
		_, err = sub.Recv()
	}
	wantCode(t, err, codes.Aborted)
	if !strings.Contains(status.Convert(err).Message(), string(gateway.ReasonDeleted)) {
		t.Fatalf("subscription ended with %v, want it to say deleted", err)
	}
	_, err = e.client.GetState(ctxT(t), &v1.GetStateRequest{Document: "doc"})
	wantCode(t, err, codes.NotFound)
	if list, err := e.client.ListDocuments(ctxT(t), &v1.ListDocumentsRequest{}); err != nil || len(list.Documents) != 0 {
		t.Fatalf("listed after the delete: %v %v", list, err)
	}
	_, err = e.client.DeleteDocument(ctxT(t), &v1.DeleteDocumentRequest{Document: "doc"})
	wantCode(t, err, codes.NotFound)
	_, err = e.client.DeleteDocument(ctxT(t), &v1.DeleteDocumentRequest{})
	wantCode(t, err, codes.InvalidArgument)

	anon := startEnv(t, envOpts{noToken: true})
	_, err = anon.client.DeleteDocument(ctxT(t), &v1.DeleteDocumentRequest{Document: "doc"})
	wantCode(t, err, codes.Unauthenticated)
	_, err = anon.client.EndLinks(ctxT(t), &v1.EndLinksRequest{Target: &v1.EndLinksRequest_ConnectionId{ConnectionId: 1}, Reason: "banned"})
	wantCode(t, err, codes.Unauthenticated)
}

// EndLinks over gRPC: a document's topics on every link, then one whole
// link by the id /status shows.
func TestEndLinksOverGRPC(t *testing.T) {
	e := startEnv(t, envOpts{})
	p1, p2 := dialPeer(t, e, peer.Options{}), dialPeer(t, e, peer.Options{})
	a1, err := p1.Share(ctxT(t), "a", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	a2, err := p2.Join(ctxT(t), "a")
	if err != nil {
		t.Fatal(err)
	}
	b2, err := p2.Share(ctxT(t), "b", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.client.EndLinks(ctxT(t), &v1.EndLinksRequest{Target: &v1.EndLinksRequest_Document{Document: "a"}, Reason: "maintenance", Message: "back soon"})
	if err != nil || resp.Ended != 2 {
		t.Fatalf("ended %v %v, want 2", resp, err)
	}
	for _, d := range []*peer.Doc{a1, a2} {
		if r := endedWith(t, d.Done(), d.Err); r != "maintenance" {
			t.Fatalf("a ended with %q", r)
		}
	}
	if _, err := set(b2, "k", text("v")); err != nil {
		t.Fatal(err)
	}
	waitCursor(t, e.gw, "b", 1)

	var id uint64
	for _, l := range e.gw.Status(ctxT(t)).Links {
		if len(l.Documents) == 1 && l.Documents[0] == "b" {
			id, _ = strconv.ParseUint(strings.TrimPrefix(l.ID, "c"), 10, 64)
		}
	}
	if id == 0 {
		t.Fatal("status shows no link with b open")
	}
	resp, err = e.client.EndLinks(ctxT(t), &v1.EndLinksRequest{Target: &v1.EndLinksRequest_ConnectionId{ConnectionId: id}, Reason: "banned", Message: "abuse"})
	if err != nil || resp.Ended != 1 {
		t.Fatalf("ended %v %v, want 1", resp, err)
	}
	if r := endedWith(t, p2.Done(), p2.Err); r != "banned" {
		t.Fatalf("link ended with %q (%v)", r, p2.Err())
	}
	if p1.Err() != nil {
		t.Fatalf("the other link ended: %v", p1.Err())
	}
	_, err = e.client.EndLinks(ctxT(t), &v1.EndLinksRequest{Target: &v1.EndLinksRequest_ConnectionId{ConnectionId: 999}, Reason: "banned"})
	wantCode(t, err, codes.NotFound)
	_, err = e.client.EndLinks(ctxT(t), &v1.EndLinksRequest{Target: &v1.EndLinksRequest_Document{Document: "b"}, Reason: "Not A Token"})
	wantCode(t, err, codes.InvalidArgument)
	_, err = e.client.EndLinks(ctxT(t), &v1.EndLinksRequest{Reason: "banned"})
	wantCode(t, err, codes.InvalidArgument)
}

// Backends lists each stream's claims with their patterns and kinds, for
// the operator's status page.
func TestBackendsListClaims(t *testing.T) {
	e := startEnv(t, envOpts{})
	b := openBackend(t, e, "auth", 0)
	b.mustClaim(2, prefix(""), 0, kIdentify)
	b.mustClaim(1, exact("doc"), 0, kAccept, kLoad)
	got := backendNamed(e.b, "auth").ClaimList
	id := b.welcome.StreamId
	want := []bridge.ClaimStatus{
		{StreamID: id, ClaimID: 1, Match: "exact", Pattern: "doc", Kinds: []string{"accept", "load"}},
		{StreamID: id, ClaimID: 2, Match: "prefix", Pattern: "", Kinds: []string{"identify"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("claims %+v, want %+v", got, want)
	}
}

// A gateway at its document bound answers a delete of a document it would
// have to load UNAVAILABLE (retry), not INTERNAL.
func TestDeleteAtDocumentBound(t *testing.T) {
	e := startEnv(t, envOpts{gateway: gateway.Config{MaxDocuments: 1}})
	if _, err := dialPeer(t, e, peer.Options{}).Share(ctxT(t), "held", newDoc()); err != nil {
		t.Fatal(err)
	}
	_, err := e.client.DeleteDocument(ctxT(t), &v1.DeleteDocumentRequest{Document: "other"})
	wantCode(t, err, codes.Unavailable)
	if !strings.Contains(status.Convert(err).Message(), string(gateway.ReasonTooManyDocuments)) {
		t.Fatalf("%v does not name its reason", err)
	}
}

// ListDocuments with include_links names each linked peer: its connection
// id, address and identity; without it, only the count.
func TestListDocumentsIncludesLinks(t *testing.T) {
	e := startEnv(t, envOpts{})
	p1, p2 := dialPeer(t, e, peer.Options{}), dialPeer(t, e, peer.Options{})
	if _, err := p1.Share(ctxT(t), "doc", newDoc()); err != nil {
		t.Fatal(err)
	}
	if _, err := p2.Join(ctxT(t), "doc"); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, l := range e.gw.Status(ctxT(t)).Links {
		n, _ := strconv.ParseUint(strings.TrimPrefix(l.ID, "c"), 10, 64)
		ids = append(ids, n)
	}
	list, err := e.client.ListDocuments(ctxT(t), &v1.ListDocumentsRequest{IncludeLinks: true})
	if err != nil || len(list.Documents) != 1 {
		t.Fatalf("list %v %v", list, err)
	}
	d := list.Documents[0]
	if d.LinkCount != 2 || len(d.Links) != 2 || len(ids) != 2 {
		t.Fatalf("document %v, status ids %v", d, ids)
	}
	for i, l := range d.Links {
		if l.ConnectionId != ids[i] || l.RemoteAddr != "127.0.0.1" || !l.Identity.GetAnonymous() {
			t.Fatalf("link %d: %v, want connection %d", i, l, ids[i])
		}
	}
	list, err = e.client.ListDocuments(ctxT(t), &v1.ListDocumentsRequest{})
	if err != nil || len(list.Documents) != 1 || len(list.Documents[0].Links) != 0 || list.Documents[0].LinkCount != 2 {
		t.Fatalf("list without links %v %v", list, err)
	}
}
