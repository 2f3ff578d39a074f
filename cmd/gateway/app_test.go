package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/weftgate/weftgate/internal/buildtest"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

func TestMain(m *testing.M) {
	code := m.Run()
	buildtest.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testApp is the app in process on a memory store, served by httptest.
type testApp struct {
	*app
	srv *httptest.Server
}

func newTestApp(t testing.TB, args ...string) *testApp {
	t.Helper()
	return newTestAppLog(t, slog.New(slog.DiscardHandler), args...)
}

// newTestAppLog is newTestApp logging to log.
func newTestAppLog(t testing.TB, log *slog.Logger, args ...string) *testApp {
	t.Helper()
	p, res, err := parseAndValidate(append([]string{"-store", "memory", "-ping-interval", "0"}, args...), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newApp(p, res, log)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := a.handlers()
	ta := &testApp{app: a, srv: httptest.NewServer(ws)}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testDrain)
		defer cancel()
		if err := a.gw.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		ta.srv.Close()
		a.store.Close()
	})
	return ta
}

func (ta *testApp) get(t *testing.T, path string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ta.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape gathers the registry into name{labels} -> value (histograms give
// their sample count under name_count).
func (ta *testApp) scrape(t testing.TB) map[string]float64 {
	t.Helper()
	families, err := ta.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName() + labelsOf(m)
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[f.GetName()+"_count"+labelsOf(m)] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func labelsOf(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		if l.GetName() == "version" || l.GetName() == "goversion" {
			continue
		}
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// peer is a bare aweft peer over coder/websocket.
type peer struct {
	t   testing.TB
	ctx context.Context
	ws  *websocket.Conn
}

func dialPeer(t testing.TB, ctx context.Context, url string) *peer {
	t.Helper()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &peer{t: t, ctx: ctx, ws: ws}
}

func (p *peer) send(f frame.Frame) {
	p.t.Helper()
	b, err := frame.Encode(f)
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.ws.Write(p.ctx, websocket.MessageBinary, b); err != nil {
		p.t.Fatalf("send %v: %v", f.Kind, err)
	}
}

// expect reads the next frame and fails unless it is of kind k.
func (p *peer) expect(k frame.Kind) frame.Frame {
	p.t.Helper()
	_, b, err := p.ws.Read(p.ctx)
	if err != nil {
		p.t.Fatalf("read, want %v: %v", k, err)
	}
	f, err := frame.Decode(b)
	if err != nil {
		p.t.Fatal(err)
	}
	if f.Kind != k {
		p.t.Fatalf("got %+v, want a %v frame", f, k)
	}
	return f
}

// join opens an existing document by name, asking for its state, and
// reads the gateway's open and state.
func (p *peer) join(name string) {
	p.t.Helper()
	p.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: name, Want: true})
	p.expect(frame.Open)
	p.expect(frame.State)
}

// create opens a new document from the peer's root and hands over its
// (empty) state, as the aweft client does for a document it made.
func (p *peer) create(name string, root commit.ID) {
	p.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: name, Root: &frame.Root{ID: root, Kind: commit.Object}})
	if f := p.expect(frame.Open); !f.Want {
		p.t.Fatalf("gateway's open %+v does not want the new document's state", f)
	}
	p.send(frame.Frame{Kind: frame.State, Topic: 1})
}

func setTitle(t testing.TB, root commit.ID, title string) []byte {
	t.Helper()
	b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("title"), Value: commit.TextValue(title)}}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestMetricsCountACommitOnceEach(t *testing.T) {
	ta := newTestApp(t)
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

	want := map[string]float64{
		"weftgate_connections_open":                                 2,
		"weftgate_connections_total":                                2,
		"weftgate_links":                                            2,
		"weftgate_documents_open":                                   1,
		"weftgate_document_members":                                 2,
		"weftgate_commits_received_total":                           1,
		"weftgate_commits_applied_total":                            1,
		"weftgate_commits_delivered_total":                          1,
		"weftgate_store_sync_seconds_count":                         1,
		"weftgate_authority_question_seconds_count{question=judge}": 1,
		"weftgate_authority_question_seconds_count{question=open}":  2,
		"weftgate_store_up":                                         1,
		"weftgate_draining":                                         0,
		"weftgate_build_info":                                       1,
	}
	// Two scrapes see the same values: the gateway's counters are read, not
	// accumulated, at scrape time.
	for range 2 {
		got := ta.scrape(t)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %v, want %v", k, got[k], v)
			}
		}
	}
}

