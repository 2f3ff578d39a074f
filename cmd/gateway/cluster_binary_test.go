package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/weftgate/weftgate/internal/buildtest"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// startNatsBinary runs the nats-server binary built from the module at the
// version go.mod pins, with JetStream, on a free loopback port and with the
// max_payload the gateway needs, and returns its URL.
func startNatsBinary(t *testing.T) string {
	t.Helper()
	bin := buildtest.Binary(t, "github.com/nats-io/nats-server/v2")
	dir := t.TempDir()
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte("listen: 127.0.0.1:-1\nmax_payload: 2MB\njetstream { store_dir: \""+filepath.Join(dir, "js")+"\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf, "--ports_file_dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The server writes its bound ports to <dir>/nats-server_<pid>.ports.
	ports := filepath.Join(dir, filepath.Base(bin)+"_"+strconv.Itoa(cmd.Process.Pid)+".ports")
	deadline := time.Now().Add(startDeadline)
	for {
		b, err := os.ReadFile(ports)
		if err == nil {
			var p struct{ Nats []string }
			if json.Unmarshal(b, &p) == nil && len(p.Nats) > 0 {
				return p.Nats[0]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats-server wrote no ports file %s", ports)
		}
		time.Sleep(10 * time.Millisecond) // polling a file the server writes
	}
}

// Three gateway processes and a nats-server process, as the README's
// "Several nodes" starts them: a document created through the first is
// joined through the third, and a commit made through the second reaches
// both other peers.
func TestThreeGatewayProcessesOnNats(t *testing.T) {
	url := startNatsBinary(t)
	var gws []*process
	for range 3 {
		gws = append(gws, startGateway(t, t.TempDir(), "-nats-url", url))
	}
	ctx := testCtx(t)
	root := commit.NewID()
	a := dialPeer(t, ctx, "http://"+gws[0].addrs.WS)
	a.create("doc", root)
	// The empty creation reaches the log off the creator's hub: the other
	// nodes find it once it is there.
	var c *peer
	deadline := time.Now().Add(10 * time.Second)
	for {
		c = dialPeer(t, ctx, "http://"+gws[2].addrs.WS)
		c.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Want: true})
		_, b, err := c.ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if f, err := frame.Decode(b); err == nil && f.Kind == frame.Open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the third node never found the document")
		}
	}
	c.expect(frame.State)
	b := dialPeer(t, ctx, "http://"+gws[1].addrs.WS)
	b.join("doc")
	b.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{setTitle(t, root, "from the second node")}})
	want := string(setTitle(t, root, "from the second node"))
	for name, p := range map[string]*peer{"first": a, "third": c} {
		if f := p.expect(frame.Commits); len(f.Commits) != 1 || string(f.Commits[0]) != want {
			t.Fatalf("the peer on the %s node got %d commits, not the second node's", name, len(f.Commits))
		}
	}
	for _, g := range gws {
		if code := g.stop(); code != 0 {
			t.Fatalf("a node exited %d:\n%s", code, g.logs())
		}
	}
}
