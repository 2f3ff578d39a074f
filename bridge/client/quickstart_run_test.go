package client_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/internal/buildtest"
)

// TestQuickstart runs the README's quick start as a new user would: a
// gateway (in process, on 127.0.0.1), the real examples/authority built and
// started beside it, then the snippet's code. The peer must see the
// authority's refusal of /admin and the backend the title's commit.
func TestQuickstart(t *testing.T) {
	lc := startLocalT(t, bridge.Config{Policy: bridge.PolicyClosed})
	bin := buildtest.Binary(t, "github.com/weftgate/weftgate/examples/authority")
	auth := exec.Command(bin, "-gateway", lc.addr, "-data", t.TempDir(), "-dial-timeout", guard.String())
	logs, err := auth.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := auth.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	claimed := ready // the reader's to close
	var logged bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			logged.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "msg=claimed") && claimed != nil {
				close(claimed)
				claimed = nil
			}
		}
		io.Copy(io.Discard, logs)
	}()
	t.Cleanup(func() {
		auth.Process.Signal(os.Interrupt)
		<-copied
		if err := auth.Wait(); err != nil {
			t.Errorf("examples/authority did not exit cleanly: %v\n%s", err, logged.String())
		}
	})
	select {
	case <-ready:
	case <-copied:
		t.Fatalf("examples/authority ended before claiming:\n%s", logged.String())
	case <-time.After(guard):
		t.Fatalf("examples/authority did not claim within %v", guard)
	}

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	var out bytes.Buffer
	if err := quickstart(ctx, &out, lc.ws, lc.addr); err != nil {
		t.Fatalf("quickstart: %v\nprinted:\n%s", err, out.String())
	}
	want := `refused: [{Code:forbidden Message:writing under /admin needs the role "admin" Path:[admin]}]
commit 1 [[title]]
`
	if out.String() != want {
		t.Fatalf("quickstart printed:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestQuickstartInReadme keeps the README's quick start and the code the
// tests run the same text.
func TestQuickstartInReadme(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	code := strings.TrimPrefix(string(src), "package client_test\n\n")
	if code == string(src) {
		t.Fatal("example_test.go does not start with its package clause")
	}
	block := "```go\n" + code + "```\n"
	if !bytes.Contains(readme, []byte(block)) {
		t.Fatal("README.md has no ```go block equal to example_test.go after its package clause; copy the file into the README")
	}
}
