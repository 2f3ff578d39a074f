package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	jsstore "github.com/weftgate/weftgate/gateway/store/jetstream"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// startNats starts an embedded JetStream server on loopback for one test,
// with the given max_payload (0: the server's default, 1 MiB).
func startNats(t *testing.T, maxPayload int32) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), MaxPayload: maxPayload, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	return srv.ClientURL()
}

func TestNatsSettings(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string // the store kind, or the setting named in the error
	}{
		{[]string{"-nats-url", "nats://127.0.0.1:4222"}, nil, storeNats},
		{nil, map[string]string{"WEFTGATE_NATS_URL": "nats://a:4222,nats://b:4222"}, storeNats},
		{[]string{"-store", "nats", "-nats-url", "nats://127.0.0.1:4222", "-nats-replicas", "3"}, nil, storeNats},
		{[]string{"-store", "nats"}, nil, "nats-url"},
		{[]string{"-store", "memory", "-nats-url", "nats://127.0.0.1:4222"}, nil, "nats-url"},
		{[]string{"-nats-url", "nats://127.0.0.1:4222", "-nats-replicas", "2"}, nil, "nats-replicas"},
	} {
		p, _, err := parseAndValidate(c.args, c.env)
		var se *settingError
		switch {
		case err == nil && p.s.Store == c.want:
		case errors.As(err, &se) && se.Name == c.want:
		default:
			t.Errorf("%v %v: store %v, error %v; want %s", c.args, c.env, p, err, c.want)
		}
	}
}

// TestAppOnNats: the gateway app with -nats-url keeps a document's log in
// JetStream: a commit one peer makes reaches another and is in the log,
// read back through another connection.
func TestAppOnNats(t *testing.T) {
	url := startNats(t, 2<<20)
	ta := newTestApp(t, "-store", "nats", "-nats-url", url)
	ctx := testCtx(t)
	root := commit.NewID()
	a := dialPeer(t, ctx, ta.srv.URL)
	a.create("doc", root)
	b := dialPeer(t, ctx, ta.srv.URL)
	b.join("doc")
	a.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{setTitle(t, root, "hello")}})
	if f := b.expect(frame.Commits); len(f.Commits) != 1 {
		t.Fatalf("b got %d commits, want 1", len(f.Commits))
	}
	if err := ta.store.Healthy(ctx); err != nil {
		t.Fatalf("store: %v", err)
	}

	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	s, err := jsstore.Open(ctx, nc, jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Read(context.Background(), "doc", 1, 0)
	if err != nil || len(got) != 1 || string(got[0].Commit) != string(setTitle(t, root, "hello")) {
		t.Fatalf("the log holds %s, %v; want the one commit", fmt.Sprint(got), err)
	}
}

// TestTwoAppsOnOneNats: two gateway apps with the same -nats-url act as one
// gateway: a commit made through one reaches a peer on the other, which
// follows the document's log (issue 17).
func TestTwoAppsOnOneNats(t *testing.T) {
	url := startNats(t, 2<<20)
	ta := newTestApp(t, "-store", "nats", "-nats-url", url)
	tb := newTestApp(t, "-store", "nats", "-nats-url", url)
	ctx := testCtx(t)
	root := commit.NewID()
	a := dialPeer(t, ctx, ta.srv.URL)
	a.create("doc", root)
	// The creator's empty state reaches the log off the hub; the other
	// node finds the document once it is there.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	log, err := jsstore.Open(ctx, nc, jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, _, err := log.Load(ctx, "doc"); err == nil {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the new document never reached the log")
		}
	}
	b := dialPeer(t, ctx, tb.srv.URL)
	b.join("doc")
	a.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{setTitle(t, root, "hello")}})
	if f := b.expect(frame.Commits); len(f.Commits) != 1 || string(f.Commits[0]) != string(setTitle(t, root, "hello")) {
		t.Fatalf("the peer on the second node got %d commits, want a's", len(f.Commits))
	}
	// Each node's status knows the other through the relay's bucket.
	for _, x := range []*testApp{ta, tb} {
		for {
			code, body := x.get(t, "/status", nil)
			var page statusPage
			if code != 200 || json.Unmarshal([]byte(body), &page) != nil || page.Cluster == nil {
				t.Fatalf("status %d: %s", code, body)
			}
			if len(page.Cluster.Nodes) == 1 && page.Cluster.Connected {
				break
			}
			select {
			case <-tick.C:
			case <-ctx.Done():
				t.Fatalf("the status never showed the other node: %s", body)
			}
		}
	}
}

// TestNatsMaxPayloadTooSmall: a server whose max_payload cannot carry the
// largest commit the gateway accepts stops the start, named, instead of
// refusing that commit later.
func TestNatsMaxPayloadTooSmall(t *testing.T) {
	url := startNats(t, 0)
	p, res, err := parseAndValidate([]string{"-nats-url", url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newApp(p, res, slog.New(slog.DiscardHandler))
	var se *settingError
	if !errors.As(err, &se) || se.Name != "nats-url" || !strings.Contains(err.Error(), "max_payload") {
		t.Fatalf("start on a 1 MiB max_payload: %v", err)
	}
	// Within it, the start goes on.
	p, res, err = parseAndValidate([]string{"-nats-url", url, "-max-commit-bytes", "65536"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(p, res, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("start with small commits: %v", err)
	}
	if err := a.gw.Shutdown(testCtx(t)); err != nil {
		t.Error(err)
	}
	a.store.Close()
}
