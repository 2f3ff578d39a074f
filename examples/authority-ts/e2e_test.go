package authorityts

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/internal/buildtest"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// guard bounds every wait; the build steps get their own, longer bound.
const (
	guard      = 30 * time.Second
	buildGuard = 5 * time.Minute
	token      = "ts-e2e-token-0123456789"
)

// requireNode finds node, skipping without it unless CI is set.
func requireNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and node is not installed: %v", err)
		}
		t.Skip("node is not installed")
	}
	return node
}

// here is this package's directory.
func here(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Dir(file)
}

func run(dir, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), buildGuard)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

var (
	buildOnce sync.Once
	buildErr  error
)

// buildAuthority installs the pinned packages if .ci/run has not, and
// compiles the TypeScript (once per test binary), returning the directory.
func buildAuthority(t *testing.T) string {
	t.Helper()
	dir := here(t)
	buildOnce.Do(func() {
		npm, err := exec.LookPath("npm")
		if err != nil {
			buildErr = fmt.Errorf("node is installed but npm is not: %v", err)
			return
		}
		if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
			if buildErr = run(dir, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"); buildErr != nil {
				return
			}
		}
		buildErr = run(dir, npm, "run", "--silent", "build")
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return dir
}

// The TypeScript's own unit tests (node --test): the rules, the sessions,
// the mirror's document model, the store and the backoff.
func TestTypeScriptUnits(t *testing.T) {
	requireNode(t)
	dir := buildAuthority(t)
	if err := run(dir, "npm", "test", "--silent"); err != nil {
		t.Fatal(err)
	}
}

// gatewayBinary builds ./cmd/gateway.
func gatewayBinary(t *testing.T) string {
	return buildtest.Binary(t, "github.com/weftgate/weftgate/cmd/gateway")
}

// proc is a child process whose output is JSON log lines.
type proc struct {
	t     *testing.T
	name  string
	cmd   *exec.Cmd
	recs  chan map[string]any
	mu    sync.Mutex
	out   strings.Builder
	ended chan struct{} // closed when the output hits EOF
}

func start(t *testing.T, name string, cmd *exec.Cmd, out func(*exec.Cmd) (io.ReadCloser, error)) *proc {
	t.Helper()
	p := &proc{t: t, name: name, cmd: cmd, recs: make(chan map[string]any, 4096), ended: make(chan struct{})}
	r, err := out(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.ended)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			var rec map[string]any
			if json.Unmarshal(sc.Bytes(), &rec) == nil {
				p.recs <- rec
			}
		}
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("%s's output:\n%s", p.name, p.logs())
		}
	})
	return p
}

func (p *proc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitFor returns the next record with message msg for which match (nil:
// any) holds, passing over the others.
func (p *proc) waitFor(msg string, match func(map[string]any) bool) map[string]any {
	p.t.Helper()
	deadline := time.After(guard)
	for {
		select {
		case rec := <-p.recs:
			if rec["msg"] == msg && (match == nil || match(rec)) {
				return rec
			}
		case <-p.ended:
			p.t.Fatalf("%s ended before logging %q", p.name, msg)
		case <-deadline:
			p.t.Fatalf("%s logged no %q within %v", p.name, msg, guard)
		}
	}
}

// stop sends SIGTERM and fails unless the process exits 0.
func (p *proc) stop() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			p.t.Fatalf("%s exited: %v", p.name, err)
		}
	case <-time.After(guard):
		p.t.Fatalf("%s did not exit within %v of SIGTERM", p.name, guard)
	}
}

type addrs struct {
	WS   string `json:"ws"`
	GRPC string `json:"grpc"`
}

// startGateway runs the binary with the closed policy and the token, on
// the given addresses (port 0 picks one), and returns where it listens.
func startGateway(t *testing.T, bin, data string, at addrs) (*proc, addrs) {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready.json")
	cmd := exec.Command(bin, "-ws-addr", at.WS, "-grpc-addr", at.GRPC, "-data-dir", data, "-ready-file", ready,
		"-authority-fallback", "closed", "-grpc-token", token, "-log-format", "json", "-drain-timeout", "10s")
	p := start(t, "gateway", cmd, (*exec.Cmd).StderrPipe)
	p.waitFor("listening", nil)
	b, err := os.ReadFile(ready)
	if err != nil {
		t.Fatal(err)
	}
	var got addrs
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("ready file %q: %v", b, err)
	}
	return p, got
}

func startAuthority(t *testing.T, node, main, gateway, tok, data, sessions string) *proc {
	t.Helper()
	cmd := exec.Command(node, main, "--gateway", gateway, "--prefix", "board:", "--data", data,
		"--sessions", sessions, "--max-value-bytes", "16")
	cmd.Env = append(os.Environ(), "WEFTGATE_GRPC_TOKEN="+tok)
	return start(t, "authority", cmd, (*exec.Cmd).StdoutPipe)
}

