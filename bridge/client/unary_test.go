package client_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/weftgate/weftgate/bridge/client"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestDialOptionsRefused(t *testing.T) {
	ctx := context.Background()
	for name, o := range map[string]client.Options{
		"token with space": {Token: "a b"},
		"long backend":     {Backend: string(make([]byte, client.MaxBackendBytes+1))},
		"in flight":        {MaxInFlight: client.MaxMaxInFlight + 1},
		"negative bytes":   {MaxRecvMessageBytes: -1},
	} {
		if c, err := client.Dial(ctx, "passthrough:///x", o); err == nil {
			c.Close()
			t.Errorf("%s: Dial accepted %+v", name, o)
		}
	}
}

// Dial gives up when its context ends before the gateway answers.
func TestDialNotReady(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := client.Dial(ctx, "passthrough:///127.0.0.1:1", client.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial = %v, want context.Canceled", err)
	}
}

func TestGetState(t *testing.T) {
	g := newFake(t, "a-long-enough-token")
	o := g.options()
	o.Token = "a-long-enough-token"
	c := g.dial(t, o)
	state := commit.Commit{Deltas: []commit.Delta{set("a", "1"), set("b", "2")}}
	g.getState = func(_ context.Context, r *v1.GetStateRequest) (*v1.GetStateResponse, error) {
		switch r.GetDocument() {
		case "d":
			return &v1.GetStateResponse{State: stateProto(t, state), Cursor: 12}, nil
		case "empty":
			return &v1.GetStateResponse{State: stateProto(t, commit.Commit{})}, nil
		}
		return nil, status.Error(codes.NotFound, "no such document")
	}
	st, cur, err := c.GetState(t.Context(), "d")
	_, canon := canonical(t, state)
	if err != nil || cur != 12 || st.Root != (client.Root{ID: rootID, Kind: commit.Object}) || len(st.Commit.Deltas) != 2 || st.Commit.Deltas[1] != canon.Deltas[1] {
		t.Fatalf("GetState = %+v, %d, %v", st, cur, err)
	}
	if st, cur, err := c.GetState(t.Context(), "empty"); err != nil || cur != 0 || len(st.Commit.Deltas) != 0 {
		t.Fatalf("empty GetState = %+v, %d, %v", st, cur, err)
	}
	if _, _, err := c.GetState(t.Context(), "nope"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("missing GetState = %v, want ErrNotFound", err)
	}

	o.Token = "the-wrong-token-here"
	bad := g.dial(t, o)
	if _, _, err := bad.GetState(t.Context(), "d"); status.Code(errors.Unwrap(err)) != codes.Unauthenticated {
		t.Fatalf("GetState with a bad token = %v", err)
	}
}

func TestUnaryWrites(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	cm := commit.Commit{Deltas: []commit.Delta{set("title", "t")}}
	var got *v1.WriteCommitRequest
	g.writeCommit = func(_ context.Context, r *v1.WriteCommitRequest) (*v1.WriteCommitResponse, error) {
		got = r
		if r.ExpectedCursor != nil && *r.ExpectedCursor != 3 {
			return &v1.WriteCommitResponse{Result: &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_CURSOR_MISMATCH, Cursor: 3}}, nil
		}
		return &v1.WriteCommitResponse{Result: &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_APPLIED, Cursor: 4, Commit: both(t, cm)}}, nil
	}
	r, err := c.WriteCommit(t.Context(), "d", cm, client.WriteOptions{ExpectedCursor: client.Expect(0), Label: "l"})
	if err != nil || r.Status != client.WriteCursorMismatch || r.Cursor != 3 || r.Applied != nil {
		t.Fatalf("mismatch = %+v, %v", r, err)
	}
	if got.ExpectedCursor == nil || *got.ExpectedCursor != 0 || got.GetWriter() != "test" || got.GetLabel() != "l" || len(got.GetCommit().GetEncoded()) == 0 {
		t.Fatalf("request = %v", got)
	}
	r, err = c.WriteCommit(t.Context(), "d", cm, client.WriteOptions{Writer: "importer"})
	if err != nil || r.Status != client.WriteApplied || r.Cursor != 4 || r.Applied == nil || got.ExpectedCursor != nil || got.GetWriter() != "importer" {
		t.Fatalf("applied = %+v, %v (request %v)", r, err, got)
	}
	if _, err := c.WriteCommit(t.Context(), "d", commit.Commit{}, client.WriteOptions{}); err == nil {
		t.Fatal("an empty commit was sent")
	}
	if _, err := c.WriteCommit(t.Context(), "d", cm, client.WriteOptions{Label: string(make([]byte, client.MaxLabelBytes+1))}); err == nil {
		t.Fatal("an over-long label was sent")
	}

	g.replaceState = func(_ context.Context, r *v1.ReplaceStateRequest) (*v1.ReplaceStateResponse, error) {
		if r.GetState().GetCommit() == nil {
			return &v1.ReplaceStateResponse{Result: &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_UNCHANGED, Cursor: 4}}, nil
		}
		return &v1.ReplaceStateResponse{Result: &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_REFUSED, Cursor: 4,
			Reasons: []*v1.Reason{{Code: "forbidden", Path: &v1.Path{Steps: []string{"title"}}}}}}, nil
	}
	root := client.Root{ID: rootID, Kind: commit.Object}
	if r, err := c.ReplaceState(t.Context(), "d", client.State{Root: root}, client.WriteOptions{}); err != nil || r.Status != client.WriteUnchanged {
		t.Fatalf("unchanged = %+v, %v", r, err)
	}
	r, err = c.ReplaceState(t.Context(), "d", client.State{Root: root, Commit: cm}, client.WriteOptions{})
	if err != nil || r.Status != client.WriteRefused || r.Reasons[0].String() != "forbidden at /title" {
		t.Fatalf("refused = %+v, %v", r, err)
	}
}

