package gateway_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Bounds of the hub benchmark.
const (
	// benchWindow is the most commits the writer may be ahead of the first
	// reader: far below what fills MaxPendingBytes toward a link, so no
	// reader is ended as a slow consumer, and enough to keep the hub busy.
	benchWindow = 1024
	// benchDeadline bounds the wait for every delivery of one run.
	benchDeadline = 2 * time.Minute
)

// BenchmarkHubFanout is commits per second through one document: one raw
// WebSocket writes small field edits (one commit per frame, as a typing
// user sends them) and every one of N other links must receive each. The
// readers only decode frames and count commits, so the figure is the
// gateway's: link receive, hub apply, in-memory store, one encode, N
// socket writes. Sockets are real, on 127.0.0.1, in this process.
//
// window is how many commits the writer may be ahead of the first reader:
// at 1024 the gateway batches many commits into each frame it writes; at 1
// every delivery is a frame and a socket write of its own, as at a low
// commit rate. The links are woken per append (FanoutMembers -1), so
// this is the cost of the fan-out itself; what the wait for a pass over
// many links buys is weftload's to show (decision 036).
func BenchmarkHubFanout(b *testing.B) {
	for _, links := range []int{1, 100, 1000} {
		for _, window := range []int{benchWindow, 1} {
			b.Run(fmt.Sprintf("links=%d/window=%d", links, window), func(b *testing.B) { benchFanout(b, links, window) })
		}
	}
}

func benchFanout(b *testing.B, links, window int) {
	s, err := gateway.New(gateway.Config{PingInterval: -1, Admission: admission.Config{Limit: -1}, FanoutMembers: -1})
	if err != nil {
		b.Fatal(err)
	}
	hs := newHTTPServer(b, s)
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		hs.Close()
	}()
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	ctx := context.Background()
	dial := func() *websocket.Conn {
		ws, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			b.Fatal(err)
		}
		ws.SetReadLimit(1 << 20)
		return ws
	}
	send := func(ws *websocket.Conn, f frame.Frame) {
		m, err := frame.Encode(f)
		if err != nil {
			b.Fatal(err)
		}
		if err := ws.Write(ctx, websocket.MessageBinary, m); err != nil {
			b.Fatal(err)
		}
	}

	root := commit.NewID()
	writer := dial()
	defer writer.CloseNow()
	send(writer, frame.Frame{Kind: frame.Open, Topic: 1, Name: "bench", Root: &frame.Root{ID: root, Kind: commit.Object}})
	readFrame(b, writer) // the gateway's open
	send(writer, frame.Frame{Kind: frame.State, Topic: 1})
	readers := make([]*websocket.Conn, links)
	for i := range readers {
		readers[i] = dial()
		defer readers[i].CloseNow()
		send(readers[i], frame.Frame{Kind: frame.Open, Topic: 1, Name: "bench", Want: true})
		readFrame(b, readers[i]) // open
		readFrame(b, readers[i]) // state
	}

	// The edits: an add, then replaces of the same field.
	edit := func(op commit.Op) []byte {
		cb, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: op, ID: root, Ref: commit.ObjectKey("title"), Value: commit.TextValue("a small edit to a field")}}})
		if err != nil {
			b.Fatal(err)
		}
		return cb
	}
	add, replace := edit(commit.Add), edit(commit.Replace)

	credits := make(chan struct{}, window)
	var wg sync.WaitGroup
	var failed atomic.Value
	var frames atomic.Int64 // commits frames the readers received
	rctx, stop := context.WithTimeout(ctx, benchDeadline)
	defer stop()
	for i, r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for got := 0; got < b.N; {
				_, m, err := r.Read(rctx)
				if err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("reader %d after %d of %d: %w", i, got, b.N, err))
					return
				}
				f, err := frame.Decode(m)
				if err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("reader %d: %w", i, err))
					return
				}
				if f.Kind != frame.Commits {
					failed.CompareAndSwap(nil, fmt.Errorf("reader %d: a %v frame", i, f.Kind))
					return
				}
				got += len(f.Commits)
				frames.Add(1)
				if i == 0 {
					for range f.Commits {
						<-credits
					}
				}
			}
		}()
	}

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		select {
		case credits <- struct{}{}:
		case <-rctx.Done():
			b.Fatalf("writer stalled at %d of %d: %v", i, b.N, failed.Load())
		}
		cb := replace
		if i == 0 {
			cb = add
		}
		send(writer, frame.Frame{Kind: frame.Commits, Topic: 1, First: uint64(i + 1), Commits: [][]byte{cb}})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(b.N)*float64(links)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(b.N)*float64(links)/float64(frames.Load()), "commits/frame")
	b.ReportMetric(0, "ns/op") // commits/s says it; ns/op would repeat it
}
