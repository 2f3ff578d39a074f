package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/buildtest"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// These tests build the real binary and drive it as an operator would:
// free ports, a temporary data directory, signals, exit codes.

const (
	// startDeadline bounds how long the binary may take to log "listening".
	startDeadline = 30 * time.Second
	// testDrain is the -drain-timeout the tests pass; exit must come before.
	testDrain = 10 * time.Second
)

var ()

// gatewayBinary is this command, built once per test run.
func gatewayBinary(t *testing.T) string {
	return buildtest.Binary(t, "github.com/weftgate/weftgate/cmd/gateway")
}

// process is one running gateway binary.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan map[string]any // JSON log records
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{} // closed when stderr hits EOF
	addrs  boundAddrs
	ready  string // the -ready-file
}

// cleanEnv is the environment without any WEFTGATE_ setting of the caller's.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envPrefix) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// startGateway starts the binary on free ports and waits for its
// "listening" line.
func startGateway(t *testing.T, dataDir string, args ...string) *process {
	t.Helper()
	readyFile := filepath.Join(t.TempDir(), "ready.json")
	base := []string{
		"-ws-addr", "127.0.0.1:0", "-grpc-addr", "127.0.0.1:0",
		"-data-dir", dataDir, "-ready-file", readyFile,
		"-log-format", "json", "-drain-timeout", testDrain.String(),
	}
	p := &process{t: t, lines: make(chan map[string]any, 256), done: make(chan struct{}), ready: readyFile}
	p.cmd = exec.Command(gatewayBinary(t), append(base, args...)...)
	p.cmd.Env = cleanEnv()
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.readLogs(errPipe)
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})

	rec := p.waitLog("listening", startDeadline)
	b, err := os.ReadFile(readyFile)
	if err != nil {
		t.Fatalf("ready file: %v", err)
	}
	if err := json.Unmarshal(b, &p.addrs); err != nil {
		t.Fatalf("ready file %q: %v", b, err)
	}
	if p.addrs.WS != rec["ws"] || p.addrs.GRPC != rec["grpc"] {
		t.Fatalf("ready file %+v disagrees with the log %v", p.addrs, rec)
	}
	if strings.HasSuffix(p.addrs.WS, ":0") || strings.HasSuffix(p.addrs.GRPC, ":0") {
		t.Fatalf("ready file holds unbound addresses: %+v", p.addrs)
	}
	return p
}

func (p *process) readLogs(r io.Reader) {
	defer close(p.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		p.mu.Lock()
		p.stderr.Write(sc.Bytes())
		p.stderr.WriteByte('\n')
		p.mu.Unlock()
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			select {
			case p.lines <- rec:
			default: // nobody waits for this many lines; keep reading
			}
		}
	}
}

func (p *process) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// waitLog returns the first log record with message msg.
func (p *process) waitLog(msg string, within time.Duration) map[string]any {
	p.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case rec := <-p.lines:
			if rec["msg"] == msg {
				return rec
			}
		case <-p.done:
			p.t.Fatalf("gateway ended before logging %q:\n%s", msg, p.logs())
		case <-deadline:
			p.t.Fatalf("no %q log within %v:\n%s", msg, within, p.logs())
		}
	}
}

