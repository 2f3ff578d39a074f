package client_test

import (
	"testing"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
)

func fixedID(b byte) commit.ID {
	var id commit.ID
	for i := range id {
		id[i] = b
	}
	return id
}

var rootID = fixedID(1)

// set is an add of text under key in the root object.
func set(key, text string) commit.Delta {
	return commit.Delta{Op: commit.Add, ID: rootID, Ref: commit.ObjectKey(key), Value: commit.TextValue(text)}
}

// canonical returns c's bytes and c as decoded from them (canonical order).
func canonical(t testing.TB, c commit.Commit) ([]byte, commit.Commit) {
	t.Helper()
	b, err := commit.Encode(c)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	d, err := commit.Decode(b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return b, d
}

// both is c in the gateway's two forms, each root-object delta's path its
// key.
func both(t testing.TB, c commit.Commit) *v1.Commit {
	t.Helper()
	b, d := canonical(t, c)
	out := &v1.Commit{Encoded: b, Tag: d.Tag}
	for _, dl := range d.Deltas {
		pd := deltaProto(dl)
		if dl.ID == rootID && dl.Ref.Kind == commit.Object {
			pd.Path = &v1.Path{Steps: []string{dl.Ref.Key}}
		}
		out.Deltas = append(out.Deltas, pd)
	}
	return out
}

// encodedView is c as the gateway sends it under COMMIT_VIEW_ENCODED, which
// the SDK claims with: its bytes and one path a delta.
func encodedView(t testing.TB, c commit.Commit) *v1.Commit {
	t.Helper()
	b, d := canonical(t, c)
	out := &v1.Commit{Encoded: b}
	for _, dl := range d.Deltas {
		p := &v1.Path{}
		if dl.ID == rootID && dl.Ref.Kind == commit.Object {
			p.Steps = []string{dl.Ref.Key}
		}
		out.Paths = append(out.Paths, p)
	}
	return out
}

func deltaProto(d commit.Delta) *v1.Delta {
	out := &v1.Delta{Id: &v1.Id{Value: append([]byte{}, d.ID[:]...)}}
	switch d.Op {
	case commit.Add:
		out.Type = v1.DeltaType_DELTA_TYPE_ADD
	case commit.Replace:
		out.Type = v1.DeltaType_DELTA_TYPE_REPLACE
	case commit.Remove:
		out.Type = v1.DeltaType_DELTA_TYPE_REMOVE
	}
	switch d.Ref.Kind {
	case commit.Object:
		out.Ref = &v1.Ref{Key: &v1.Ref_ObjectKey{ObjectKey: d.Ref.Key}}
	case commit.Array:
		out.Ref = &v1.Ref{Key: &v1.Ref_ArrayPosition{ArrayPosition: []byte(d.Ref.Key)}}
	case commit.Map:
		out.Ref = &v1.Ref{Key: &v1.Ref_MapKey{MapKey: &v1.Id{Value: []byte(d.Ref.Key)}}}
	}
	if d.Op == commit.Remove {
		return out
	}
	switch v := d.Value; v.Type {
	case commit.Null:
		out.Value = &v1.Value{Kind: &v1.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}}
	case commit.Bool:
		out.Value = &v1.Value{Kind: &v1.Value_BoolValue{BoolValue: v.Bool}}
	case commit.Int:
		out.Value = &v1.Value{Kind: &v1.Value_IntValue{IntValue: v.Int}}
	case commit.Float:
		out.Value = &v1.Value{Kind: &v1.Value_FloatValue{FloatValue: v.Float}}
	case commit.Text:
		out.Value = &v1.Value{Kind: &v1.Value_TextValue{TextValue: v.Str}}
	case commit.Bytes:
		out.Value = &v1.Value{Kind: &v1.Value_BytesValue{BytesValue: []byte(v.Str)}}
	case commit.RefValue:
		edge := v1.Edge_EDGE_ATTACH
		if v.Ref.Edge == commit.Alias {
			edge = v1.Edge_EDGE_ALIAS
		}
		out.Value = &v1.Value{Kind: &v1.Value_Reference{Reference: &v1.Reference{Edge: edge,
			Kind: v1.Kind(v.Ref.Kind + 1), Id: &v1.Id{Value: append([]byte{}, v.Ref.ID[:]...)}}}}
	}
	return out
}

func rootProto() *v1.Root {
	return &v1.Root{Id: &v1.Id{Value: append([]byte{}, rootID[:]...)}, Kind: v1.Kind_KIND_OBJECT}
}

func stateProto(t testing.TB, c commit.Commit) *v1.DocumentState {
	t.Helper()
	st := &v1.DocumentState{Root: rootProto()}
	if len(c.Deltas) > 0 {
		st.Commit = both(t, c)
	}
	return st
}

func acceptQ(t testing.TB, id, claim uint64, doc string, c commit.Commit) *v1.Question {
	t.Helper()
	return &v1.Question{Id: id, ClaimId: claim, Attempt: 1, Timeout: durationpb.New(guard),
		Kind: &v1.Question_Accept{Accept: &v1.AcceptQuestion{Document: doc, Cursor: 7,
			Origin: &v1.Origin{Source: &v1.Origin_Peer{Peer: &v1.Peer{Identity: &v1.Identity{Id: "u1", Roles: []string{"editor"}}, RemoteAddr: "10.0.0.1:5", ConnectionId: 3}}},
			Commit: both(t, c)}}}
}

// byID indexes answers by question id.
func byID(as []*v1.Answer) map[uint64]*v1.Answer {
	m := map[uint64]*v1.Answer{}
	for _, a := range as {
		m[a.GetQuestionId()] = a
	}
	return m
}
