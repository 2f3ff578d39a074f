package jsstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/store/storetest"
	"github.com/weftgate/weftgate/internal/natstest"
)

// The figures of decision 029: the two shapes of a conditional log on one
// hot document. Run with -benchtime=Nx; each reports appends/s and the
// p50/p99 of one call in microseconds.

// latencies collects call durations from several goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) report(b *testing.B, ops int, elapsed time.Duration) {
	slices.Sort(l.d)
	if len(l.d) == 0 {
		return
	}
	q := func(p float64) float64 { return float64(l.d[int(p*float64(len(l.d)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(float64(ops)/elapsed.Seconds(), "ops/s")
}

func benchCommit() []byte { return make([]byte, 200) }

// BenchmarkHotAppend is shape (a): every node appends with the expected
// last sequence. One writer, then three on three connections racing for
// the same cursors (each lost race is a catch-up: Info, then again).
func BenchmarkHotAppend(b *testing.B) {
	for _, writers := range []int{1, 3} {
		b.Run(fmt.Sprint("writers=", writers), func(b *testing.B) {
			ns := natstest.Start(b)
			var stores []*Store
			for range writers {
				s, _ := openOn(b, ns, Options{})
				stores = append(stores, s)
			}
			storetest.Create(b, stores[0], "hot", 0)
			var lat latencies
			var next, conflicts atomic.Uint64
			next.Store(1)
			var wg sync.WaitGroup
			ctx := context.Background()
			b.ResetTimer()
			start := time.Now()
			for w, s := range stores {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c := uint64(1)
					for c <= uint64(b.N) {
						t0 := time.Now()
						err := s.Append(ctx, "hot", []store.Record{{Cursor: c, Commit: benchCommit(), Origin: fmt.Sprint("w", w)}})
						lat.add(time.Since(t0))
						switch {
						case err == nil:
							c++
						case errors.Is(err, store.ErrCursorMismatch):
							conflicts.Add(1)
							i, err := s.Info(ctx, "hot")
							if err != nil {
								b.Error(err)
								return
							}
							c = i.Last + 1
						default:
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			lat.report(b, b.N, elapsed)
			b.ReportMetric(float64(conflicts.Load())/float64(b.N), "conflicts/append")
		})
	}
}

// BenchmarkLease is shape (b): an owner per document holding a KV lease
// (create with a TTL'd bucket, renew by revision), appending alone
// without an expected sequence, and a non-owner's write forwarded to it
// as one request/reply on the same server.
func BenchmarkLease(b *testing.B) {
	ns := natstest.Start(b)
	s, c := openOn(b, ns, Options{})
	ctx := context.Background()
	js, err := jetstream.New(c.Conn)
	if err != nil {
		b.Fatal(err)
	}
	leases, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "WEFT_LEASE", TTL: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("acquire", func(b *testing.B) {
		var lat latencies
		start := time.Now()
		run := newGen() // sub-benchmarks run more than once: fresh keys
		for i := range b.N {
			k := fmt.Sprint(run, ".", i)
			t0 := time.Now()
			if _, err := leases.Create(ctx, k, []byte("node-1")); err != nil {
				b.Fatal(err)
			}
			lat.add(time.Since(t0))
		}
		lat.report(b, b.N, time.Since(start))
	})
	b.Run("renew", func(b *testing.B) {
		k := newGen()
		rev, err := leases.Create(ctx, k, []byte("node-1"))
		if err != nil {
			b.Fatal(err)
		}
		var lat latencies
		start := time.Now()
		for range b.N {
			t0 := time.Now()
			if rev, err = leases.Update(ctx, k, []byte("node-1"), rev); err != nil {
				b.Fatal(err)
			}
			lat.add(time.Since(t0))
		}
		lat.report(b, b.N, time.Since(start))
	})
	b.Run("owner-append", func(b *testing.B) {
		// The owner needs no expected sequence: a plain publish per record.
		var lat latencies
		start := time.Now()
		for i := range b.N {
			m := nats.NewMsg(s.o.Subject + ".owner.0")
			m.Data = benchCommit()
			m.Header.Set(hdrCursor, fmt.Sprint(i+1))
			t0 := time.Now()
			if _, err := s.js.PublishMsg(ctx, m); err != nil {
				b.Fatal(err)
			}
			lat.add(time.Since(t0))
		}
		lat.report(b, b.N, time.Since(start))
	})
	b.Run("forward-hop", func(b *testing.B) {
		sub, err := c.Subscribe("weft.forward", func(m *nats.Msg) { m.Respond(m.Data) })
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Unsubscribe()
		other := connect(b, ns.URL)
		var lat latencies
		start := time.Now()
		for range b.N {
			t0 := time.Now()
			if _, err := other.Request("weft.forward", benchCommit(), 5*time.Second); err != nil {
				b.Fatal(err)
			}
			lat.add(time.Since(t0))
		}
		lat.report(b, b.N, time.Since(start))
	})
}
