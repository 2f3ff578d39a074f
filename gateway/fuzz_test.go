package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/internal/spectest"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// fuzzSep splits one fuzz input into several binary messages.
var fuzzSep = []byte{0xff, 0xfe, 0xfd}

// maxFuzzMessages bounds the messages one input is split into.
const maxFuzzMessages = 32

// FuzzGatewayFrames feeds arbitrary bytes, as binary messages on one
// socket with a live topic 1, to an in-process gateway. The gateway must not
// panic, must end or keep that link cleanly, and must go on serving two
// other peers on a document of their own.
func FuzzGatewayFrames(f *testing.F) {
	seedFuzzFrames(f)
	// The two long-lived peers open a document per input, faster than
	// the opens limit allows once the fuzzer runs: the limit is off.
	s, err := gateway.New(gateway.Config{PingInterval: -1, Admission: admission.Config{Limit: -1}, IdleUnload: 10 * time.Millisecond, WriteTimeout: 2 * time.Second, MaxOpensPerSecond: -1})
	if err != nil {
		f.Fatal(err)
	}
	hs := httptest.NewServer(s)
	url := "ws" + strings.TrimPrefix(hs.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	a, errA := peer.Dial(ctx, url, peer.Options{})
	b, errB := peer.Dial(ctx, url, peer.Options{EventBuffer: 1 << 14})
	cancel()
	f.Cleanup(func() {
		for _, p := range []*peer.Peer{a, b} {
			if p != nil {
				p.Close()
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		hs.Close()
	})
	if errA != nil || errB != nil {
		f.Fatal(errA, errB)
	}
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++
		name := fmt.Sprintf("fuzz-%d", n)

		da, err := a.Share(ctxT(t), name, newDoc())
		if err != nil {
			t.Fatalf("share: %v", err)
		}
		db, err := b.Join(ctxT(t), name)
		if err != nil {
			t.Fatalf("join: %v", err)
		}
		r := dialRaw(t, url)
		r.join(1, name)
		msgs := bytes.SplitN(data, fuzzSep, maxFuzzMessages)
		wctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		for _, m := range msgs {
			if r.ws.Write(wctx, websocket.MessageBinary, m) != nil {
				break // the gateway ended the link
			}
		}
		cancel()
		r.ws.CloseNow()
		eventually(t, "the fuzzed link to end", func() bool { return s.Metrics().Connections.Load() == 2 })
		// The other peers are served: a commit of a's reaches b.
		if _, err := set(da, "checked", text(name)); err != nil {
			t.Fatalf("commit: %v", err)
		}
		waitKey(t, db, "checked")
		if err := da.Leave(); err != nil {
			t.Fatal(err)
		}
		if err := db.Leave(); err != nil {
			t.Fatal(err)
		}
	})
}

// waitKey reads d's events until a commit writing key arrives; commits the
// fuzzed link got applied may come first. A refusal fails.
func waitKey(t *testing.T, d *peer.Doc, key string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-d.Events():
			if !ok {
				t.Fatalf("%s ended: %v", d.Name(), d.Err())
			}
			switch e := ev.(type) {
			case peer.Applied:
				for _, x := range e.Commit.Deltas {
					if x.Ref.Kind == commit.Object && x.Ref.Key == key {
						return
					}
				}
			case peer.Refused:
				t.Fatalf("%s: refused %+v", d.Name(), e)
			}
		case <-timeout:
			t.Fatalf("%s: %q never arrived", d.Name(), key)
		}
	}
}

// seedFuzzFrames adds every frame fixture, and every commit rejection
// fixture inside a commits frame on topic 1, plus a few link moves.
func seedFuzzFrames(f *testing.F) {
	for _, path := range spectest.Files(f, "frames") {
		var fx struct{ Bytes string }
		readJSON(f, path, &fx)
		f.Add(unhex(f, fx.Bytes))
	}
	enc := func(fr frame.Frame) []byte {
		b, err := frame.Encode(fr)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	var all [][]byte
	for i, path := range spectest.Files(f, filepath.Join("fixtures", "invalid")) {
		var fx struct{ Bytes string }
		readJSON(f, path, &fx)
		m := enc(frame.Frame{Kind: frame.Commits, Topic: 1, First: uint64(i + 1), Commits: [][]byte{unhex(f, fx.Bytes)}})
		f.Add(m)
		all = append(all, m)
	}
	f.Add(bytes.Join(all, fuzzSep))
	f.Add(bytes.Join([][]byte{
		enc(frame.Frame{Kind: frame.Open, Topic: 1, Name: "x", Want: true}),
		enc(frame.Frame{Kind: frame.State, Topic: 1}),
		enc(frame.Frame{Kind: frame.Refused, Topic: 1, Seq: 1, Reasons: []frame.Reason{{Code: "a", Message: "b"}}}),
		enc(frame.Frame{Kind: frame.Leave, Topic: 1}),
		enc(frame.Frame{Kind: frame.Open, Topic: 2, Name: "y", Root: &frame.Root{Kind: commit.Map}}),
		enc(frame.Frame{Kind: frame.Fault, Topic: 0, Reason: "bye", Message: "now"}),
	}, fuzzSep))
}
