package apicheck

import (
	"testing"

	"google.golang.org/protobuf/proto"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// The cost of one accept question on the wire: what the gateway pays per
// commit a claimant judges (a 9-delta commit, every value kind).
func BenchmarkAcceptQuestionMarshal(b *testing.B) {
	m := &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Questions{Questions: &v1.Questions{
		Questions: []*v1.Question{acceptQuestion(1)},
	}}}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		out, err := proto.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		n = len(out)
	}
	b.SetBytes(int64(n))
}

func BenchmarkAcceptQuestionUnmarshal(b *testing.B) {
	in, err := proto.Marshal(&v1.AuthorityResponse{Message: &v1.AuthorityResponse_Questions{Questions: &v1.Questions{
		Questions: []*v1.Question{acceptQuestion(1)},
	}}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		var m v1.AuthorityResponse
		if err := proto.Unmarshal(in, &m); err != nil {
			b.Fatal(err)
		}
	}
}
