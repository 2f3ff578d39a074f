package protocodec

import (
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// The codec is never more lenient than protobuf-go, and when both read a
// message they read the same one. (It may be stricter: it refuses a known
// field with the wrong wire type, which protobuf-go keeps as an unknown
// field, and a map entry's field sent twice, of which protobuf-go takes the
// last; no conforming sender makes either. And it keeps an
// unknown field's tag as sent where protobuf-go writes it shortest, so
// unknown fields are compared by their content. And the generated code of
// the well-known types drops their unknown fields.)
func FuzzUnmarshal(f *testing.F) {
	if len(apiMessages) < 2 {
		f.Fatalf("%d API messages with generated code; the fuzzing proves nothing", len(apiMessages))
	}
	for _, m := range []proto.Message{questions("doc", "w"), answers("why"), &v1.Identity{Claims: map[string]string{"a": "b"}},
		&v1.SubscribeRequest{Target: &v1.SubscribeRequest_Pattern{Pattern: &v1.Pattern{Match: &v1.Pattern_Prefix{Prefix: "a/"}}}, Resume: map[string]uint64{"d": 300}}} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range apiMessages {
			want := m.ProtoReflect().New().Interface()
			werr := proto.Unmarshal(b, want)
			got := m.ProtoReflect().New().Interface()
			gerr := Codec{}.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got)
			switch {
			case gerr == nil && werr != nil:
				t.Fatalf("%T: the codec read what protobuf-go refuses (%v)", m, werr)
			case gerr == nil && !proto.Equal(canonical(got), canonical(want)):
				t.Fatalf("%T: the codec read %v, protobuf-go %v", m, got, want)
			}
		}
	})
}

// apiMessages is every message of the API with generated code: what a
// client or backend may send the gateway, and what it sends them.
var apiMessages = func() []proto.Message {
	var ms []proto.Message
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		m := mt.New().Interface()
		if _, ok := m.(vtMessage); ok && mt.Descriptor().ParentFile().Package() == "weftgate.v1" {
			ms = append(ms, m)
		}
		return true
	})
	return ms
}()

// canonical writes the tags of m's unknown fields, and those of every
// message in it, in their shortest form, and drops those of well-known
// types.
func canonical(m proto.Message) proto.Message {
	canon(m.ProtoReflect())
	return m
}

func canon(m protoreflect.Message) {
	if m.Descriptor().ParentFile().Package() == "google.protobuf" {
		m.SetUnknown(nil)
	}
	if u := m.GetUnknown(); len(u) > 0 {
		var out []byte
		for len(u) > 0 {
			num, typ, n := protowire.ConsumeTag(u)
			u = u[n:]
			n = protowire.ConsumeFieldValue(num, typ, u)
			out = append(protowire.AppendTag(out, num, typ), u[:n]...)
			u = u[n:]
		}
		m.SetUnknown(out)
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				canon(v.List().Get(i).Message())
			}
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, e protoreflect.Value) bool {
					canon(e.Message())
					return true
				})
			}
		case fd.Message() != nil:
			canon(v.Message())
		}
		return true
	})
}
