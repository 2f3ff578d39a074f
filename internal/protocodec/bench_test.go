package protocodec

import (
	"testing"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/protobuf/proto"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// A batch of 64 accept questions, as the bridge sends under load, each
// way through gRPC's own codec and through this one.
func BenchmarkQuestions(b *testing.B) {
	m := questions("doc-1", "writer")
	qs := m.GetQuestions()
	for len(qs.Questions) < 64 {
		qs.Questions = append(qs.Questions, proto.Clone(qs.Questions[0]).(*v1.Question))
	}
	for _, c := range []struct {
		name  string
		codec encoding.CodecV2
	}{{"grpc", encoding.GetCodecV2(grpcproto.Name)}, {"protocodec", Codec{}}} {
		b.Run("marshal/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d, err := c.codec.Marshal(m)
				if err != nil {
					b.Fatal(err)
				}
				d.Free()
			}
		})
		d, err := c.codec.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("unmarshal/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(d.Len()))
			for b.Loop() {
				var into v1.AuthorityResponse
				if err := c.codec.Unmarshal(d, &into); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
