package pbconv

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/types/known/structpb"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// MaxSafeInt is 2^53: whole numbers within it are int_value.
const MaxSafeInt = 1 << 53

// IDTo is the proto form of an id.
func IDTo(id commit.ID) *v1.Id { return &v1.Id{Value: append([]byte(nil), id[:]...)} }

// IDFrom reads an id: exactly 12 bytes.
func IDFrom(p *v1.Id) (commit.ID, error) {
	var id commit.ID
	if p == nil || len(p.Value) != len(id) {
		return id, protocol.Errorf(protocol.InvalidID, "an id is exactly 12 bytes")
	}
	copy(id[:], p.Value)
	return id, nil
}

// KindTo is the proto form of an observable kind.
func KindTo(k commit.Kind) v1.Kind {
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

// KindFrom reads an observable kind.
func KindFrom(k v1.Kind) (commit.Kind, error) {
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

// RefTo is the proto form of a slot reference.
func RefTo(r commit.Ref) *v1.Ref {
	switch r.Kind {
	case commit.Array:
		return &v1.Ref{Key: &v1.Ref_ArrayPosition{ArrayPosition: []byte(r.Key)}}
	case commit.Map:
		return &v1.Ref{Key: &v1.Ref_MapKey{MapKey: &v1.Id{Value: []byte(r.Key)}}}
	}
	return &v1.Ref{Key: &v1.Ref_ObjectKey{ObjectKey: r.Key}}
}

// RefFrom reads a slot reference: exactly one key, and a valid position for arrays.
func RefFrom(p *v1.Ref) (commit.Ref, error) {
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
			id, err := IDFrom(k.MapKey)
			if err != nil {
				return commit.Ref{}, err
			}
			return commit.MapKey(id), nil
		}
	}
	return commit.Ref{}, protocol.Errorf(protocol.InvalidRef, "a ref sets exactly one key")
}

// ValueTo is the proto form of a value.
func ValueTo(v commit.Value) *v1.Value {
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
		return &v1.Value{Kind: &v1.Value_Reference{Reference: &v1.Reference{Edge: edge, Kind: KindTo(v.Ref.Kind), Id: IDTo(v.Ref.ID)}}}
	}
	return &v1.Value{Kind: &v1.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}
}

// ValueFrom reads a value with the encoding's number rules.
func ValueFrom(p *v1.Value) (commit.Value, error) {
	if p == nil {
		return commit.Value{}, protocol.Errorf(protocol.MissingValue, "add and replace carry a value")
	}
	switch k := p.Kind.(type) {
	case *v1.Value_NullValue:
		return commit.NullValue(), nil
	case *v1.Value_BoolValue:
		return commit.BoolValue(k.BoolValue), nil
	case *v1.Value_IntValue:
		if k.IntValue > MaxSafeInt || k.IntValue < -MaxSafeInt {
			return commit.Value{}, protocol.Errorf(protocol.IntegerOutOfRange, "an integer is within plus or minus 2^53")
		}
		return commit.IntValue(k.IntValue), nil
	case *v1.Value_FloatValue:
		f := k.FloatValue
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return commit.Value{}, protocol.Errorf(protocol.NonFiniteFloat, "NaN and the infinities have no encoding")
		}
		if f == math.Trunc(f) && f >= -MaxSafeInt && f <= MaxSafeInt {
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
		kind, err := KindFrom(r.Kind)
		if err != nil {
			return commit.Value{}, err
		}
		id, err := IDFrom(r.Id)
		if err != nil {
			return commit.Value{}, err
		}
		return commit.RefTo(commit.Reference{Edge: edge, Kind: kind, ID: id}), nil
	}
	return commit.Value{}, protocol.Errorf(protocol.MissingValue, "a value sets exactly one kind")
}

// OpTo is the proto form of a delta type.
func OpTo(o commit.Op) v1.DeltaType {
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

// DeltaFrom reads one delta of the typed view.
func DeltaFrom(p *v1.Delta) (commit.Delta, error) {
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
	if d.ID, err = IDFrom(p.Id); err != nil {
		return d, err
	}
	if d.Ref, err = RefFrom(p.Ref); err != nil {
		return d, err
	}
	if d.Op == commit.Remove {
		if p.Value != nil {
			return d, protocol.Errorf(protocol.UnexpectedValue, "a remove carries no value")
		}
		return d, nil
	}
	d.Value, err = ValueFrom(p.Value)
	return d, err
}

// CommitTo is both forms of c: its bytes and the typed view, with each
// delta's path (paths may be nil, or shorter than the deltas: no path).
func CommitTo(c commit.Commit, encoded []byte, paths [][]string) *v1.Commit {
	out := &v1.Commit{Encoded: encoded, Tag: c.Tag, Deltas: make([]*v1.Delta, len(c.Deltas))}
	for i, d := range c.Deltas {
		pd := &v1.Delta{Type: OpTo(d.Op), Id: IDTo(d.ID), Ref: RefTo(d.Ref)}
		if d.Op != commit.Remove {
			pd.Value = ValueTo(d.Value)
		}
		if i < len(paths) {
			pd.Path = PathTo(paths[i])
		}
		out.Deltas[i] = pd
	}
	return out
}

// CommitEncodedTo is a commit of n deltas as its bytes and each delta's
// path, without the typed deltas (COMMIT_VIEW_ENCODED): an empty Path where
// none reaches. The steps are shared with paths, not copied.
func CommitEncodedTo(encoded []byte, n int, paths [][]string) *v1.Commit {
	ps := make([]v1.Path, n)
	out := &v1.Commit{Encoded: encoded, Paths: make([]*v1.Path, n)}
	for i := range ps {
		if i < len(paths) {
			ps[i].Steps = paths[i]
		}
		out.Paths[i] = &ps[i]
	}
	return out
}

// PathTo is nil for nil (no attach path), and a message with no steps
// for the root's empty path.
func PathTo(p []string) *v1.Path {
	if p == nil {
		return nil
	}
	return &v1.Path{Steps: append([]string(nil), p...)}
}

// PathFrom reads a path: nil for none, empty for the root.
func PathFrom(p *v1.Path) []string {
	if p == nil {
		return nil
	}
	return append([]string{}, p.Steps...)
}
