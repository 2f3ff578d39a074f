package bridge

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weftgate/weftgate/gateway/admission"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Conversions between the aweft model (protocol/commit) and its typed proto
// view. The proto enum numbers are the API's own (0 is unspecified), so
// every enum is mapped by name, never by number.

// maxSafeInt is 2^53: whole numbers within it are int_value.
const maxSafeInt = 1 << 53

func idToProto(id commit.ID) *v1.Id { return &v1.Id{Value: append([]byte(nil), id[:]...)} }

func idFromProto(p *v1.Id) (commit.ID, error) {
	var id commit.ID
	if p == nil || len(p.Value) != len(id) {
		return id, protocol.Errorf(protocol.InvalidID, "an id is exactly 12 bytes")
	}
	copy(id[:], p.Value)
	return id, nil
}

func kindToProto(k commit.Kind) v1.Kind {
	switch k {
	case commit.Object:
		return v1.Kind_KIND_OBJECT
	case commit.Array:
		return v1.Kind_KIND_ARRAY
	case commit.Map:
		return v1.Kind_KIND_MAP
	}
	return v1.Kind_KIND_UNSPECIFIED
}

func kindFromProto(k v1.Kind) (commit.Kind, error) {
	switch k {
	case v1.Kind_KIND_OBJECT:
		return commit.Object, nil
	case v1.Kind_KIND_ARRAY:
		return commit.Array, nil
	case v1.Kind_KIND_MAP:
		return commit.Map, nil
	}
	return 0, protocol.Errorf(protocol.UnknownRefKind, fmt.Sprintf("kind %v is not object, array or map", k))
}

func rootToProto(r frame.Root) *v1.Root {
	return &v1.Root{Id: idToProto(r.ID), Kind: kindToProto(r.Kind)}
}

func rootFromProto(p *v1.Root) (frame.Root, error) {
	if p == nil {
		return frame.Root{}, protocol.Errorf(protocol.InvalidCommit, "a root is required")
	}
	id, err := idFromProto(p.Id)
	if err != nil {
		return frame.Root{}, err
	}
	k, err := kindFromProto(p.Kind)
	if err != nil {
		return frame.Root{}, err
	}
	return frame.Root{ID: id, Kind: k}, nil
}

func refToProto(r commit.Ref) *v1.Ref {
	switch r.Kind {
	case commit.Array:
		return &v1.Ref{Key: &v1.Ref_ArrayPosition{ArrayPosition: []byte(r.Key)}}
	case commit.Map:
		return &v1.Ref{Key: &v1.Ref_MapKey{MapKey: &v1.Id{Value: []byte(r.Key)}}}
	}
	return &v1.Ref{Key: &v1.Ref_ObjectKey{ObjectKey: r.Key}}
}

func refFromProto(p *v1.Ref) (commit.Ref, error) {
	if p != nil {
		switch k := p.Key.(type) {
		case *v1.Ref_ObjectKey:
			return commit.ObjectKey(k.ObjectKey), nil
		case *v1.Ref_ArrayPosition:
			if !commit.ValidPosition(k.ArrayPosition) {
				return commit.Ref{}, protocol.Errorf(protocol.InvalidPosition, "a position is non-empty and does not end in a zero byte")
			}
			return commit.ArrayKey(k.ArrayPosition), nil
		case *v1.Ref_MapKey:
			id, err := idFromProto(k.MapKey)
			if err != nil {
				return commit.Ref{}, err
			}
			return commit.MapKey(id), nil
		}
	}
	return commit.Ref{}, protocol.Errorf(protocol.InvalidRef, "a ref sets exactly one key")
}

func valueToProto(v commit.Value) *v1.Value {
	switch v.Type {
	case commit.Bool:
		return &v1.Value{Kind: &v1.Value_BoolValue{BoolValue: v.Bool}}
	case commit.Int:
		return &v1.Value{Kind: &v1.Value_IntValue{IntValue: v.Int}}
	case commit.Float:
		return &v1.Value{Kind: &v1.Value_FloatValue{FloatValue: v.Float}}
	case commit.Text:
		return &v1.Value{Kind: &v1.Value_TextValue{TextValue: v.Str}}
	case commit.Bytes:
		return &v1.Value{Kind: &v1.Value_BytesValue{BytesValue: []byte(v.Str)}}
	case commit.RefValue:
		edge := v1.Edge_EDGE_ATTACH
		if v.Ref.Edge == commit.Alias {
			edge = v1.Edge_EDGE_ALIAS
		}
		return &v1.Value{Kind: &v1.Value_Reference{Reference: &v1.Reference{Edge: edge, Kind: kindToProto(v.Ref.Kind), Id: idToProto(v.Ref.ID)}}}
	}
	return &v1.Value{Kind: &v1.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}
}