// stop sends SIGTERM and returns the exit code, failing past the drain
// deadline.
func (p *process) stop() int {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		<-p.done // stderr fully read before Wait closes the pipe
		exited <- p.cmd.Wait()
	}()
	select {
	case <-exited:
	case <-time.After(testDrain + 5*time.Second):
		p.t.Fatalf("gateway did not exit within the drain deadline:\n%s", p.logs())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *process) get(path string) (int, string) {
	p.t.Helper()
	resp, err := http.Get("http://" + p.addrs.WS + path)
	if err != nil {
		p.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

func (p *process) status() statusPage {
	p.t.Helper()
	code, body := p.get("/status")
	if code != http.StatusOK {
		p.t.Fatalf("/status: %d %s", code, body)
	}
	var st statusPage
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		p.t.Fatalf("/status is not the status page: %v\n%s", err, body)
	}
	return st
}

func metricValue(t *testing.T, body, series string) string {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	t.Fatalf("/metrics has no %s", series)
	return ""
}

func TestBinaryServesDrainsAndExits(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	p := startGateway(t, data)
	ctx, cancel := context.WithTimeout(context.Background(), startDeadline)
	defer cancel()

	if code, body := p.get("/healthz"); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, body := p.get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz: %d %q", code, body)
	}
	// No grpc_* series before the first call: they are not seeded for
	// every method and code.
	if _, metrics := p.get("/metrics"); strings.Contains(metrics, "\ngrpc_") {
		t.Errorf("/metrics has grpc_* series before any call")
	}
	// The gRPC listener speaks gRPC: the standard health service answers.
	cc, err := grpc.NewClient(p.addrs.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	hr, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || hr.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("gRPC health: %v %v", hr, err)
	}
	// A backend's authority stream is open when the drain begins; the
	// drain ends it with UNAVAILABLE, which must not log a warning.
	auth, err := v1.NewGatewayServiceClient(cc).Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.Send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{Backend: "e2e"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Recv(); err != nil {
		t.Fatalf("authority welcome: %v", err)
	}

	// Peer a creates a document and commits into it; peer b, which joined
	// it, receives the commit, which the gateway delivers only once it is
	// durable.
	url := "http://" + p.addrs.WS
	root := commit.NewID()
	a := dialPeer(t, ctx, url)
	a.create("e2e", root)
	b := dialPeer(t, ctx, url)
	b.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "e2e", Want: true})
	b.expect(frame.Open)
	b.expect(frame.State)
	a.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{setTitle(t, root, "kept")}})
	b.expect(frame.Commits)

	st := p.status()
	if len(st.Documents) != 1 || st.Documents[0].Name != "e2e" || st.Documents[0].Links != 2 || st.Documents[0].DurableCursor != 1 {
		t.Errorf("status documents %+v, want e2e with two links at durable cursor 1", st.Documents)
	}
	if len(st.Links) != 2 || st.LinksAll != 2 {
		t.Errorf("status links %+v, want two", st.Links)
	}
	if st.Draining || !st.Store.Healthy || st.Store.Kind != storeBolt {
		t.Errorf("status %+v: want not draining, a healthy bolt store", st)
	}
	if st.Counters.Connections != 2 || st.Authority.Streams == nil {
		t.Errorf("status counters %+v authority %+v", st.Counters, st.Authority)
	}

	code, metrics := p.get("/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	if rpc := `grpc_server_handled_total{grpc_code="OK",grpc_method="Check",grpc_service="grpc.health.v1.Health",grpc_type="unary"} 1`; !strings.Contains(metrics, rpc) {
		t.Errorf("/metrics lacks the gRPC call metrics: want %s", rpc)
	}
	for series, want := range map[string]string{
		"weftgate_connections_open":         "2",
		"weftgate_connections_total":        "2",
		"weftgate_links":                    "2",
		"weftgate_documents_open":           "1",
		"weftgate_document_members":         "2",
		"weftgate_commits_received_total":   "1",
		"weftgate_commits_applied_total":    "1",
		"weftgate_commits_delivered_total":  "1",
		"weftgate_store_sync_seconds_count": "1",
		"weftgate_draining":                 "0",
		"weftgate_store_up":                 "1",
	} {
		if got := metricValue(t, metrics, series); got != want {
			t.Errorf("%s = %s, want %s", series, got, want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total", "weftgate_build_info", "weftgate_authority_question_seconds_bucket"} {
		if !strings.Contains(metrics, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	// Read while the gateway drains, so its close handshake is answered
	// as a real client answers it.
	closedA, closedB := readUntilClosed(ctx, a.ws), readUntilClosed(ctx, b.ws)
	code = p.stop()
	for _, closed := range []<-chan error{closedA, closedB} {
		if err := <-closed; websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("peer saw %v, want close 1001", err)
		}
	}
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, p.logs())
	}
	if !strings.Contains(p.logs(), `"msg":"drained"`) {
		t.Errorf("no drained log:\n%s", p.logs())
	}
	for _, kv := range []string{`"surface_grpc_auth":"none"`, `"surface_status_metrics":"` + p.addrs.WS + `"`, `"surface_pprof":"off"`} {
		if !strings.Contains(p.logs(), kv) {
			t.Errorf("the listening line lacks %s", kv)
		}
	}
	if _, err := auth.Recv(); status.Code(err) != codes.Unavailable {
		t.Errorf("the authority stream ended with %v, want Unavailable", err)
	}
	for _, line := range strings.Split(p.logs(), "\n") {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("a clean SIGTERM logged %s", line)
		}
		if strings.Contains(line, `"msg":"finished call"`) {
			t.Errorf("a gRPC call logged at INFO: %s", line)
		}
	}
	if _, err := os.Stat(p.ready); !os.IsNotExist(err) {
		t.Errorf("ready file still there after exit (%v)", err)
	}

	// The document and its commit outlived the process: a peer that holds
	// nothing gets the stored root, then the state with the title.
	p = startGateway(t, data)
	c := dialPeer(t, ctx, "http://"+p.addrs.WS)
	c.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "e2e", Want: true})
	if f := c.expect(frame.Open); f.Root == nil || f.Root.ID != root || f.Root.Kind != commit.Object {
		t.Errorf("after restart the gateway shares root %+v, want %v", f.Root, root)
	}
	state, err := commit.Decode(c.expect(frame.State).State)
	if err != nil {
		t.Fatalf("state: %v", err)
	}
	want := commit.Delta{Op: commit.Add, ID: root, Ref: commit.ObjectKey("title"), Value: commit.TextValue("kept")}
	if len(state.Deltas) != 1 || state.Deltas[0] != want {
		t.Errorf("state after restart %+v, want the title", state.Deltas)
	}
	closed := readUntilClosed(ctx, c.ws)
	if code := p.stop(); code != 0 {
		t.Fatalf("second run exit %d:\n%s", code, p.logs())
	}
	<-closed
}

