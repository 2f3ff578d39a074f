package web_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftgate/weftgate/internal/buildtest"
)

// These tests start the real gateway binary on free loopback ports, as a
// newcomer would with `go run ./cmd/gateway`.

const startDeadline = 60 * time.Second

var ()

func TestMain(m *testing.M) {
	code := m.Run()
	buildtest.Cleanup()
	os.Exit(code)
}

// gateway is one running gateway process.
type gateway struct {
	t     *testing.T
	cmd   *exec.Cmd
	addrs struct{ WS, GRPC, Admin string }
	mu    sync.Mutex
	logs  bytes.Buffer
	done  chan struct{} // stderr ended
}

// startGateway starts the binary with args after the test's own (free
// ports, a JSON log) and returns once its ready file names the addresses.
func startGateway(t *testing.T, args ...string) *gateway {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready.json")
	base := []string{"-ws-addr", "127.0.0.1:0", "-grpc-addr", "127.0.0.1:0", "-store", "memory",
		"-ready-file", ready, "-log-format", "json", "-drain-timeout", "5s"}
	g := &gateway{t: t, done: make(chan struct{})}
	g.cmd = exec.Command(buildtest.Binary(t, "github.com/weftgate/weftgate/cmd/gateway"), append(base, args...)...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "WEFTGATE_") {
			env = append(env, kv)
		}
	}
	g.cmd.Env = env
	stderr, err := g.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if g.cmd.ProcessState == nil {
			g.cmd.Process.Kill()
			<-g.done
			g.cmd.Wait()
		}
	})
	listening := make(chan struct{})
	go g.read(stderr, listening)
	select {
	case <-listening:
	case <-g.done:
		t.Fatalf("the gateway ended before listening:\n%s", g.log())
	case <-time.After(startDeadline):
		t.Fatalf("the gateway did not listen within %v:\n%s", startDeadline, g.log())
	}
	b, err := os.ReadFile(ready)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &g.addrs); err != nil {
		t.Fatalf("ready file %q: %v", b, err)
	}
	return g
}

func (g *gateway) read(r io.Reader, listening chan struct{}) {
	defer close(g.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		g.mu.Lock()
		g.logs.Write(sc.Bytes())
		g.logs.WriteByte('\n')
		g.mu.Unlock()
		var rec struct{ Msg string }
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" && listening != nil {
			close(listening)
			listening = nil
		}
	}
}

func (g *gateway) log() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.logs.String()
}

// stop drains the gateway with SIGTERM and waits for it to exit.
func (g *gateway) stop() {
	g.t.Helper()
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		g.t.Fatal(err)
	}
	select {
	case <-g.done:
	case <-time.After(15 * time.Second):
		g.t.Fatalf("the gateway did not exit on SIGTERM:\n%s", g.log())
	}
	g.cmd.Wait()
}

// mustHave fails the test when a tool is missing: on CI always, elsewhere
// it skips with what to install.
func mustHave(t *testing.T, tool, install string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is missing and CI never skips these tests: %s", tool, install)
	}
	t.Skipf("%s is missing (%s); CI installs it and runs this test", tool, install)
	return ""
}