func is(key string, want any) func(map[string]any) bool {
	return func(rec map[string]any) bool { return rec[key] == want }
}

func saved(doc, cursor string) func(map[string]any) bool {
	return func(rec map[string]any) bool { return rec["document"] == doc && rec["cursor"] == cursor }
}

func dial(t *testing.T, ws, cookie string) (*peer.Peer, error) {
	t.Helper()
	h := http.Header{}
	if cookie != "" {
		h.Set("Cookie", "session="+cookie)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	p, err := peer.Dial(ctx, "ws://"+ws+"/", peer.Options{Header: h})
	if err == nil {
		t.Cleanup(func() { p.Close() })
	}
	return p, err
}

// next returns d's next event of type E, passing over the others.
func next[E peer.Event](t *testing.T, d *peer.Doc) E {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case ev, ok := <-d.Events():
			if !ok {
				t.Fatalf("%s ended: %v", d.Name(), d.Err())
			}
			if e, ok := ev.(E); ok {
				return e
			}
		case <-timeout:
			var zero E
			t.Fatalf("no %T on %s", zero, d.Name())
		}
	}
}

// set adds key, or replaces it when op is commit.Replace.
func set(t *testing.T, d *peer.Doc, key, v string, op ...commit.Op) uint64 {
	t.Helper()
	root, _ := d.Root()
	o := commit.Add
	if len(op) > 0 {
		o = op[0]
	}
	seq, err := d.Commit(commit.Delta{Op: o, ID: root, Ref: commit.ObjectKey(key), Value: commit.TextValue(v)})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// wantRefused reads d's next refusal and checks it is of seq, with one
// reason of code at path.
func wantRefused(t *testing.T, d *peer.Doc, seq uint64, code, path string) {
	t.Helper()
	r := next[peer.Refused](t, d)
	if !r.Mine || r.Seq != seq || len(r.Reasons) != 1 || r.Reasons[0].Code != code || strings.Join(r.Reasons[0].Path, "/") != path {
		t.Fatalf("refused %+v, want %s at %s for seq %d", r, code, path, seq)
	}
}

// call sends one request-channel call over a raw WebSocket and returns the
// answer's result.
func call(t *testing.T, ws, cookie, name string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	h := http.Header{}
	if cookie != "" {
		h.Set("Cookie", "session="+cookie)
	}
	c, _, err := websocket.Dial(ctx, "ws://"+ws+"/", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"id":7,"name":"`+name+`","args":null}`)); err != nil {
		t.Fatal(err)
	}
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("reading the answer to %s: %v", name, err)
		}
		if typ != websocket.MessageText {
			continue
		}
		var ans struct {
			ID     int64          `json:"id"`
			Result map[string]any `json:"result"`
			Error  any            `json:"error"`
		}
		if err := json.Unmarshal(b, &ans); err != nil || ans.ID != 7 || ans.Result == nil {
			t.Fatalf("the answer to %s: %s (%v)", name, b, err)
		}
		return ans.Result
	}
}

// The TypeScript authority beside the real gateway binary, each behaviour
// of the Go example checked from outside: authentication, identify by
// cookie, accept and refuse by path and size, a call, the mirror saved from
// the commit stream and resumed from its cursor, reconnecting with backoff
// when the gateway goes away, and loads answered from its directory.
func TestTypeScriptAuthority(t *testing.T) {
	node := requireNode(t)
	main := filepath.Join(buildAuthority(t), "dist", "main.js")
	bin := gatewayBinary(t)
	gw, at := startGateway(t, bin, t.TempDir(), addrs{WS: "127.0.0.1:0", GRPC: "127.0.0.1:0"})
	dir := t.TempDir()
	sessions := filepath.Join(dir, "sessions.json")
	if err := os.WriteFile(sessions, []byte(`{"s3cret": {"id": "alice", "roles": ["admin"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")

	// A wrong token gets UNAUTHENTICATED, and the authority backs off.
	bad := startAuthority(t, node, main, at.GRPC, "wrong", filepath.Join(dir, "unused"), sessions)
	rec := bad.waitFor("authority stream ended", nil)
	if err, _ := rec["err"].(string); !strings.Contains(err, "UNAUTHENTICATED") || rec["retry_in_ms"] == nil {
		t.Fatalf("with a wrong token: %v", rec)
	}
	bad.stop()

	ts := startAuthority(t, node, main, at.GRPC, token, data, sessions)
	ts.waitFor("claims in force", nil)
	ts.waitFor("caught up", nil)

	// Accept and refuse: a path under /admin needs the role, a value over
	// 16 bytes is refused, each with its path.
	anon, err := dial(t, at.WS, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	d, err := anon.Share(ctx, "board:1", document.New(commit.NewID(), commit.Object, document.Limits{}))
	if err != nil {
		t.Fatalf("Share: %v", err)
	}
	root, _ := d.Root()
	set(t, d, "title", "plan")
	forbidden := set(t, d, "admin", "me")
	big := set(t, d, "notes", strings.Repeat("x", 17))
	wantRefused(t, d, forbidden, "forbidden", "admin")
	wantRefused(t, d, big, "value-too-large", "notes")

	// Identify: the session cookie makes the peer alice, an admin, who may
	// write under /admin; an unknown session is refused at the handshake.
	admin, err := dial(t, at.WS, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	da, err := admin.Join(ctx, "board:1")
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	set(t, da, "admin", "alice")
	ts.waitFor("saved", saved("board:1", "2"))
	var he *peer.HandshakeError
	if _, err := dial(t, at.WS, "guessed"); !errors.As(err, &he) || he.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unknown session dialled: %v", err)
	}

	// A request-channel call, answered with the caller's identity.
	if got := call(t, at.WS, "s3cret", "whoami"); got["id"] != "alice" || got["anonymous"] != false || len(got["roles"].([]any)) != 1 {
		t.Fatalf("whoami as alice = %v", got)
	}
	if got := call(t, at.WS, "", "whoami"); got["id"] != "" || got["anonymous"] != true {
		t.Fatalf("whoami anonymous = %v", got)
	}

	// Resume: while the authority is down a standby backend (a shorter,
	// less specific prefix) accepts a commit; the authority, started
	// again, resumes from cursor 2 and gets that commit as cursor 3, not a
	// snapshot.
	ts.stop()
	standby, err := client.Dial(ctx, at.GRPC, client.Options{Backend: "standby", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close()
	if _, err := standby.Claim(ctx, client.Prefix("board"), client.Handlers{
		Accept: func(context.Context, client.AcceptQuestion) ([]client.Reason, error) { return nil, nil },
	}); err != nil {
		t.Fatal(err)
	}
	set(t, d, "later", "while away")
	// Applied and durable before the authority comes back: alice sees it.
	if a := next[peer.Applied](t, da); len(a.Commit.Deltas) != 1 || a.Commit.Deltas[0].Ref.Key != "later" {
		t.Fatalf("alice got %+v, want the commit made while the authority was away", a.Commit)
	}
	ts = startAuthority(t, node, main, at.GRPC, token, data, sessions)
	ts.waitFor("claims in force", nil)
	ts.waitFor("subscribed", func(rec map[string]any) bool {
		r, _ := rec["resume"].(map[string]any)
		return r["board:1"] == "2"
	})
	ev := ts.waitFor("event", is("document", "board:1"))
	if ev["kind"] != "commit" || ev["cursor"] != "3" {
		t.Fatalf("the first event after resuming from 2 is %v, want the commit at 3", ev)
	}
	ts.waitFor("saved", saved("board:1", "3"))
	// The authority's claim is the more specific one again. (A fresh peer:
	// d still holds its own refused "admin", as the peer package rolls
	// nothing back.)
	late, err := dial(t, at.WS, "")
	if err != nil {
		t.Fatal(err)
	}
	dl, err := late.Join(ctx, "board:1")
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	wantRefused(t, dl, set(t, dl, "admin", "again", commit.Replace), "forbidden", "admin")

	// Reconnect: the gateway goes away; the authority retries with backoff
	// (at least one failed attempt while it is down), then comes back on a
	// fresh gateway that holds nothing, which loads board:1 from the
	// authority's directory and numbers its next commit 4.
	gw.stop()
	ts.waitFor("authority stream ended", func(rec map[string]any) bool {
		n, _ := rec["failures"].(float64)
		return n >= 2 && rec["retry_in_ms"] != nil
	})
	startGateway(t, bin, t.TempDir(), at)
	ts.waitFor("welcome", nil)
	ts.waitFor("claims in force", nil)
	again, err := dial(t, at.WS, "")
	if err != nil {
		t.Fatal(err)
	}
	dj, err := again.Join(ctx, "board:1")
	if err != nil {
		t.Fatalf("Join on the fresh gateway: %v", err)
	}
	got := map[string]string{}
	for _, dl := range dj.Snapshot().Deltas {
		got[dl.Ref.Key] = dl.Value.Str
	}
	if r, _ := dj.Root(); r != root || len(got) != 3 || got["title"] != "plan" || got["admin"] != "alice" || got["later"] != "while away" {
		t.Fatalf("the fresh gateway loaded %v under %v", got, r)
	}
	set(t, dj, "next", "4")
	ts.waitFor("saved", saved("board:1", "4"))
	ts.stop()
}

func TestMain(m *testing.M) {
	code := m.Run()
	buildtest.Cleanup()
	os.Exit(code)
}
