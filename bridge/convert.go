package bridge

import (
	"github.com/weftgate/weftgate/gateway/admission"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/pbconv"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Conversions between the aweft model (protocol/commit) and its typed proto
// view. The proto enum numbers are the API's own (0 is unspecified), so
// every enum is mapped by name, never by number.

func rootToProto(r frame.Root) *v1.Root {
	return &v1.Root{Id: pbconv.IDTo(r.ID), Kind: pbconv.KindTo(r.Kind)}
}

func rootFromProto(p *v1.Root) (frame.Root, error) {
	if p == nil {
		return frame.Root{}, protocol.Errorf(protocol.InvalidCommit, "a root is required")
	}
	id, err := pbconv.IDFrom(p.Id)
	if err != nil {
		return frame.Root{}, err
	}
	k, err := pbconv.KindFrom(p.Kind)
	if err != nil {
		return frame.Root{}, err
	}
	return frame.Root{ID: id, Kind: k}, nil
}

// commitFromProto takes exactly one form and returns the commit and its
// canonical bytes. Decode-stage refusals are *protocol.Error values.
func commitFromProto(p *v1.Commit, lim commit.Limits) (commit.Commit, []byte, error) {
	if p == nil {
		return commit.Commit{}, nil, protocol.Errorf(protocol.InvalidCommit, "a commit is required")
	}
	hasBytes, hasDeltas := len(p.Encoded) > 0, len(p.Deltas) > 0
	if hasBytes == hasDeltas {
		return commit.Commit{}, nil, protocol.Errorf(protocol.InvalidCommit, "set exactly one of encoded and deltas")
	}
	if hasBytes {
		if len(p.Tag) > 0 {
			return commit.Commit{}, nil, protocol.Errorf(protocol.InvalidCommit, "the tag of an encoded commit is inside its bytes")
		}
		c, err := commit.DecodeWithLimits(p.Encoded, lim)
		return c, p.Encoded, err
	}
	c := commit.Commit{Deltas: make([]commit.Delta, len(p.Deltas))}
	if len(p.Tag) > 0 {
		c.Tag = append([]byte(nil), p.Tag...)
	}
	for i, pd := range p.Deltas {
		d, err := pbconv.DeltaFrom(pd)
		if err != nil {
			return commit.Commit{}, nil, err
		}
		c.Deltas[i] = d
	}
	b, err := commit.Encode(c)
	if err != nil {
		return commit.Commit{}, nil, err
	}
	// Decode the canonical bytes so the commit holds deltas in their order
	// and the limits are checked on exactly what is stored.
	c, err = commit.DecodeWithLimits(b, lim)
	return c, b, err
}

// stateToProto is a document state: root and its state commit (nil when
// empty), with each delta's path.
func stateToProto(root frame.Root, state []byte) (*v1.DocumentState, error) {
	out := &v1.DocumentState{Root: rootToProto(root)}
	if len(state) == 0 {
		return out, nil
	}
	c, err := commit.Decode(state)
	if err != nil {
		return nil, err
	}
	d := document.New(root.ID, root.Kind, document.Limits{})
	out.Commit = pbconv.CommitTo(c, state, d.Paths(c))
	return out, nil
}

// stateFromProto returns the root and the state bytes (nil when empty).
func stateFromProto(p *v1.DocumentState, lim commit.Limits) (frame.Root, []byte, error) {
	if p == nil {
		return frame.Root{}, nil, protocol.Errorf(protocol.InvalidCommit, "a state is required")
	}
	root, err := rootFromProto(p.Root)
	if err != nil {
		return frame.Root{}, nil, err
	}
	if p.Commit == nil || (len(p.Commit.Encoded) == 0 && len(p.Commit.Deltas) == 0) {
		return root, nil, nil
	}
	_, b, err := commitFromProto(p.Commit, lim)
	return root, b, err
}

func reasonsToProto(rs []frame.Reason) []*v1.Reason {
	out := make([]*v1.Reason, len(rs))
	for i, r := range rs {
		out[i] = &v1.Reason{Code: r.Code, Message: r.Message, Path: pbconv.PathTo(r.Path)}
	}
	return out
}

// reasonsFromProto converts a backend's reasons; false when one has no
// code, which makes the answer malformed.
func reasonsFromProto(rs []*v1.Reason) ([]frame.Reason, bool) {
	out := make([]frame.Reason, len(rs))
	for i, r := range rs {
		if r == nil || r.Code == "" {
			return nil, false
		}
		out[i] = frame.Reason{Code: r.Code, Message: r.Message, Path: pbconv.PathFrom(r.Path)}
	}
	return out, true
}

func identityToProto(id admission.Identity) *v1.Identity {
	p := new(v1.Identity)
	setIdentity(p, id)
	return p
}

func setIdentity(p *v1.Identity, id admission.Identity) {
	p.Id, p.Anonymous, p.Roles, p.Claims = id.ID, id.Anonymous, id.Roles, id.Claims
}

func identityFromProto(p *v1.Identity) admission.Identity {
	if p == nil || (p.Id == "" && p.Anonymous) || (p.Id == "" && len(p.Roles) == 0 && len(p.Claims) == 0) {
		return admission.Identity{Anonymous: true}
	}
	return admission.Identity{ID: p.Id, Anonymous: p.Anonymous, Roles: p.Roles, Claims: p.Claims}
}

func kindOf(k uint8) commit.Kind { return commit.Kind(k) }