func TestListDocumentsPages(t *testing.T) {
	g := newFake(t, "")
	c := g.dial(t, g.options())
	var reqs []*v1.ListDocumentsRequest
	g.list = func(_ context.Context, r *v1.ListDocumentsRequest) (*v1.ListDocumentsResponse, error) {
		reqs = append(reqs, r)
		start := 0
		fmt.Sscan(r.GetPageToken(), &start)
		resp := &v1.ListDocumentsResponse{}
		for i := start; i < start+2 && i < 5; i++ {
			resp.Documents = append(resp.Documents, &v1.DocumentInfo{Name: fmt.Sprintf("doc%d", i), Root: rootProto(), Cursor: uint64(i), LinkCount: 1,
				Links: []*v1.Peer{{ConnectionId: uint64(i)}}})
		}
		if start+2 < 5 {
			resp.NextPageToken = fmt.Sprint(start + 2)
		}
		return resp, nil
	}
	var names []string
	p := client.Prefix("doc")
	for d, err := range c.ListDocuments(t.Context(), client.ListOptions{Pattern: &p, PageSize: 2, IncludeLinks: true}) {
		if err != nil {
			t.Fatal(err)
		}
		if d.Cursor != uint64(len(names)) || len(d.Links) != 1 || d.Root.ID != rootID {
			t.Fatalf("info = %+v", d)
		}
		names = append(names, d.Name)
	}
	if fmt.Sprint(names) != "[doc0 doc1 doc2 doc3 doc4]" || len(reqs) != 3 || reqs[0].GetPattern().GetPrefix() != "doc" || reqs[2].GetPageToken() != "4" {
		t.Fatalf("listed %v in %d calls", names, len(reqs))
	}
	// Stopping early makes no further call.
	reqs = nil
	for range c.ListDocuments(t.Context(), client.ListOptions{}) {
		break
	}
	if len(reqs) != 1 {
		t.Fatalf("an early break made %d calls", len(reqs))
	}
	g.list = func(context.Context, *v1.ListDocumentsRequest) (*v1.ListDocumentsResponse, error) {
		return nil, status.Error(codes.Unavailable, "down")
	}
	for _, err := range c.ListDocuments(t.Context(), client.ListOptions{}) {
		if status.Code(errors.Unwrap(err)) != codes.Unavailable {
			t.Fatalf("a failed page yielded %v", err)
		}
	}
}

func TestPatternAndReasonText(t *testing.T) {
	if !client.Prefix("a:").Match("a:1") || client.Prefix("a:").Match("b") || !client.Exact("x").Match("x") || client.Exact("x").Match("xy") {
		t.Fatal("Match is wrong")
	}
	if s := client.Prefix("a:").String(); s != "a:*" {
		t.Fatalf("String = %q", s)
	}
	if s := client.Refuse("forbidden", "no").String(); s != "forbidden: no" {
		t.Fatalf("Reason text = %q", s)
	}
	v := client.CommitView{Paths: [][]string{{"admin"}, {"admin", "x"}, {"administrator"}, nil, {}}}
	if got := fmt.Sprint(v.Under("admin")); got != "[0 1]" {
		t.Fatalf("Under(admin) = %s", got)
	}
	if got := fmt.Sprint(v.Under()); got != "[0 1 2 4]" {
		t.Fatalf("Under() = %s: everything with a path", got)
	}
}
