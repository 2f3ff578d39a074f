package protocodec

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// questions is a batch as the bridge sends it: accept questions with an
// origin, an identity with roles and claims, and a commit's bytes and paths.
func questions(doc, role string) *v1.AuthorityResponse {
	var qs []*v1.Question
	for i := range 3 {
		qs = append(qs, &v1.Question{
			Id: uint64(i + 1), ClaimId: 7, Attempt: 1, Timeout: durationpb.New(1500000000),
			Kind: &v1.Question_Accept{Accept: &v1.AcceptQuestion{
				Document: doc, Cursor: uint64(40 + i),
				Origin: &v1.Origin{Source: &v1.Origin_Peer{Peer: &v1.Peer{
					Identity:   &v1.Identity{Id: "user-1", Roles: []string{role, "reader"}, Claims: map[string]string{"team": "blue"}},
					RemoteAddr: "127.0.0.1:5000", ConnectionId: 9,
				}}},
				Commit: &v1.Commit{Encoded: []byte{0x81, 0x83, 0x01, 0x61, 0x6b}, Paths: []*v1.Path{{Steps: []string{"k", "sub"}}}},
			}},
		})
	}
	return &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Questions{Questions: &v1.Questions{Questions: qs}}}
}

func answers(msg string) *v1.AuthorityRequest {
	return &v1.AuthorityRequest{Message: &v1.AuthorityRequest_Answers{Answers: &v1.Answers{Answers: []*v1.Answer{
		{QuestionId: 1, Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Accepted: true}}},
		{QuestionId: 2, Kind: &v1.Answer_Accept{Accept: &v1.AcceptAnswer{Reasons: []*v1.Reason{
			{Code: "denied", Message: msg, Path: &v1.Path{Steps: []string{"a"}}}}}}},
	}}}}
}

func bytesOf(t *testing.T, s mem.BufferSlice) []byte {
	t.Helper()
	b := s.Materialize()
	s.Free()
	return b
}

// The codec's bytes are protobuf-go's, and each decodes the other's.
func TestRoundTripMatchesProtobufGo(t *testing.T) {
	for _, m := range []proto.Message{
		questions("doc-1", "writer"),
		answers("not yours"),
		questions(strings.Repeat("d", 20000), "w"), // past gRPC's pooling threshold
		&v1.AuthorityRequest{},
	} {
		got, err := Codec{}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b := bytesOf(t, got)
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		back := m.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(b, back); err != nil || !proto.Equal(back, m) {
			t.Fatalf("protobuf-go read the codec's %T back as %v (err %v)", m, back, err)
		}
		mine := m.ProtoReflect().New().Interface()
		// Two buffers, as a message split across HTTP/2 frames arrives.
		half := len(want) / 2
		if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(want[:half]), mem.SliceBuffer(want[half:])}, mine); err != nil || !proto.Equal(mine, m) {
			t.Fatalf("the codec read protobuf-go's %T as %v (err %v)", m, mine, err)
		}
	}
}

// Unmarshal replaces what the message held, as proto.Unmarshal does.
func TestUnmarshalReplaces(t *testing.T) {
	into := &v1.Identity{Id: "old", Roles: []string{"a"}}
	b, _ := proto.Marshal(&v1.Identity{Roles: []string{"b"}})
	if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, into); err != nil {
		t.Fatal(err)
	}
	if into.Id != "" || len(into.Roles) != 1 || into.Roles[0] != "b" {
		t.Fatalf("got %v, want only role b", into)
	}
}

// A string that is not UTF-8, however deep, is refused both ways, as
// protobuf-go refuses it.
func TestInvalidUTF8IsRefused(t *testing.T) {
	for name, m := range map[string]proto.Message{
		"document":  questions("doc\xff", "w"),
		"role":      questions("d", "w\xc3"),
		"reason":    answers("bad \xed\xa0\x80 surrogate"),
		"map value": &v1.Identity{Claims: map[string]string{"k": "\xfe"}},
	} {
		if _, err := (Codec{}).Marshal(m); !errors.Is(err, ErrInvalidUTF8) {
			t.Errorf("%s: Marshal gave %v, want ErrInvalidUTF8", name, err)
		}
		if _, err := proto.Marshal(m); err == nil {
			t.Fatalf("%s: protobuf-go marshalled it; the case proves nothing", name)
		}
		b, err := proto.MarshalOptions{}.Marshal(allowInvalid(t, m))
		if err != nil {
			t.Fatal(err)
		}
		into := m.ProtoReflect().New().Interface()
		if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, into); !errors.Is(err, ErrInvalidUTF8) {
			t.Errorf("%s: Unmarshal gave %v, want ErrInvalidUTF8", name, err)
		}
		if err := proto.Unmarshal(b, m.ProtoReflect().New().Interface()); err == nil {
			t.Fatalf("%s: protobuf-go read it; the case proves nothing", name)
		}
	}
}

// allowInvalid encodes m without protobuf-go's check, by way of the
// generated code, so the decoding side can be tested.
func allowInvalid(t *testing.T, m proto.Message) proto.Message {
	t.Helper()
	b, err := m.(interface{ MarshalVT() ([]byte, error) }).MarshalVT()
	if err != nil {
		t.Fatal(err)
	}
	return rawMessage(b)
}

// rawMessage marshals as its bytes: a Struct of unknown fields only.
func rawMessage(b []byte) proto.Message {
	var e structpb.Struct
	e.ProtoReflect().SetUnknown(b)
	return &e
}

