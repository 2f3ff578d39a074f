package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// localGet is a GET of path naming a loopback host, as a browser on this
// machine would: a loopback listener answers no other name.
func localGet(path string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Host = "127.0.0.1"
	return r
}

// code is the status of GET path on h.
func code(t *testing.T, h *http.ServeMux, path string) int {
	t.Helper()
	if h == nil {
		return 0
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, localGet(path))
	return rec.Code
}

func TestPagesWhereTheyMayBe(t *testing.T) {
	for _, c := range []struct {
		name                       string
		args                       []string
		demo, inspectWS, inspectAd int
	}{
		{"loopback: both, for a newcomer", nil, 200, 200, 0},
		{"public: neither", []string{"-ws-addr", "0.0.0.0:8080"}, 404, 404, 0},
		{"public with -demo on", []string{"-ws-addr", "0.0.0.0:8080", "-demo", "on"}, 200, 404, 0},
		{"loopback with -demo off", []string{"-demo", "off"}, 404, 200, 0},
		{"admin listener takes the inspector", []string{"-ws-addr", "0.0.0.0:8080", "-admin-addr", "127.0.0.1:0"}, 404, 404, 200},
		{"-inspect=false", []string{"-admin-addr", "127.0.0.1:0", "-inspect=false"}, 200, 404, 404},
	} {
		t.Run(c.name, func(t *testing.T) {
			ta := newTestApp(t, c.args...)
			ws, admin := ta.handlers()
			if got := code(t, ws, "/demo/"); got != c.demo {
				t.Errorf("/demo/ on the WebSocket listener: %d, want %d", got, c.demo)
			}
			if got := code(t, ws, "/inspect/"); got != c.inspectWS {
				t.Errorf("/inspect/ on the WebSocket listener: %d, want %d", got, c.inspectWS)
			}
			if got := code(t, admin, "/inspect/"); got != c.inspectAd {
				t.Errorf("/inspect/ on the admin listener: %d, want %d", got, c.inspectAd)
			}
		})
	}
}

