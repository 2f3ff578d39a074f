package natsrelay_test

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/bridge/natsrelay"
	"github.com/weftgate/weftgate/gateway"
	jsstore "github.com/weftgate/weftgate/gateway/store/jetstream"
	"github.com/weftgate/weftgate/internal/natstest"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// node is one gateway with its bridge and relay on the shared NATS server,
// under -authority-fallback closed: nothing lands without a verdict.
type node struct {
	ws    string // WebSocket URL
	grpc  string // gRPC address
	relay *natsrelay.Relay
	b     *bridge.Server
	gw    *gateway.Server
}

func startNode(t *testing.T, ns *natstest.Server) *node {
	t.Helper()
	st, err := jsstore.Open(ctxT(t), ns.Connect(t), jsstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r, err := natsrelay.New(ctxT(t), ns.Connect(t), natsrelay.Options{TTL: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	b := bridge.New(bridge.Config{Store: st, Policy: bridge.PolicyClosed, Relay: r})
	gw, err := gateway.New(gateway.Config{Store: st, Authority: b, Calls: b, PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	b.Attach(gw)
	if err := r.Serve(b); err != nil {
		t.Fatal(err)
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := b.NewGRPCServer()
	go g.Serve(gl)
	hs := httptest.NewServer(gw)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		gw.Shutdown(ctx)
		b.Close(ctx)
		g.Stop()
		hs.Close()
		r.Close()
	})
	return &node{ws: "ws" + strings.TrimPrefix(hs.URL, "http") + "/", grpc: gl.Addr().String(), relay: r, b: b, gw: gw}
}

// A backend connected to one node judges the commits peers make through
// another: its refusal reaches the peer on the other node with its own
// reason, and its acceptance lets the commit land (decision 034).
func TestABackendOnOneNodeJudgesAnother(t *testing.T) {
	ns := natstest.Start(t)
	a, b := startNode(t, ns), startNode(t, ns)
	c, err := client.Dial(ctxT(t), a.grpc, client.Options{Backend: "judge"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_, err = c.Claim(ctxT(t), client.Prefix("doc"), client.Handlers{
		Accept: func(_ context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
			for _, d := range q.Commit.Deltas {
				if d.Ref.Key == "secret" {
					return []client.Reason{client.Refuse("not-here", "secret is read-only")}, nil
				}
			}
			return nil, nil
		},
		MayOpen: func(context.Context, client.MayOpenQuestion) ([]client.Reason, error) { return nil, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	// Node b learns a's claims through the bucket.
	deadline := time.Now().Add(10 * time.Second)
	for len(b.relay.Nodes()) == 0 || len(b.relay.Nodes()[0].Claims) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("node b never learned node a's claims")
		}
		time.Sleep(5 * time.Millisecond) // polling another node's view
	}
	p, err := peer.Dial(ctxT(t), b.ws, peer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	root := commit.NewID()
	d, err := p.Share(ctxT(t), "doc-1", document.New(root, commit.Object, document.Limits{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Commit(commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey("title"), Value: commit.TextValue("ok")}); err != nil {
		t.Fatal(err)
	}
	seq, err := d.Commit(commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey("secret"), Value: commit.TextValue("no")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-d.Events():
		r, ok := ev.(peer.Refused)
		if !ok || !r.Mine || r.Seq != seq || r.Reasons[0].Code != "not-here" {
			t.Fatalf("got %+v, want the backend's refusal of seq %d", ev, seq)
		}
	case <-ctxT(t).Done():
		t.Fatal("no verdict")
	}
	_, state, cursor, err := b.gw.State(ctxT(t), "doc-1")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := commit.Decode(state)
	if cursor != 1 || len(st.Deltas) != 1 || st.Deltas[0].Ref.Key != "title" {
		t.Fatalf("cursor %d with %+v: want only the accepted commit landed", cursor, st.Deltas)
	}
	if n := b.b.Stats().Relayed.Load(); n < 2 {
		t.Fatalf("%d questions relayed, want the accept questions at least", n)
	}
}