// Nesting past protobuf-go's limit is refused before the generated code,
// which has no limit, recurses into it.
func TestTooDeepIsRefused(t *testing.T) {
	// structpb.Value holds a ListValue (field 6) of Values (field 1).
	var b []byte
	for range maxDepth/2 + 10 {
		inner := protowire.AppendTag(nil, 1, protowire.BytesType)
		inner = protowire.AppendBytes(inner, b)
		b = protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), inner)
	}
	err := check(b, tableOf((&structpb.Value{}).ProtoReflect().Descriptor()), 0)
	if !errors.Is(err, ErrTooDeep) {
		t.Fatalf("got %v, want ErrTooDeep", err)
	}
	if err := proto.Unmarshal(b, &structpb.Value{}); err == nil {
		t.Fatal("protobuf-go read it; the case proves nothing")
	}
}

// A message without generated code goes through gRPC's own codec.
func TestOtherMessagesUseGRPCsCodec(t *testing.T) {
	m := &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}
	if _, ok := any(m).(vtMessage); ok {
		t.Fatal("the health message has generated code; the case proves nothing")
	}
	got, err := Codec{}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var back healthpb.HealthCheckResponse
	if err := (Codec{}).Unmarshal(got, &back); err != nil || back.Status != m.Status {
		t.Fatalf("got %v, %v", &back, err)
	}
	if (Codec{}).Name() != encoding.GetCodecV2(grpcproto.Name).Name() {
		t.Fatal("the codec's name is not the proto codec's: the content type would change")
	}
}

// The generated code reads a map entry's key and value whatever their wire
// type, so a value sent as a varint was read as a length and the bytes after
// it, where protobuf-go skips it: the codec refuses a known field with a
// wire type not its own. (Found by FuzzUnmarshal in CI.)
func TestWrongWireTypeIsRefused(t *testing.T) {
	entry := protowire.AppendTag(nil, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, "k")
	entry = protowire.AppendTag(entry, 2, protowire.VarintType)
	entry = protowire.AppendVarint(entry, 4)
	entry = append(entry, "0000"...) // field 6, varint 48, twice: unknown
	b := protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType), entry)

	var want v1.Identity
	if err := proto.Unmarshal(b, &want); err != nil || want.Claims["k"] != "" {
		t.Fatalf("protobuf-go read %v, %v; the case proves nothing", &want, err)
	}
	var vt v1.Identity
	if err := vt.UnmarshalVT(b); err != nil || vt.Claims["k"] != "0000" {
		t.Fatalf("the generated code read %v, %v; the case proves nothing", &vt, err)
	}
	err := Codec{}.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &v1.Identity{})
	if !errors.Is(err, ErrWireType) {
		t.Fatalf("got %v, want ErrWireType", err)
	}
}

// The generated code reads a packed run's last varint past the run's end
// and into the next field; protobuf-go refuses the message, and so does the
// codec. (Found by FuzzUnmarshal.)
func TestPackedRunEndsWithItsField(t *testing.T) {
	run := protowire.AppendVarint(nil, 5)
	run = append(run, 0xe9) // a varint cut off at the run's end
	w := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), run)
	// Read whole, the bytes after the run are an unknown fixed64 (field
	// 781); read from the second, they end the varint and are four
	// unknown varints (field 6).
	w = append(w, 0xe9, 0x30)
	w = append(w, "00000000"...)
	b := protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), w)

	if err := proto.Unmarshal(b, &v1.AuthorityResponse{}); err == nil {
		t.Fatal("protobuf-go read it; the case proves nothing")
	}
	if err := new(v1.AuthorityResponse).UnmarshalVT(b); err != nil {
		t.Fatalf("the generated code refused it (%v); the case proves nothing", err)
	}
	err := Codec{}.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &v1.AuthorityResponse{})
	if err == nil {
		t.Fatal("the codec read it")
	}

	// A run of whole values is read as protobuf-go reads it.
	m := &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Withdrawn{Withdrawn: &v1.Withdrawn{QuestionIds: []uint64{1, 300, 1 << 40}}}}
	good, _ := proto.Marshal(m)
	got := &v1.AuthorityResponse{}
	if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(good)}, got); err != nil || !proto.Equal(got, m) {
		t.Fatalf("got %v, %v; want %v", got, err, m)
	}
}

// The generated code ORs a map entry's varint value sent twice into one,
// where protobuf-go takes the last: the codec refuses an entry that holds
// its key or value twice. (Found by FuzzUnmarshal.)
func TestMapEntryTwiceIsRefused(t *testing.T) {
	entry := protowire.AppendTag(nil, 2, protowire.VarintType)
	entry = protowire.AppendVarint(entry, 48)
	entry = protowire.AppendTag(entry, 2, protowire.VarintType)
	entry = protowire.AppendVarint(entry, 65)
	b := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), entry)

	var want v1.SubscribeRequest
	if err := proto.Unmarshal(b, &want); err != nil || want.Resume[""] != 65 {
		t.Fatalf("protobuf-go read %v, %v; the case proves nothing", &want, err)
	}
	var vt v1.SubscribeRequest
	if err := vt.UnmarshalVT(b); err != nil || vt.Resume[""] != 48|65 {
		t.Fatalf("the generated code read %v, %v; the case proves nothing", &vt, err)
	}
	err := Codec{}.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, &v1.SubscribeRequest{})
	if !errors.Is(err, ErrMapEntry) {
		t.Fatalf("got %v, want ErrMapEntry", err)
	}
	// One key and one value, in either order, is read.
	entry = protowire.AppendTag(nil, 2, protowire.VarintType)
	entry = protowire.AppendVarint(entry, 7)
	entry = protowire.AppendTag(entry, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, "d")
	b = protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), entry)
	got := &v1.SubscribeRequest{}
	if err := (Codec{}).Unmarshal(mem.BufferSlice{mem.SliceBuffer(b)}, got); err != nil || got.Resume["d"] != 7 {
		t.Fatalf("got %v, %v; want resume d: 7", got, err)
	}
}
