package bridge_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
)

func pid(id commit.ID) *v1.Id { return &v1.Id{Value: id[:]} }

func addText(root commit.ID, key, val string) *v1.Commit {
	return &v1.Commit{Deltas: []*v1.Delta{{
		Type:  v1.DeltaType_DELTA_TYPE_ADD,
		Id:    pid(root),
		Ref:   &v1.Ref{Key: &v1.Ref_ObjectKey{ObjectKey: key}},
		Value: &v1.Value{Kind: &v1.Value_TextValue{TextValue: val}},
	}}}
}

// A backend's stream write and a unary state replacement reach every peer,
// as ordinary commits with the backend as origin.
func TestBackendWritesReachEveryPeer(t *testing.T) {
	e := startEnv(t, envOpts{})
	a := dialPeer(t, e, peer.Options{})
	da, err := a.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	b := dialPeer(t, e, peer.Options{})
	db, err := b.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	root, _ := da.Root()
	start := cursorOf(t, e.gw, "doc")

	w := openBackend(t, e, "writer", 0)
	w.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Write{Write: &v1.Write{WriteId: 9, Change: &v1.Write_Commit{Commit: &v1.CommitWrite{
		Document: "doc", Commit: addText(root, "from", "backend"), Label: "req-1", ExpectedCursor: &start,
	}}}}})
	ack := w.nextCtl().GetWriteAck()
	if ack == nil || ack.WriteId != 9 || ack.Result.Status != v1.WriteStatus_WRITE_STATUS_APPLIED || ack.Result.Cursor != start+1 {
		t.Fatalf("ack %v, want applied at %d", ack, start+1)
	}
	if p := ack.Result.Commit.Deltas[0].Path.GetSteps(); len(p) != 1 || p[0] != "from" {
		t.Fatalf("path %v, want [from]", p)
	}
	for _, d := range []*peer.Doc{da, db} {
		ap := nextEvent[peer.Applied](t, d)
		if ap.Commit.Deltas[0].Ref.Key != "from" {
			t.Fatalf("%v", ap)
		}
	}

	// A stale compare-and-swap changes nothing and says where the document is.
	w.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Write{Write: &v1.Write{WriteId: 10, Change: &v1.Write_Commit{Commit: &v1.CommitWrite{
		Document: "doc", Commit: addText(root, "stale", "x"), ExpectedCursor: &start,
	}}}}})
	if ack := w.nextCtl().GetWriteAck(); ack.Result.Status != v1.WriteStatus_WRITE_STATUS_CURSOR_MISMATCH || ack.Result.Cursor != start+1 {
		t.Fatalf("ack %v, want cursor mismatch at %d", ack, start+1)
	}
	// A malformed write is refused; the stream goes on.
	w.send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Write{Write: &v1.Write{WriteId: 11, Change: &v1.Write_Commit{Commit: &v1.CommitWrite{
		Document: "doc", Commit: &v1.Commit{},
	}}}}})
	if ack := w.nextCtl().GetWriteAck(); ack.Result.Status != v1.WriteStatus_WRITE_STATUS_REFUSED || ack.Result.Reasons[0].Code != "invalid-commit" {
		t.Fatalf("ack %v, want invalid-commit", ack)
	}

	// The state replacement: keep "from", drop the rest, add "title".
	st := &v1.DocumentState{Root: &v1.Root{Id: pid(root), Kind: v1.Kind_KIND_OBJECT}, Commit: &v1.Commit{Deltas: []*v1.Delta{
		addText(root, "from", "backend").Deltas[0], addText(root, "title", "replaced").Deltas[0],
	}}}
	resp, err := e.client.ReplaceState(ctxT(t), &v1.ReplaceStateRequest{Document: "doc", State: st, Writer: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.Result; r.Status != v1.WriteStatus_WRITE_STATUS_APPLIED || r.Cursor != start+2 || len(r.Commit.Deltas) != 1 {
		t.Fatalf("replace %v, want applied at %d with one delta", r, start+2)
	}
	for _, d := range []*peer.Doc{da, db} {
		ap := nextEvent[peer.Applied](t, d)
		if ap.Commit.Deltas[0].Ref.Key != "title" {
			t.Fatalf("%v", ap)
		}
	}
	again, err := e.client.ReplaceState(ctxT(t), &v1.ReplaceStateRequest{Document: "doc", State: st})
	if err != nil || again.Result.Status != v1.WriteStatus_WRITE_STATUS_UNCHANGED || again.Result.Cursor != start+2 {
		t.Fatalf("replace again %v %v, want unchanged", again, err)
	}
	if keys := keysOf(t, e, "doc"); len(keys) != 2 || keys["title"] != "replaced" {
		t.Fatalf("state %v", keys)
	}
}

func TestUnaryCalls(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true})
	ctx := ctxT(t)
	if _, err := e.client.GetState(ctx, &v1.GetStateRequest{Document: "nope"}); status.Code(err) != codes.NotFound {
		t.Fatalf("GetState of nothing: %v, want NotFound", err)
	}
	root := commit.NewID()
	w, err := e.client.WriteCommit(ctx, &v1.WriteCommitRequest{Document: "d", Commit: addText(root, "a", "1")})
	if err != nil || w.Result.Status != v1.WriteStatus_WRITE_STATUS_NO_DOCUMENT {
		t.Fatalf("%v %v, want no-document", w, err)
	}
	pr := &v1.Root{Id: pid(root), Kind: v1.Kind_KIND_OBJECT}
	zero := uint64(0)
	w, err = e.client.WriteCommit(ctx, &v1.WriteCommitRequest{Document: "d", Commit: addText(root, "a", "1"), CreateRoot: pr, ExpectedCursor: &zero, Writer: "ops"})
	if err != nil || w.Result.Status != v1.WriteStatus_WRITE_STATUS_APPLIED || w.Result.Cursor != 1 {
		t.Fatalf("%v %v, want applied at 1", w, err)
	}
	if len(w.Result.Commit.Encoded) == 0 || len(w.Result.Commit.Deltas) != 1 {
		t.Fatalf("commit %v, want both forms", w.Result.Commit)
	}
	w, err = e.client.WriteCommit(ctx, &v1.WriteCommitRequest{Document: "d", Commit: addText(root, "b", "2"), ExpectedCursor: &zero})
	if err != nil || w.Result.Status != v1.WriteStatus_WRITE_STATUS_CURSOR_MISMATCH || w.Result.Cursor != 1 {
		t.Fatalf("%v %v, want cursor mismatch at 1", w, err)
	}
	// An apply-stage refusal is a result; a malformed commit is INVALID_ARGUMENT with its reason.
	w, err = e.client.WriteCommit(ctx, &v1.WriteCommitRequest{Document: "d", Commit: addText(root, "a", "again")})
	if err != nil || w.Result.Status != v1.WriteStatus_WRITE_STATUS_REFUSED || w.Result.Reasons[0].Code != "slot-exists" {
		t.Fatalf("%v %v, want refused slot-exists", w, err)
	}
	bad := addText(root, "f", "x")
	bad.Deltas[0].Value = &v1.Value{Kind: &v1.Value_FloatValue{FloatValue: 2}}
	for name, c := range map[string]*v1.Commit{
		"non-canonical-float": bad,
		"invalid-commit":      {Encoded: []byte{1}, Deltas: bad.Deltas},
		"truncated":           {Encoded: []byte{0x82}},
	} {
		_, err := e.client.WriteCommit(ctx, &v1.WriteCommitRequest{Document: "d", Commit: c})
		if status.Code(err) != codes.InvalidArgument || !strings.HasPrefix(status.Convert(err).Message(), name) {
			t.Fatalf("%s: %v, want InvalidArgument naming it", name, err)
		}
	}
	gs, err := e.client.GetState(ctx, &v1.GetStateRequest{Document: "d"})
	if err != nil || gs.Cursor != 1 || len(gs.State.Commit.Deltas) != 1 || gs.State.Commit.Deltas[0].Path.GetSteps()[0] != "a" {
		t.Fatalf("%v %v", gs, err)
	}
	if _, err := e.client.WriteCommit(ctx, &v1.WriteCommitRequest{Commit: bad}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("no document name: %v", err)
	}
	// A root mismatch on create is refused.
	w, err = e.client.WriteCommit(ctx, &v1.WriteCommitRequest{Document: "d", Commit: addText(root, "z", "1"), CreateRoot: &v1.Root{Id: pid(commit.NewID()), Kind: v1.Kind_KIND_OBJECT}})
	if err != nil || w.Result.Status != v1.WriteStatus_WRITE_STATUS_REFUSED || w.Result.Reasons[0].Code != "root-mismatch" {
		t.Fatalf("%v %v, want root-mismatch", w, err)
	}
	// Listing pages by name.
	for _, n := range []string{"e", "f", "g"} {
		if _, err := e.client.WriteCommit(ctx, &v1.WriteCommitRequest{Document: n, Commit: addText(root, "a", "1"), CreateRoot: pr}); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	token := ""
	for {
		page, err := e.client.ListDocuments(ctx, &v1.ListDocumentsRequest{PageSize: 3, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range page.Documents {
			names = append(names, d.Name)
			if d.Cursor != 1 || d.Root == nil || !d.Loaded {
				t.Fatalf("%v", d)
			}
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	if strings.Join(names, ",") != "d,e,f,g" {
		t.Fatalf("listed %v", names)
	}
	page, err := e.client.ListDocuments(ctx, &v1.ListDocumentsRequest{Pattern: prefix("f")})
	if err != nil || len(page.Documents) != 1 || page.Documents[0].Name != "f" {
		t.Fatalf("%v %v", page, err)
	}
	_ = bridge.PolicyOpen
}
