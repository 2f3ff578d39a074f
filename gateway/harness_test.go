package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// testServer is a gateway on 127.0.0.1 with a free port, shut down when the
// test ends.
type testServer struct {
	*gateway.Server
	http *httptest.Server
	url  string
}

func startGateway(t testing.TB, cfg gateway.Config) *testServer {
	t.Helper()
	if cfg.PingInterval == 0 {
		cfg.PingInterval = -1
	}
	s, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	ts := &testServer{Server: s, http: hs, url: "ws" + strings.TrimPrefix(hs.URL, "http")}
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

func (ts *testServer) stop(t testing.TB) {
	if ts.http == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil && err != gateway.ErrClosed {
		// What it waited on: a rare hang after a lost NATS server showed
		// only the deadline (TestNATSServerLostUnderWrites, 2026-12-07).
		var stacks strings.Builder
		pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Errorf("shutdown: %v; the goroutines then:\n%s", err, stacks.String())
	}
	ts.http.Close()
	ts.http = nil
}

func dial(t testing.TB, url string, opts peer.Options) *peer.Peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := peer.Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// sharedPair has one peer share name and a second join it, and returns
// their Docs.
func sharedPair(t *testing.T, url, name string) (*peer.Doc, *peer.Doc) {
	t.Helper()
	da, err := dial(t, url, peer.Options{}).Share(ctxT(t), name, newDoc())
	if err != nil {
		t.Fatal(err)
	}
	db, err := dial(t, url, peer.Options{}).Join(ctxT(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return da, db
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newDoc() *document.Document {
	return document.New(commit.NewID(), commit.Object, document.Limits{})
}

func set(d *peer.Doc, key string, v commit.Value) (uint64, error) {
	root, _ := d.Root()
	op := commit.Add
	d.Read(func(doc *document.Document) {
		if _, ok := doc.Get(root, commit.ObjectKey(key)); ok {
			op = commit.Replace
		}
	})
	return d.Commit(commit.Delta{Op: op, ID: root, Ref: commit.ObjectKey(key), Value: v})
}

// stateOf is d's replica as canonical snapshot bytes ("" when empty), so
// two replicas compare byte for byte.
func stateOf(t *testing.T, d *peer.Doc) string {
	t.Helper()
	return encodeState(t, d.Snapshot())
}

func encodeState(t *testing.T, c commit.Commit) string {
	t.Helper()
	if len(c.Deltas) == 0 {
		return ""
	}
	b, err := commit.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gatewayState is the gateway's replica of name in the same form.
func gatewayState(t *testing.T, s *gateway.Server, name string) string {
	t.Helper()
	_, state, _, err := s.State(ctxT(t), name)
	if err != nil {
		t.Fatalf("state of %s: %v", name, err)
	}
	return string(state)
}

// waitApplied reads d's events until n commits from the other end were
// applied, failing on anything else that ends it.
func waitApplied(t *testing.T, d *peer.Doc, n int) []peer.Applied {
	t.Helper()
	var got []peer.Applied
	timeout := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case ev, ok := <-d.Events():
			if !ok {
				t.Fatalf("%s ended after %d of %d commits: %v", d.Name(), len(got), n, d.Err())
			}
			switch e := ev.(type) {
			case peer.Applied:
				got = append(got, e)
			case peer.Refused:
				t.Errorf("%s: refused %+v", d.Name(), e)
			}
		case <-timeout:
			t.Fatalf("%s: %d of %d commits arrived", d.Name(), len(got), n)
		}
	}
	return got
}

func nextEvent[T any](t *testing.T, d *peer.Doc) T {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-d.Events():
			if !ok {
				t.Fatalf("%s ended: %v", d.Name(), d.Err())
			}
			if e, ok := ev.(T); ok {
				return e
			}
		case <-timeout:
			var zero T
			t.Fatalf("%s: no %T", d.Name(), zero)
		}
	}
}

func text(s string) commit.Value { return commit.TextValue(s) }

func key(i, j int) string { return fmt.Sprintf("p%d-k%d", i, j) }

// waitCursor waits, through the gateway's own commit stream, until name has
// reached cursor n (made durable).
func waitCursor(t *testing.T, s *gateway.Server, name string, n uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reached := fmt.Errorf("reached")
	err := s.Subscribe(ctx, name, 0, func(ev gateway.Event) error {
		if ev.Cursor >= n {
			return reached
		}
		return nil
	})
	if err != reached {
		t.Fatalf("%s never reached cursor %d: %v", name, n, err)
	}
}

func newHTTPServer(tb testing.TB, h http.Handler) *httptest.Server {
	tb.Helper()
	return httptest.NewServer(h)
}
