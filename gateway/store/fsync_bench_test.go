package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFsync is what one sync costs on the disk under b.TempDir (the
// disk the store benchmarks use): append 128 bytes to a file, then sync
// it. bbolt syncs with fdatasync on Linux, twice per commit.
//
//	go test -run '^$' -bench BenchmarkFsync -benchtime 2000x ./gateway/store/
func BenchmarkFsync(b *testing.B) {
	for _, c := range []struct {
		name string
		sync func(*os.File) error
	}{
		{"fsync", (*os.File).Sync},
		{"fdatasync", func(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(b.TempDir(), "sync"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := bytes.Repeat([]byte{'s'}, 128)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
				if err := c.sync(f); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			reportLatency(b, lat)
		})
	}
}

// BenchmarkAppendRate offers appends at a fixed rate, open loop, from 200
// documents (each its own goroutine, one ~100-byte commit a call, on its
// own schedule), and reports the latency of each Append call. A document's
// appends are 0.4 s (rate=500) or 40 ms (rate=5000) apart, far more than an
// append takes, so one late append rarely delays the next; timer lateness
// is left out of the figures. b.N is the number of appends: -benchtime
// 5000x at rate=500 is 10 s.
//
//	go test -run '^$' -bench BenchmarkAppendRate -benchtime 10000x ./gateway/store/
func BenchmarkAppendRate(b *testing.B) {
	for _, rate := range []int{500, 5000} {
		b.Run(fmt.Sprintf("rate=%d", rate), func(b *testing.B) { benchRate(b, 200, rate) })
	}
}

func benchRate(b *testing.B, docs, rate int) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	commit := bytes.Repeat([]byte{'c'}, 100)
	for i := range docs {
		create(b, s, fmt.Sprint("doc", i), 0)
	}
	ctx := context.Background()
	interval := time.Duration(docs) * time.Second / time.Duration(rate) // between one document's appends
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	lat := make([][]time.Duration, docs)
	b.ResetTimer()
	start := time.Now()
	for i := range docs {
		doc := fmt.Sprint("doc", i)
		n := b.N / docs
		if i < b.N%docs {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := start.Add(time.Duration(i) * interval / time.Duration(docs))
			for k := range n {
				due := first.Add(time.Duration(k) * interval)
				time.Sleep(time.Until(due)) // pacing the offered load, not synchronisation
				rec := []Record{{Cursor: uint64(k + 1), Commit: commit, Origin: "link"}}
				t0 := time.Now()
				if err := s.Append(ctx, doc, rec); err != nil {
					failed.Store(&err)
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	reportLatency(b, slices.Concat(lat...))
}

// reportLatency adds the median, p99 and maximum of lat to b's results.
func reportLatency(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
}