func TestBinaryOperatorEndpointsOnAdminListenerWithTLS(t *testing.T) {
	certFile, keyFile, cert := testCert(t, t.TempDir())
	p := startGateway(t, filepath.Join(t.TempDir(), "data"),
		"-admin-addr", "127.0.0.1:0", "-tls-cert", certFile, "-tls-key", keyFile, "-store", "memory",
		"-grpc-tls-cert", certFile, "-grpc-tls-key", keyFile)
	if p.addrs.Admin == "" || !p.addrs.TLS {
		t.Fatalf("ready file %+v: want an admin address and TLS", p.addrs)
	}
	client := tlsClient(cert)
	resp, err := client.Get("https://" + p.addrs.Admin + "/readyz")
	if err != nil {
		t.Fatalf("readyz over TLS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz: %d", resp.StatusCode)
	}
	// The WebSocket listener no longer serves the operator paths.
	resp, err = client.Get("https://" + p.addrs.WS + "/metrics")
	if err != nil {
		t.Fatalf("WebSocket listener over TLS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the WebSocket listener: %d, want 404", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startDeadline)
	defer cancel()
	// The gRPC listener serves its pair too.
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	cc, err := grpc.NewClient(p.addrs.GRPC, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots})))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if hr, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || hr.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("gRPC health over TLS: %v %v", hr, err)
	}
	ws, _, err := websocket.Dial(ctx, "wss://"+p.addrs.WS+"/ws", &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatalf("wss dial: %v", err)
	}
	defer ws.CloseNow()
	closed := readUntilClosed(ctx, ws)
	if code := p.stop(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.logs())
	}
	if err := <-closed; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("peer saw %v, want close 1001", err)
	}
}

func TestBinaryRefusesBadSettings(t *testing.T) {
	bin := gatewayBinary(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		args []string
		env  []string
		want []string
	}{
		{"flag", []string{"-judge-timeout", "later"}, nil, []string{"-judge-timeout", "later"}},
		{"environment", nil, []string{"WEFTGATE_WS_ADDR=nowhere"}, []string{"-ws-addr", "WEFTGATE_WS_ADDR"}},
		{"busy port", []string{"-ws-addr", busy.Addr().String(), "-store", "memory"}, nil, []string{"-ws-addr", "address already in use"}},
		{"ready file in a missing directory", []string{"-ws-addr", "127.0.0.1:0", "-store", "memory", "-ready-file", filepath.Join(bin+".missing", "ready.json")}, nil, []string{"-ready-file"}},
		{"data dir under a file", []string{"-ws-addr", "127.0.0.1:0", "-data-dir", filepath.Join(bin, "data")}, nil, []string{"-data-dir"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"-grpc-addr", "127.0.0.1:0"}, tc.args...)...)
			cmd.Env = cleanEnv(tc.env...)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("exit 0, want a failure:\n%s", out)
			}
			if code := cmd.ProcessState.ExitCode(); code != exitSettings {
				t.Errorf("exit %d, want %d", code, exitSettings)
			}
			for _, w := range tc.want {
				if !bytes.Contains(out, []byte(w)) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// tlsClient trusts only cert.
func tlsClient(cert *x509.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// readUntilClosed reads ws until it fails and delivers that error.
func readUntilClosed(ctx context.Context, ws *websocket.Conn) <-chan error {
	done := make(chan error, 1)
	go func() {
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				done <- err
				return
			}
		}
	}()
	return done
}
