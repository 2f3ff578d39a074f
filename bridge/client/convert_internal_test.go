package client

import (
	"context"
	"errors"
	"slices"
	"testing"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/pbconv"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// The encoded view's paths become CommitView.Paths; a count that does not
// match the bytes is refused, and an empty Path means no path.
func TestViewFromEncodedPaths(t *testing.T) {
	c := commit.Commit{Deltas: []commit.Delta{
		{Op: commit.Add, ID: commit.ID{11: 1}, Ref: commit.ObjectKey("a"), Value: commit.IntValue(1)},
		{Op: commit.Add, ID: commit.ID{11: 2}, Ref: commit.ObjectKey("b"), Value: commit.IntValue(2)},
	}}
	b, err := commit.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	v, err := viewFrom(pbconv.CommitEncodedTo(b, 2, [][]string{{"a"}, nil}), commit.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Paths) != 2 || !slices.Equal(v.Paths[0], []string{"a"}) || v.Paths[1] != nil || len(v.Commit.Deltas) != 2 {
		t.Fatalf("view %+v", v)
	}
	_, err = viewFrom(&v1.Commit{Encoded: b, Paths: []*v1.Path{{Steps: []string{"a"}}}}, commit.Limits{})
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Reason != protocol.InvalidCommit {
		t.Fatalf("one path for two deltas: %v, want %s", err, protocol.InvalidCommit)
	}
	// With neither paths nor deltas (a state commit) every path is nil.
	v, err = viewFrom(&v1.Commit{Encoded: b}, commit.Limits{})
	if err != nil || len(v.Paths) != 2 || v.Paths[0] != nil {
		t.Fatalf("view %+v, %v", v, err)
	}
}

// The SDK claims with the encoded view.
func TestClaimAsksForEncodedView(t *testing.T) {
	cl := &claim{id: 3, pattern: Prefix("doc"), h: Handlers{Accept: func(context.Context, AcceptQuestion) ([]Reason, error) { return nil, nil }}}
	if got := cl.message().GetClaim().GetCommitView(); got != v1.CommitView_COMMIT_VIEW_ENCODED {
		t.Fatalf("commit view %v", got)
	}
}