func valueFromProto(p *v1.Value) (commit.Value, error) {
	if p == nil {
		return commit.Value{}, protocol.Errorf(protocol.MissingValue, "add and replace carry a value")
	}
	switch k := p.Kind.(type) {
	case *v1.Value_NullValue:
		return commit.NullValue(), nil
	case *v1.Value_BoolValue:
		return commit.BoolValue(k.BoolValue), nil
	case *v1.Value_IntValue:
		if k.IntValue > maxSafeInt || k.IntValue < -maxSafeInt {
			return commit.Value{}, protocol.Errorf(protocol.IntegerOutOfRange, "an integer is within plus or minus 2^53")
		}
		return commit.IntValue(k.IntValue), nil
	case *v1.Value_FloatValue:
		f := k.FloatValue
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return commit.Value{}, protocol.Errorf(protocol.NonFiniteFloat, "NaN and the infinities have no encoding")
		}
		if f == math.Trunc(f) && f >= -maxSafeInt && f <= maxSafeInt {
			return commit.Value{}, protocol.Errorf(protocol.NonCanonicalFloat, "a whole number within 2^53 is int_value")
		}
		return commit.Value{Type: commit.Float, Float: f}, nil
	case *v1.Value_TextValue:
		return commit.TextValue(k.TextValue), nil
	case *v1.Value_BytesValue:
		return commit.BytesValue(k.BytesValue), nil
	case *v1.Value_Reference:
		r := k.Reference
		if r == nil {
			return commit.Value{}, protocol.Errorf(protocol.InvalidReference, "a reference is required")
		}
		var edge commit.Edge
		switch r.Edge {
		case v1.Edge_EDGE_ATTACH:
			edge = commit.Attach
		case v1.Edge_EDGE_ALIAS:
			edge = commit.Alias
		default:
			return commit.Value{}, protocol.Errorf(protocol.UnknownEdgeKind, "an edge is attach or alias")
		}
		kind, err := kindFromProto(r.Kind)
		if err != nil {
			return commit.Value{}, err
		}
		id, err := idFromProto(r.Id)
		if err != nil {
			return commit.Value{}, err
		}
		return commit.RefTo(commit.Reference{Edge: edge, Kind: kind, ID: id}), nil
	}
	return commit.Value{}, protocol.Errorf(protocol.MissingValue, "a value sets exactly one kind")
}

func opToProto(o commit.Op) v1.DeltaType {
	switch o {
	case commit.Add:
		return v1.DeltaType_DELTA_TYPE_ADD
	case commit.Replace:
		return v1.DeltaType_DELTA_TYPE_REPLACE
	case commit.Remove:
		return v1.DeltaType_DELTA_TYPE_REMOVE
	}
	return v1.DeltaType_DELTA_TYPE_UNSPECIFIED
}

func deltaFromProto(p *v1.Delta) (commit.Delta, error) {
	var d commit.Delta
	if p == nil {
		return d, protocol.Errorf(protocol.InvalidDelta, "a delta is required")
	}
	switch p.Type {
	case v1.DeltaType_DELTA_TYPE_ADD:
		d.Op = commit.Add
	case v1.DeltaType_DELTA_TYPE_REPLACE:
		d.Op = commit.Replace
	case v1.DeltaType_DELTA_TYPE_REMOVE:
		d.Op = commit.Remove
	default:
		return d, protocol.Errorf(protocol.UnknownDeltaType, "a delta is add, replace or remove")
	}
	var err error
	if d.ID, err = idFromProto(p.Id); err != nil {
		return d, err
	}
	if d.Ref, err = refFromProto(p.Ref); err != nil {
		return d, err
	}
	if d.Op == commit.Remove {
		if p.Value != nil {
			return d, protocol.Errorf(protocol.UnexpectedValue, "a remove carries no value")
		}
		return d, nil
	}
	d.Value, err = valueFromProto(p.Value)
	return d, err
}

// pathToProto is nil for nil (no attach path), and a message with no steps
// for the root's empty path.
func pathToProto(p []string) *v1.Path {
	if p == nil {
		return nil
	}
	return &v1.Path{Steps: append([]string(nil), p...)}
}

func pathFromProto(p *v1.Path) []string {
	if p == nil {
		return nil
	}
	return append([]string{}, p.Steps...)
}

// commitToProto is both forms of c; paths may be nil (unknown), else one
// per delta.
func commitToProto(c commit.Commit, b []byte, paths [][]string) *v1.Commit {
	out := &v1.Commit{Encoded: b, Tag: c.Tag, Deltas: make([]*v1.Delta, len(c.Deltas))}
	for i, d := range c.Deltas {
		pd := &v1.Delta{Type: opToProto(d.Op), Id: idToProto(d.ID), Ref: refToProto(d.Ref)}
		if d.Op != commit.Remove {
			pd.Value = valueToProto(d.Value)
		}
		if i < len(paths) {
			pd.Path = pathToProto(paths[i])
		}
		out.Deltas[i] = pd
	}
	return out
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
		d, err := deltaFromProto(pd)
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
	out.Commit = commitToProto(c, state, d.Paths(c))
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
		out[i] = &v1.Reason{Code: r.Code, Message: r.Message, Path: pathToProto(r.Path)}
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
		out[i] = frame.Reason{Code: r.Code, Message: r.Message, Path: pathFromProto(r.Path)}
	}
	return out, true
}

func identityToProto(id admission.Identity) *v1.Identity {
	return &v1.Identity{Id: id.ID, Anonymous: id.Anonymous, Roles: id.Roles, Claims: id.Claims}
}

func identityFromProto(p *v1.Identity) admission.Identity {
	if p == nil || (p.Id == "" && p.Anonymous) || (p.Id == "" && len(p.Roles) == 0 && len(p.Claims) == 0) {
		return admission.Identity{Anonymous: true}
	}
	return admission.Identity{ID: p.Id, Anonymous: p.Anonymous, Roles: p.Roles, Claims: p.Claims}
}

func kindOf(k uint8) commit.Kind { return commit.Kind(k) }
