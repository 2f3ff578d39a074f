package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

const guard = 10 * time.Second

// startGateway runs a real gateway with the real bridge: WebSocket on an
// httptest server, gRPC on 127.0.0.1. It returns both addresses.
func startGateway(t *testing.T) (ws, grpcAddr string) {
	t.Helper()
	b := bridge.New(bridge.Config{Policy: bridge.PolicyClosed})
	gw, err := gateway.New(gateway.Config{Authority: b, Calls: b, Admission: admission.Config{Identifier: b},
		PingInterval: -1, JudgeTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b.Attach(gw)
	hs := httptest.NewServer(gw)
	g := b.NewGRPCServer()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		g.Serve(l)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := gw.Shutdown(ctx); err != nil && !errors.Is(err, gateway.ErrClosed) {
			t.Errorf("gateway: %v", err)
		}
		b.Close(ctx)
		g.Stop()
		<-served
		hs.Close()
	})
	return "ws" + strings.TrimPrefix(hs.URL, "http"), l.Addr().String()
}

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func nextRefused(t *testing.T, d *peer.Doc) peer.Refused {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case ev, ok := <-d.Events():
			if !ok {
				t.Fatalf("%s ended: %v", d.Name(), d.Err())
			}
			if r, ok := ev.(peer.Refused); ok {
				return r
			}
		case <-timeout:
			t.Fatal("no refusal")
		}
	}
}

type saved struct {
	name   string
	cursor uint64
}

// The authority beside a real gateway: browsers' commits under /admin are
// refused unless their session has the role, big values are refused,
// and what lands is saved to the data directory.
func TestAuthorityEndToEnd(t *testing.T) {
	ws, addr := startGateway(t)
	dir := t.TempDir()
	sessionsFile := filepath.Join(dir, "sessions.json")
	os.WriteFile(sessionsFile, []byte(`{"s3cret": {"id": "alice", "roles": ["admin"]}}`), 0o644)
	cfg, err := parse([]string{"-gateway", addr, "-prefix", "board:", "-data", filepath.Join(dir, "data"),
		"-sessions", sessionsFile, "-max-value-bytes", "16"}, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	saves := make(chan saved, 64)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, cfg, slog.New(slog.DiscardHandler), hooks{
			ready: func(*client.Client) { close(ready) },
			saved: func(n string, c uint64) { saves <- saved{n, c} },
		})
	}()
	wait(t, ready, "the authority")

	dial := func(cookie string) (*peer.Peer, error) {
		h := http.Header{}
		if cookie != "" {
			h.Set("Cookie", "session="+cookie)
		}
		dctx, dcancel := context.WithTimeout(context.Background(), guard)
		defer dcancel()
		p, err := peer.Dial(dctx, ws, peer.Options{Header: h})
		if err == nil {
			t.Cleanup(func() { p.Close() })
		}
		return p, err
	}
	anon, err := dial("")
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(context.Background(), guard)
	defer scancel()
	d, err := anon.Share(sctx, "board:1", document.New(commit.NewID(), commit.Object, document.Limits{}))
	if err != nil {
		t.Fatalf("Share: %v", err)
	}
	root, _ := d.Root()
	set := func(d *peer.Doc, key, v string) uint64 {
		t.Helper()
		seq, err := d.Commit(commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey(key), Value: commit.TextValue(v)})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	set(d, "title", "plan")
	forbidden := set(d, "admin", "me")
	big := set(d, "notes", strings.Repeat("x", 17))
	for _, want := range []struct {
		seq  uint64
		code string
		path string
	}{{forbidden, ReasonForbidden, "admin"}, {big, ReasonValueTooLarge, "notes"}} {
		r := nextRefused(t, d)
		if !r.Mine || r.Seq != want.seq || len(r.Reasons) != 1 || r.Reasons[0].Code != want.code || strings.Join(r.Reasons[0].Path, "/") != want.path {
			t.Fatalf("refused %+v, want %s at %s for seq %d", r, want.code, want.path, want.seq)
		}
	}

	admin, err := dial("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	da, err := admin.Join(sctx, "board:1")
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	set(da, "admin", "alice")
	for {
		s := wait(t, saves, "a save")
		if s.name == "board:1" && s.cursor == 2 {
			break
		}
	}
	l, err := dirStore{dir: cfg.Data}.Load("board:1")
	if err != nil || l.Cursor != 2 || l.State.Root.ID != root || len(l.State.Commit.Deltas) != 2 {
		t.Fatalf("saved %+v, %v", l, err)
	}
	for _, dl := range l.State.Commit.Deltas {
		if want := map[string]string{"title": "plan", "admin": "alice"}[dl.Ref.Key]; dl.Value.Str != want {
			t.Fatalf("saved %s = %q, want %q", dl.Ref.Key, dl.Value.Str, want)
		}
	}

	if _, err := dial("guessed"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("an unknown session dialled: %v", err)
	}
	cancel()
	if err := wait(t, served, "the authority to stop"); err != nil {
		t.Fatalf("serve: %v", err)
	}

	// A fresh gateway holds nothing: a peer opening board:1 gets it from
	// the authority's directory.
	ws2, addr2 := startGateway(t)
	cfg.Gateway = addr2
	ready2 := make(chan struct{})
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go func() {
		served <- serve(ctx2, cfg, slog.New(slog.DiscardHandler), hooks{ready: func(*client.Client) { close(ready2) }})
	}()
	wait(t, ready2, "the second authority")
	ws = ws2
	again, err := dial("")
	if err != nil {
		t.Fatal(err)
	}
	dj, err := again.Join(sctx, "board:1")
	if err != nil {
		t.Fatalf("Join after the restart: %v", err)
	}
	if r, _ := dj.Root(); r != root || len(dj.Snapshot().Deltas) != 2 {
		t.Fatalf("after the restart the peer holds %v under %v", dj.Snapshot(), r)
	}
	cancel2()
	if err := wait(t, served, "the second authority to stop"); err != nil {
		t.Fatalf("serve: %v", err)
	}
}