func TestMetricsCountRefusalsByReason(t *testing.T) {
	ta := newTestApp(t, "-read-only")
	ctx := testCtx(t)
	root := commit.NewID()
	a := dialPeer(t, ctx, ta.srv.URL)
	a.create("doc", root)
	a.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{setTitle(t, root, "no")}})
	f := a.expect(frame.Refused)
	if f.Seq != 1 || len(f.Reasons) != 1 || f.Reasons[0].Code != "read-only" {
		t.Fatalf("refused %+v, want seq 1 for read-only", f)
	}

	// A browser from a foreign origin is refused at the door.
	code, body := ta.get(t, "/", http.Header{"Origin": {"https://elsewhere.example"}, "Connection": {"Upgrade"}, "Upgrade": {"websocket"}})
	if code != http.StatusForbidden || !strings.Contains(body, `"origin"`) {
		t.Fatalf("foreign origin: %d %s", code, body)
	}

	got := ta.scrape(t)
	for k, v := range map[string]float64{
		"weftgate_commits_refused_total{reason=read-only}": 1,
		"weftgate_commits_applied_total":                   0,
		"weftgate_handshake_refusals_total{reason=origin}": 1,
		"weftgate_handshake_refusals_total{reason=limit}":  0,
		"weftgate_authority_timeouts_total":                0,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

func TestReadiness(t *testing.T) {
	ta := newTestApp(t)
	if code, body := ta.get(t, "/readyz", nil); code != http.StatusOK {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	if code, _ := ta.get(t, "/healthz", nil); code != http.StatusOK {
		t.Fatalf("/healthz: %d", code)
	}
	ta.draining.Store(true)
	if code, body := ta.get(t, "/readyz", nil); code != http.StatusServiceUnavailable || !strings.Contains(body, "draining") {
		t.Errorf("/readyz while draining: %d %q", code, body)
	}
	if code, _ := ta.get(t, "/healthz", nil); code != http.StatusOK {
		t.Errorf("/healthz while draining: %d, want 200 (the process is up)", code)
	}
	ta.draining.Store(false)

	ta.store.Close()
	if code, body := ta.get(t, "/readyz", nil); code != http.StatusServiceUnavailable || !strings.Contains(body, "store") {
		t.Errorf("/readyz with the store closed: %d %q", code, body)
	}
	st := ta.statusPage(t)
	if st.Store.Healthy || st.Store.Error == "" {
		t.Errorf("status store %+v, want unhealthy with its error", st.Store)
	}
}

func (ta *testApp) statusPage(t *testing.T) statusPage {
	t.Helper()
	code, body := ta.get(t, "/status", nil)
	if code != http.StatusOK {
		t.Fatalf("/status: %d", code)
	}
	var st statusPage
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("status: %v\n%s", err, body)
	}
	return st
}

func TestStatusPage(t *testing.T) {
	ta := newTestApp(t, "-read-only")
	ctx := testCtx(t)
	root := commit.NewID()
	a := dialPeer(t, ctx, ta.srv.URL)
	a.create("doc", root)
	a.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{setTitle(t, root, "no")}})
	a.expect(frame.Refused)

	st := ta.statusPage(t)
	if len(st.Documents) != 1 {
		t.Fatalf("documents %+v, want one", st.Documents)
	}
	d := st.Documents[0]
	if d.Name != "doc" || d.Links != 1 || d.Cursor != 0 || d.DurableCursor != 0 || d.Pending != 0 || d.QuestionsInFlight != 0 {
		t.Errorf("document %+v", d)
	}
	if len(st.Links) != 1 || st.Links[0].ID == "" || st.Links[0].LastPongAge != nil {
		t.Errorf("links %+v, want one that never answered a ping (pings are off)", st.Links)
	}
	if st.Counters.Refused["read-only"] != 1 || st.Counters.Received != 1 {
		t.Errorf("counters %+v", st.Counters)
	}
	if !st.Authority.ReadOnly || st.Authority.Kind != "bridge" || st.Authority.Fallback != "open" || st.Authority.Streams == nil {
		t.Errorf("authority %+v", st.Authority)
	}
	if st.Version == "" || st.StartedAt.IsZero() || st.Store.Kind != storeMemory || !st.Store.Healthy {
		t.Errorf("status %+v", st)
	}
}

