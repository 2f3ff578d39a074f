package bridge_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/protocodec"
)

// laxCodec sends what the generated code makes of a message, without
// protobuf-go's check that every string is UTF-8.
type laxCodec struct{}

func (laxCodec) Name() string { return grpcproto.Name }
func (laxCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, err := v.(interface{ MarshalVT() ([]byte, error) }).MarshalVT()
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}
func (laxCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return encoding.GetCodecV2(grpcproto.Name).Unmarshal(data, v)
}

// The server's codec (internal/protocodec) decodes with generated code,
// which does not check UTF-8; a string that is not UTF-8 must still end the
// stream as protobuf-go would, and never reach the bridge.
func TestInvalidUTF8FromABackendIsRefused(t *testing.T) {
	e := startEnv(t, envOpts{})
	s, err := e.client.Authority(ctxT(t), grpc.ForceCodecV2(laxCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{Backend: "b\xff"}}}); err != nil {
		t.Fatal(err)
	}
	m, err := s.Recv()
	if status.Code(err) != codes.Internal {
		t.Fatalf("got %v, %v; want the stream ended with INTERNAL", m, err)
	}
	if !strings.Contains(err.Error(), protocodec.ErrInvalidUTF8.Error()) {
		t.Fatalf("%v: not the weftgate codec's refusal; is the server built without it?", err)
	}
}
