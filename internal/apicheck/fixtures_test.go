package apicheck

import (
	"bytes"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// Builders for test messages; ids are fixed bytes, never minted.

func id(b byte) *v1.Id { return &v1.Id{Value: bytes.Repeat([]byte{b}, 12)} }

func path(steps ...string) *v1.Path { return &v1.Path{Steps: steps} }

// everyValue holds one value of each kind the model has.
func everyValue() []*v1.Value {
	return []*v1.Value{
		{Kind: &v1.Value_NullValue{NullValue: structpb.NullValue_NULL_VALUE}},
		{Kind: &v1.Value_BoolValue{BoolValue: true}},
		{Kind: &v1.Value_IntValue{IntValue: -(1 << 53)}},
		{Kind: &v1.Value_FloatValue{FloatValue: 0.5}},
		{Kind: &v1.Value_TextValue{TextValue: "héllo 𝄞"}},
		{Kind: &v1.Value_BytesValue{BytesValue: []byte{0, 1, 0xff}}},
		{Kind: &v1.Value_Reference{Reference: &v1.Reference{Edge: v1.Edge_EDGE_ATTACH, Kind: v1.Kind_KIND_ARRAY, Id: id(2)}}},
	}
}

// commitWithEveryValue is a commit with one add per value kind on the
// root's object keys, a replace in an array, and a remove in a map that
// nothing reaches (no path). Encoded is a stand-in, not the deltas' aweft
// bytes: these tests check the API's transport, not the codec.
func commitWithEveryValue() *v1.Commit {
	c := &v1.Commit{Encoded: []byte{0x81, 0x80}, Tag: []byte{1, 2, 3, 4}}
	for i, v := range everyValue() {
		key := string(rune('a' + i))
		c.Deltas = append(c.Deltas, &v1.Delta{
			Type:  v1.DeltaType_DELTA_TYPE_ADD,
			Id:    id(1),
			Ref:   &v1.Ref{Key: &v1.Ref_ObjectKey{ObjectKey: key}},
			Value: v,
			Path:  path(key),
		})
	}
	c.Deltas = append(c.Deltas,
		&v1.Delta{
			Type:  v1.DeltaType_DELTA_TYPE_REPLACE,
			Id:    id(2),
			Ref:   &v1.Ref{Key: &v1.Ref_ArrayPosition{ArrayPosition: []byte{0x80}}},
			Value: &v1.Value{Kind: &v1.Value_IntValue{IntValue: 7}},
			Path:  path("g", "80"),
		},
		&v1.Delta{
			Type: v1.DeltaType_DELTA_TYPE_REMOVE,
			Id:   id(3),
			Ref:  &v1.Ref{Key: &v1.Ref_MapKey{MapKey: id(4)}},
		},
	)
	return c
}

func peer() *v1.Peer {
	return &v1.Peer{
		Identity: &v1.Identity{
			Id:     "user-42",
			Roles:  []string{"editor", "viewer"},
			Claims: map[string]string{"tenant": "acme", "plan": "pro"},
		},
		RemoteAddr:   "127.0.0.1:50123",
		ConnectionId: 9,
	}
}

func acceptQuestion(qid uint64) *v1.Question {
	return &v1.Question{
		Id:      qid,
		ClaimId: 1,
		Attempt: 1,
		Timeout: durationpb.New(2e9),
		Kind: &v1.Question_Accept{Accept: &v1.AcceptQuestion{
			Document: "board:42",
			Cursor:   17,
			Origin:   &v1.Origin{Source: &v1.Origin_Peer{Peer: peer()}},
			Commit:   commitWithEveryValue(),
		}},
	}
}
