package gateway_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// countingConn counts the bytes a client reads off the wire.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// BenchmarkCompression measures what permessage-deflate with context
// takeover buys and costs on a stream of small field edits: wire bytes per
// delivered commit and gateway heap per connected link. It chose the
// default (off); see docs/decisions/006-compression-default.md.
func BenchmarkCompression(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("compression=%v", on), func(b *testing.B) {
			s, err := gateway.New(gateway.Config{Compression: on, PingInterval: -1})
			if err != nil {
				b.Fatal(err)
			}
			hs := newHTTPServer(b, s)
			url := "ws" + strings.TrimPrefix(hs.URL, "http")
			var wire atomic.Int64
			mode := websocket.CompressionDisabled
			if on {
				mode = websocket.CompressionContextTakeover
			}
			tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				return countingConn{c, &wire}, err
			}}
			dial := func() *websocket.Conn {
				ws, _, err := websocket.Dial(context.Background(), url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}, CompressionMode: mode})
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
				if err := ws.Write(context.Background(), websocket.MessageBinary, m); err != nil {
					b.Fatal(err)
				}
			}
			// The writer creates the document; the reader watches it.
			root := commit.NewID()
			writer := dial()
			send(writer, frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Root: &frame.Root{ID: root, Kind: commit.Object}})
			readFrame(b, writer) // the gateway's open (want)
			send(writer, frame.Frame{Kind: frame.State, Topic: 1})
			reader := dial()
			send(reader, frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Want: true})
			readFrame(b, reader) // open
			readFrame(b, reader) // state
			// Idle links: heap per link with this mode.
			const idle = 200
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			conns := make([]*websocket.Conn, idle)
			for i := range conns {
				conns[i] = dial()
				send(conns[i], frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Want: true})
				readFrame(b, conns[i])
				readFrame(b, conns[i])
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			for _, c := range conns {
				c.CloseNow()
			}
			start := wire.Load()
			b.ResetTimer()
			for i := range b.N {
				c := commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey(fmt.Sprintf("title-%d", i)), Value: commit.TextValue("a small edit to a field")}}}
				cb, err := commit.Encode(c)
				if err != nil {
					b.Fatal(err)
				}
				send(writer, frame.Frame{Kind: frame.Commits, Topic: 1, First: uint64(i + 1), Commits: [][]byte{cb}})
				readFrame(b, reader)
			}
			b.StopTimer()
			b.ReportMetric(float64(wire.Load()-start)/float64(b.N), "wire-B/commit")
			b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/idle, "heap-B/link")
			writer.CloseNow()
			reader.CloseNow()
			ctx, cancel := context.WithTimeout(context.Background(), 10e9)
			defer cancel()
			s.Shutdown(ctx)
			hs.Close()
		})
	}
}

func readFrame(b *testing.B, ws *websocket.Conn) frame.Frame {
	_, m, err := ws.Read(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	f, err := frame.Decode(m)
	if err != nil {
		b.Fatal(err)
	}
	return f
}
