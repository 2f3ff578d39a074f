package web_test

import (
	"os"
	"os/exec"
	"testing"
)

// TestNode runs the module's Node tests (web/aweft/test): the spec's
// fixtures, and the link against a gateway started here.
func TestNode(t *testing.T) {
	node := mustHave(t, "node", "Node 20 or later")
	g := startGateway(t)
	cmd := exec.Command(node, "--experimental-websocket", "--test", "aweft/test/")
	cmd.Env = append(os.Environ(), "WEFTGATE_URL=ws://"+g.addrs.WS+"/ws")
	if spec := os.Getenv("WEFTGATE_SPEC"); spec != "" {
		cmd.Env = append(cmd.Env, "AWEFT_SPEC="+spec) // a newer corpus, as for the Go tests
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s\ngateway log:\n%s", err, out, g.log())
	}
	t.Logf("node --test:\n%s", tail(out, 12))
}

func tail(b []byte, lines int) []byte {
	n := 0
	for i := len(b) - 1; i > 0; i-- {
		if b[i-1] == '\n' {
			if n++; n == lines {
				return b[i:]
			}
		}
	}
	return b
}