func TestPagesServeTheModuleWithTheirHeaders(t *testing.T) {
	ta := newTestApp(t)
	ws, _ := ta.handlers()
	for _, path := range []string{"/demo/aweft/index.js", "/inspect/aweft/link.js", "/demo/app.js"} {
		rec := httptest.NewRecorder()
		ws.ServeHTTP(rec, localGet(path))
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
			t.Errorf("%s: %d %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
	}
	if got := code(t, ws, "/demo/aweft/test/fixtures.test.js"); got != 404 {
		t.Errorf("the module's tests are served: %d", got)
	}
}

func TestPageSettingsRefused(t *testing.T) {
	for _, args := range [][]string{{"-demo", "maybe"}, {"-ws-paths", "/ws,/demo"}, {"-ws-paths", "/inspect/ws"}} {
		if _, _, err := parseAndValidate(args, nil); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// sse reads one Server-Sent Event: its name and data.
func sse(t *testing.T, r *bufio.Reader) (event, data string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("read an event: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && event != "":
			return event, data
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

func openStream(t *testing.T, ctx context.Context, url string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

func TestInspectCommitsStream(t *testing.T) {
	ta := newTestApp(t)
	ctx := testCtx(t)
	root := commit.NewID()
	a := dialPeer(t, ctx, ta.srv.URL)
	a.create("doc", root)

	resp, r := openStream(t, ctx, ta.srv.URL+"/inspect/commits?doc=doc")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if ev, data := sse(t, r); ev != "open" || data != `{"cursor":0}` {
		t.Fatalf("first event %s %s, want open at cursor 0", ev, data)
	}
	list := commit.NewID()
	c, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{
		{Op: commit.Add, ID: root, Ref: commit.ObjectKey("list"), Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Array, ID: list})},
		{Op: commit.Add, ID: list, Ref: commit.Ref{Kind: commit.Array, Key: "\x80"}, Value: commit.TextValue("x")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	a.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{c}})
	ev, data := sse(t, r)
	var got commitEvent
	if err := json.Unmarshal([]byte(data), &got); ev != "commit" || err != nil {
		t.Fatalf("event %s %s: %v", ev, data, err)
	}
	// Deltas come in canonical order, which the random ids decide.
	paths := map[commit.Kind][]string{commit.Object: {"list"}, commit.Array: {"list", "80"}}
	want := commitEvent{Cursor: 1, Origin: got.Origin, Deltas: got.Deltas, Paths: [][]string{}, Observables: 2, Slots: 2}
	for _, d := range got.Deltas {
		want.Paths = append(want.Paths, paths[d.Ref.Kind])
	}
	if !reflect.DeepEqual(got, want) || !strings.HasPrefix(got.Origin, "c") || len(got.Deltas) != 2 {
		t.Errorf("got %+v, want %+v from a link", got, want)
	}

	for _, c := range []struct{ query, status string }{{"?doc=nothing", "404 no-document"}, {"", "400 doc"}} {
		code, body := ta.get(t, "/inspect/commits"+c.query, nil)
		if !strings.HasPrefix(fmt.Sprintf("%d %s", code, body), c.status) {
			t.Errorf("/inspect/commits%s: %d %s, want %s", c.query, code, body, c.status)
		}
	}
	// The streams are bounded: one open already, so maxCommitStreams-1 more, then 503.
	for range maxCommitStreams - 1 {
		_, r := openStream(t, ctx, ta.srv.URL+"/inspect/commits?doc=doc")
		sse(t, r)
	}
	if code, body := ta.get(t, "/inspect/commits?doc=doc", nil); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "too-many-streams") {
		t.Errorf("a stream past the bound: %d %s", code, body)
	}
}

func TestStatusGivesEachBackendsClaims(t *testing.T) {
	ta := newTestApp(t)
	ctx := testCtx(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- ta.serveGRPC(gctx, l) }()
	t.Cleanup(func() { stop(); <-served })
	c, err := client.Dial(ctx, l.Addr().String(), client.Options{Backend: "rules"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, p := range []string{"board:", "demo:"} {
		accept := func(context.Context, client.AcceptQuestion) ([]client.Reason, error) { return nil, nil }
		if _, err := c.Claim(ctx, client.Prefix(p), client.Handlers{Accept: accept}); err != nil {
			t.Fatal(err)
		}
	}
	// A document under a claim, and one under none.
	p := dialPeer(t, ctx, ta.srv.URL)
	p.create("demo:x", commit.NewID())
	q := dialPeer(t, ctx, ta.srv.URL)
	q.create("other", commit.NewID())
	// Each create's open went to the authority before its answer: both are held.
	st := ta.statusPage(t)
	claimed := map[string][]string{}
	for _, d := range st.Documents {
		claimed[d.Name] = d.ClaimedBy
	}
	if want := map[string][]string{"demo:x": {"rules"}, "other": {}}; !reflect.DeepEqual(claimed, want) {
		t.Errorf("claimed_by %v, want %v", claimed, want)
	}
	if s := st.Authority.Streams; len(s) != 1 || s[0].Name != "rules" || s[0].State != "connected" || len(s[0].Claims) != 2 {
		t.Errorf("/status streams %+v, want rules, connected, with its 2 claims", s)
	}
}

func TestStatusListsADocumentsLinksAndSize(t *testing.T) {
	ta := newTestApp(t)
	ctx := testCtx(t)
	root := commit.NewID()
	a := dialPeer(t, ctx, ta.srv.URL)
	a.create("doc", root)
	b := dialPeer(t, ctx, ta.srv.URL)
	b.join("doc")
	a.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{setTitle(t, root, "one")}})
	b.expect(frame.Commits)
	st := ta.statusPage(t)
	want := []memberStatus{{Link: "c1", Topic: 1, Addr: "127.0.0.1", Anonymous: true}, {Link: "c2", Topic: 1, Addr: "127.0.0.1", Anonymous: true}}
	if len(st.Documents) != 1 || !reflect.DeepEqual(st.Documents[0].Members, want) {
		t.Errorf("documents %+v, want doc's members %+v", st.Documents, want)
	}
	if len(st.Links) != 2 || st.Links[0].Addr != "127.0.0.1" {
		t.Errorf("links %+v, want two from 127.0.0.1", st.Links)
	}
	if d := st.Documents[0]; d.Observables != 1 || d.Slots != 1 {
		t.Errorf("doc's size: %d observables, %d slots; want 1 and 1", d.Observables, d.Slots)
	}
}

// The inspector shows document content: on a loopback listener a page on a
// rebound name (Host evil.example) gets none of it.
func TestInspectorRefusesReboundNames(t *testing.T) {
	ta := newTestApp(t)
	ws, _ := ta.handlers()
	for _, path := range []string{"/inspect/", "/inspect/commits?doc=x", "/inspect/ws"} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		r.Host = "evil.example:8080"
		rec := httptest.NewRecorder()
		ws.ServeHTTP(rec, r)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `"host"`) {
			t.Errorf("%s as evil.example: %d %s, want 403 host", path, rec.Code, rec.Body.String())
		}
	}
}
