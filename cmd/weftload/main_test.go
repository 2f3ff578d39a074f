package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func short(shape string) options {
	return options{inprocess: true, peers: 12, docs: 3, writers: 2, rate: 200, window: 16, dialers: 4,
		duration: 300 * time.Millisecond, shape: shape}
}

// A short in-process run of each shape delivers every commit to every
// other member of its document, and measures its latency.
func TestRunDeliversEverything(t *testing.T) {
	for _, shape := range []string{shapeField, shapeInsert, shapeLarge} {
		t.Run(shape, func(t *testing.T) {
			res, err := run(context.Background(), short(shape), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent == 0 || res.Refused != 0 || len(res.Errors) != 0 {
				t.Fatalf("result %+v", res)
			}
			// 4 members per document: each commit reaches the other 3.
			if res.Delivered != res.Sent*3 || res.Expected != res.Delivered {
				t.Fatalf("%d deliveries for %d commits, want %d", res.Delivered, res.Sent, res.Sent*3)
			}
			if res.P50ms <= 0 || res.MaxMs < res.P99ms || res.P99ms < res.P50ms {
				t.Fatalf("latencies %+v", res)
			}
			if res.Gateway == nil || res.Gateway.Links != 12 || res.HeapPerLinkB <= 0 || !res.HeapIncludesPeers {
				t.Fatalf("gauges %+v, heap per link %v", res.Gateway, res.HeapPerLinkB)
			}
		})
	}
}

// As fast as possible, the window keeps the links alive: nothing is
// refused, nothing ends, every commit is delivered.
func TestRunAsFastAsPossible(t *testing.T) {
	o := short(shapeField)
	o.rate = 0
	res, err := run(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent < 100 || res.Delivered != res.Sent*3 || len(res.Errors) != 0 {
		t.Fatalf("result %+v", res)
	}
}

// Raw watchers count every delivery too, and hand back the writers' credit.
func TestRunRawWatchers(t *testing.T) {
	o := short(shapeInsert)
	o.watch, o.rate = watchRaw, 0
	res, err := run(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent < 100 || res.Delivered != res.Sent*3 || len(res.Errors) != 0 {
		t.Fatalf("result %+v", res)
	}
}

// Raw writers send commits the gateway applies and every other member
// counts, beside the peer that made each document.
func TestRunRawWriters(t *testing.T) {
	for _, shape := range []string{shapeField, shapeInsert} {
		t.Run(shape, func(t *testing.T) {
			o := short(shape)
			o.write, o.watch, o.rate = watchRaw, watchRaw, 0
			res, err := run(context.Background(), o, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if res.Sent < 100 || res.Refused != 0 || res.Delivered != res.Sent*3 || len(res.Errors) != 0 {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

// A raw writer hears its refusal: counted, and its credit handed back.
func TestRawWriterRefused(t *testing.T) {
	nd, err := startNodes(context.Background(), 1, false, storeMemory)
	url := nd.urls[0]
	if err != nil {
		t.Fatal(err)
	}
	defer nd.stop()
	ctx := context.Background()
	p, err := peer.Dial(ctx, url, peer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	root := commit.NewID()
	if _, err := p.Share(ctx, "refused", document.New(root, commit.Object, document.Limits{})); err != nil {
		t.Fatal(err)
	}
	ws, _, err := dialRaw(ctx, url, "refused")
	if err != nil {
		t.Fatal(err)
	}
	m := &member{ws: ws, credits: make(chan struct{}, 1), next: make([]int, 1)}
	m.credits <- struct{}{}
	s := newStats()
	watched := make(chan struct{})
	go func() { defer close(watched); s.watchRaw(m, []*member{m}) }()
	// Replacing a key the root does not hold is refused at apply.
	if err := m.commit([]commit.Delta{{Op: commit.Replace, ID: root, Ref: commit.ObjectKey("none"), Value: commit.TextValue("x")}}); err != nil {
		t.Fatal(err)
	}
	select {
	case m.credits <- struct{}{}: // the refusal handed the credit back
	case <-time.After(10 * time.Second):
		t.Fatal("no credit back after the refusal")
	}
	closeRaw(m)
	<-watched
	if s.refused.Load() != 1 || len(s.errorsCopy()) != 0 {
		t.Fatalf("refused %d, errors %v", s.refused.Load(), s.errorsCopy())
	}
}

// With an SDK backend in the loop every commit is judged by it.
func TestRunWithAuthority(t *testing.T) {
	o := short(shapeField)
	o.authority = true
	res, err := run(context.Background(), o, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent == 0 || res.Delivered != res.Sent*3 || len(res.Errors) != 0 {
		t.Fatalf("result %+v", res)
	}
	if res.Verdicts != res.Sent {
		t.Fatalf("%d verdicts for %d commits", res.Verdicts, res.Sent)
	}
}

func TestOptionsRefused(t *testing.T) {
	for name, change := range map[string]func(*options){
		"one peer per document":  func(o *options) { o.peers = 3 },
		"more writers":           func(o *options) { o.writers = 5 },
		"no duration":            func(o *options) { o.duration = 0 },
		"shape":                  func(o *options) { o.shape = "round" },
		"window":                 func(o *options) { o.window = 0 },
		"watch":                  func(o *options) { o.watch = "stare" },
		"write":                  func(o *options) { o.write = "scribble" },
		"remote":                 func(o *options) { o.inprocess, o.url = false, "ws://192.0.2.1/" },
		"fanout without readers": func(o *options) { o.shape = shapeFanout },
		"fanout with -peers": func(o *options) {
			o.shape, o.readers, o.set = shapeFanout, 3, map[string]bool{"peers": true}
		},
		"readers without fanout":   func(o *options) { o.readers = 3 },
		"fanout with a raw writer": func(o *options) { o.shape, o.readers, o.write = shapeFanout, 3, watchRaw },
		"store":                    func(o *options) { o.store = "disk" },
		"bolt for a separate gateway": func(o *options) {
			o.inprocess, o.url, o.store = false, "ws://127.0.0.1:1/", storeBolt
		},
		"negative latency window": func(o *options) { o.winLen = -time.Second },
		"too many windows":        func(o *options) { o.duration, o.winLen = time.Hour, time.Millisecond },
	} {
		o := short(shapeField)
		change(&o)
		if _, err := run(context.Background(), o, io.Discard); err == nil {
			t.Errorf("%s: ran", name)
		}
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, u := range []string{"ws://127.0.0.1:8080/", "ws://localhost/", "ws://[::1]:9/", "127.0.0.1:9090", "localhost:9090"} {
		if err := loopbackOnly("-url", u, false); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"ws://192.0.2.1/", "example.com:9090", "ws://example.com/"} {
		if err := loopbackOnly("-url", u, false); err == nil {
			t.Errorf("%s was allowed", u)
		}
	}
	if err := loopbackOnly("-url", "ws://192.0.2.1/", true); err != nil {
		t.Errorf("-allow-remote: %v", err)
	}
}

func TestKindOfIsCoarse(t *testing.T) {
	for err, want := range map[error]string{
		protocol.Errorf(protocol.NoDocument, "x"):                  "no-document",
		&peer.HandshakeError{StatusCode: 429}:                      "handshake-429",
		fmt.Errorf("write tcp 1.2.3.4:5: %w", syscall.EPIPE):       "socket-broken pipe",
		fmt.Errorf("dial: %w", context.DeadlineExceeded):           "timeout",
		errors.New("something with an address 127.0.0.1:41234"):    "other",
		&statusError{url: "http://127.0.0.1:1/metrics", code: 404}: "http-404",
	} {
		if got := kindOf(err); got != want {
			t.Errorf("%v: %q, want %q", err, got, want)
		}
	}
}