var _ prometheus.Collector = (*gatewayCollector)(nil)

// A read-only gateway still asks the bridge who may open a document: with
// the closed fallback and no backend, nobody may, rather than everybody.
func TestReadOnlyKeepsAccessControl(t *testing.T) {
	ta := newTestApp(t, "-read-only", "-authority-fallback", "closed")
	a := dialPeer(t, testCtx(t), ta.srv.URL)
	a.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Root: &frame.Root{ID: commit.NewID(), Kind: commit.Object}})
	if f := a.expect(frame.Fault); f.Topic != 1 || f.Reason != "no-authority" {
		t.Fatalf("fault %+v, want no-authority on topic 1", f)
	}
}

// Profiles are served on the admin listener with -pprof, and nowhere
// without it; never on the WebSocket listener.
func TestProfilesOnlyOnTheAdminListener(t *testing.T) {
	for _, on := range []bool{false, true} {
		args := []string{"-store", "memory", "-admin-addr", "127.0.0.1:0"}
		if on {
			args = append(args, "-pprof")
		}
		p, res, err := parseAndValidate(args, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := newApp(p, res, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		ws, admin := a.handlers()
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
			rec := httptest.NewRecorder()
			ws.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil))
			if rec.Code == http.StatusOK {
				t.Errorf("pprof %v: the WebSocket listener served %s", on, path)
			}
			rec = httptest.NewRecorder()
			admin.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1"+path, nil))
			want := http.StatusNotFound
			if on {
				want = http.StatusOK
			}
			if rec.Code != want {
				t.Errorf("pprof %v: admin listener, %s: status %d, want %d", on, path, rec.Code, want)
			}
			if on && !strings.Contains(rec.Body.String(), "goroutine") {
				t.Errorf("admin listener, %s: no profile in %.200q", path, rec.Body.String())
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), testDrain)
		if err := a.gw.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		cancel()
		a.store.Close()
	}
}

// /status and /metrics list every document: on a WebSocket listener off
// loopback they are served only with -insecure-admin, and with -admin-addr
// they move to the admin listener. /healthz and /readyz stay for load
// balancers.
func TestStatusAndMetricsStayOffAPublicListener(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		wsStatus    int
		adminStatus int // 0: no admin listener
	}{
		{args: []string{"-ws-addr", "127.0.0.1:0"}, wsStatus: http.StatusOK},
		{args: []string{"-ws-addr", "0.0.0.0:8080"}, wsStatus: http.StatusNotFound},
		{args: []string{"-ws-addr", "0.0.0.0:8080", "-insecure-admin"}, wsStatus: http.StatusOK},
		{args: []string{"-ws-addr", "0.0.0.0:8080", "-admin-addr", "127.0.0.1:0"}, wsStatus: http.StatusNotFound, adminStatus: http.StatusOK},
	} {
		p, res, err := parseAndValidate(append([]string{"-store", "memory"}, tc.args...), nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := newApp(p, res, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		ws, admin := a.handlers()
		get := func(h http.Handler, path string) int {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Host = "localhost" // a loopback listener answers loopback names only
			h.ServeHTTP(rec, req)
			return rec.Code
		}
		for _, path := range []string{"/status", "/metrics"} {
			if got := get(ws, path); got != tc.wsStatus {
				t.Errorf("%v: WebSocket listener %s: %d, want %d", tc.args, path, got, tc.wsStatus)
			}
			if admin != nil && get(admin, path) != tc.adminStatus {
				t.Errorf("%v: admin listener %s: %d, want %d", tc.args, path, get(admin, path), tc.adminStatus)
			}
		}
		health := ws
		if admin != nil {
			health = admin
		}
		if got := get(health, "/healthz"); got != http.StatusOK {
			t.Errorf("%v: /healthz %d", tc.args, got)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testDrain)
		if err := a.gw.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		cancel()
		a.store.Close()
	}
}
