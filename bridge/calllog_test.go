package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/bridge"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Finished calls log at DEBUG, including the UNAVAILABLE every authority
// stream ends with when the gateway drains, so a deploy raises no warning; a
// caller without the token logs at INFO.
func TestCallsLogAtDebug(t *testing.T) {
	var logs lockedBuffer
	log := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := startEnv(t, envOpts{bridge: bridge.Config{Logger: log}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.client.ListDocuments(ctx, &v1.ListDocumentsRequest{}); err != nil {
		t.Fatal(err)
	}
	anon, err := grpc.NewClient(e.conn.Target(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := v1.NewGatewayServiceClient(anon).ListDocuments(ctx, &v1.ListDocumentsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v, want Unauthenticated", err)
	}
	st, err := e.client.Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&v1.AuthorityRequest{Message: &v1.AuthorityRequest_Hello{Hello: &v1.Hello{Backend: "t"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatalf("welcome: %v", err)
	}
	if err := e.b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("the stream ended with %v, want Unavailable", err)
	}

	want := map[string]string{"OK": "DEBUG", "Unauthenticated": "INFO", "Unavailable": "DEBUG"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		seen := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) != nil || (rec["msg"] != "finished call" && rec["msg"] != "call refused") {
				continue
			}
			code, _ := rec["grpc.code"].(string)
			lvl, _ := rec["level"].(string)
			if w, ok := want[code]; ok && w != lvl {
				t.Fatalf("a call ending %s logged at %s, want %s: %s", code, lvl, w, line)
			}
			seen[code] = lvl
		}
		if len(seen) >= len(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("finished calls logged: %v, want %v\n%s", seen, want, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
