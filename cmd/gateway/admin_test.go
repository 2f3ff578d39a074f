package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// waitDurable waits, through the gateway's commit stream, for name's cursor n.
func waitDurable(t *testing.T, gw *gateway.Server, name string, n uint64) {
	t.Helper()
	reached := errors.New("reached")
	err := gw.Subscribe(testCtx(t), name, 0, func(ev gateway.Event) error {
		if ev.Cursor >= n {
			return reached
		}
		return nil
	})
	if err != reached {
		t.Fatalf("%s never reached cursor %d: %v", name, n, err)
	}
}

func getJSON(t *testing.T, url, host string, v any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if v != nil && res.StatusCode < 500 && res.Header.Get("Content-Type") == "application/json" {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v\n%s", url, err, b)
		}
	}
	return res.StatusCode
}

// GET /documents/{name} on the admin listener answers the document's
// state in the fixtures' JSON shape with its cursor and root; 404 for a
// name nobody has; never on the WebSocket listener, and behind the Host rule.
func TestDocumentView(t *testing.T) {
	ta := newTestApp(t, "-admin-addr", "127.0.0.1:0")
	_, adminMux := ta.handlers()
	admin := httptest.NewServer(adminMux)
	t.Cleanup(admin.Close)
	root := commit.NewID()
	p := dialPeer(t, testCtx(t), ta.srv.URL)
	p.create("notes/1", root)
	p.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{setTitle(t, root, "hello")}})
	waitDurable(t, ta.gw, "notes/1", 1)

	var page struct {
		Document string `json:"document"`
		Cursor   uint64 `json:"cursor"`
		Root     struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"root"`
		State struct {
			Root        string `json:"root"`
			Observables map[string]struct {
				Kind  string                     `json:"kind"`
				Slots map[string]json.RawMessage `json:"slots"`
			} `json:"observables"`
		} `json:"state"`
	}
	if code := getJSON(t, admin.URL+"/documents/notes/1", "", &page); code != http.StatusOK {
		t.Fatalf("GET /documents/notes/1: %d", code)
	}
	obs := page.State.Observables[root.String()]
	if page.Document != "notes/1" || page.Cursor != 1 || page.Root.ID != root.String() || page.Root.Kind != "object" ||
		page.State.Root != root.String() || obs.Kind != "object" || string(obs.Slots["title"]) != `"hello"` {
		t.Fatalf("page %+v", page)
	}
	var notFound map[string]string
	if code := getJSON(t, admin.URL+"/documents/nope", "", &notFound); code != http.StatusNotFound || notFound["error"] != "no-document" {
		t.Fatalf("absent document: %d %v", code, notFound)
	}
	if code := getJSON(t, admin.URL+"/documents/notes/1", "evil.example", nil); code != http.StatusForbidden {
		t.Fatalf("a foreign Host: %d, want 403", code)
	}
	if code := getJSON(t, ta.srv.URL+"/documents/notes/1", "", nil); code == http.StatusOK {
		t.Fatal("the WebSocket listener served a document")
	}
}

// /status shows each link's address, identity and open documents, and
// each backend's claims.
func TestStatusShowsLinksAndClaims(t *testing.T) {
	ta := newTestApp(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := ta.bridge.NewGRPCServer()
	served := make(chan struct{})
	go func() {
		defer close(served)
		g.Serve(lis)
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	t.Cleanup(func() {
		cancel()
		conn.Close()
		g.Stop()
		<-served
	})
	stream, err := v1.NewGatewayServiceClient(conn).Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stream.Send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{Backend: "auth"}}})
	if m, err := stream.Recv(); err != nil || m.GetWelcome() == nil {
		t.Fatalf("welcome: %v %v", m, err)
	}
	stream.Send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Claim{Claim: &v1.Claim{ClaimId: 4,
		Pattern: &v1.Pattern{Match: &v1.Pattern_Prefix{Prefix: "team/"}},
		Kinds:   []v1.QuestionKind{v1.QuestionKind_QUESTION_KIND_ACCEPT, v1.QuestionKind_QUESTION_KIND_MAY_OPEN}}}})
	if m, err := stream.Recv(); err != nil || !m.GetClaimResult().GetGranted() {
		t.Fatalf("claim: %v %v", m, err)
	}

	p := dialPeer(t, testCtx(t), ta.srv.URL)
	p.create("doc", commit.NewID()) // the gateway's open came: the link is a member

	st := ta.statusPage(t)
	if len(st.Links) != 1 {
		t.Fatalf("links %+v", st.Links)
	}
	l := st.Links[0]
	if l.Addr != "127.0.0.1" || !l.Identity.Anonymous || len(l.Documents) != 1 || l.Documents[0] != "doc" {
		t.Fatalf("link %+v", l)
	}
	if len(st.Authority.Streams) != 1 {
		t.Fatalf("streams %+v", st.Authority.Streams)
	}
	s := st.Authority.Streams[0]
	if s.Name != "auth" || len(s.Claims) != 1 {
		t.Fatalf("stream %+v", s)
	}
	c := s.Claims[0]
	if c.ClaimID != 4 || c.Match != "prefix" || c.Pattern != "team/" || len(c.Kinds) != 2 || c.Kinds[0] != "accept" || c.Kinds[1] != "may_open" {
		t.Fatalf("claim %+v", c)
	}
}
