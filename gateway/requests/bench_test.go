package requests

import (
	"context"
	"encoding/json"
	"testing"
)

var benchRequest = []byte(`{"id":12345,"name":"report/Daily","args":{"day":"mon","limit":50,"tags":["a","b"]}}`)

func BenchmarkParseRequest(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for i := 0; i < b.N; i++ {
		if _, err := Parse(benchRequest); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeResult(b *testing.B) {
	v := json.RawMessage(`{"rows":[1,2,3],"total":3}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := EncodeResult(int64(i), v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChannelRoundTrip is one request in, through a goroutine and
// Calls, to its answer sent.
func BenchmarkChannelRoundTrip(b *testing.B) {
	out := make(chan struct{}, 1)
	c := New(context.Background(), CallsFunc(func(context.Context, Call, func(json.RawMessage)) (json.RawMessage, error) {
		return json.RawMessage(`true`), nil
	}), caller, func([]byte) error { out <- struct{}{}; return nil }, Config{})
	c.Ready()
	defer c.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := c.Handle(benchRequest); err != nil {
			b.Fatal(err)
		}
		<-out
	}
}
