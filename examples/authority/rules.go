package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/protocol/commit"
)

// Refusal codes this authority sends.
const (
	ReasonForbidden     = "forbidden"
	ReasonValueTooLarge = "value-too-large"
)

// Rules are the commit rules: who may write under Protected, and how big a
// text or byte value may be.
type Rules struct {
	// Protected is a path from the root ("admin"); empty protects nothing.
	Protected []string
	// Role is what a peer needs to write under Protected.
	Role string
	// MaxValueBytes bounds text and byte values; 0 is no bound.
	MaxValueBytes int
}

// Accept refuses, with one reason per offending delta and its path, what
// the rules forbid. Backend writes are trusted with the protected path but
// not with the size bound, which protects every browser that receives them.
func (r Rules) Accept(_ context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
	var out []client.Reason
	mayProtected := q.Origin.Backend != nil || (q.Origin.Peer != nil && q.Origin.Peer.Identity.HasRole(r.Role))
	if len(r.Protected) > 0 && !mayProtected {
		for _, i := range q.Under(r.Protected...) {
			out = append(out, client.Refuse(ReasonForbidden,
				fmt.Sprintf("writing under /%s needs the role %q", joinPath(r.Protected), r.Role), q.Paths[i]...))
		}
	}
	if r.MaxValueBytes > 0 {
		for i, d := range q.Commit.Deltas {
			if d.Op == commit.Remove || (d.Value.Type != commit.Text && d.Value.Type != commit.Bytes) || len(d.Value.Str) <= r.MaxValueBytes {
				continue
			}
			rs := client.Refuse(ReasonValueTooLarge, fmt.Sprintf("a %d-byte value is over the %d-byte bound", len(d.Value.Str), r.MaxValueBytes))
			rs.Path = q.Paths[i]
			if !slices.ContainsFunc(out, func(o client.Reason) bool { return o.Code == rs.Code && slices.Equal(o.Path, rs.Path) }) {
				out = append(out, rs)
			}
		}
	}
	return out, nil
}

func joinPath(p []string) string {
	s := ""
	for i, step := range p {
		if i > 0 {
			s += "/"
		}
		s += step
	}
	return s
}
