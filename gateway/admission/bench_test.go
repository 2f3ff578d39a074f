package admission

import (
	"net/http/httptest"
	"strconv"
	"testing"
)

// BenchmarkAdmit is a same-origin handshake from one of 1024 addresses,
// in parallel, request construction included.
func BenchmarkAdmit(b *testing.B) {
	g := New(Config{Limit: 1 << 30})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r := handshake("10.0."+strconv.Itoa(i>>8&3)+"."+strconv.Itoa(i&255)+":1", "http://app.test")
			w := httptest.NewRecorder()
			if _, ok := g.Admit(w, r); !ok {
				b.Fatal("refused")
			}
			i++
		}
	})
}

// BenchmarkRate is the rate check alone over 4096 addresses.
func BenchmarkRate(b *testing.B) {
	g := New(Config{Limit: 1 << 30})
	addrs := make([]string, 4096)
	for i := range addrs {
		addrs[i] = "10.1." + strconv.Itoa(i>>8) + "." + strconv.Itoa(i&255)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if g.Rate(addrs[i&4095]) != nil {
			b.Fatal("refused")
		}
	}
}
