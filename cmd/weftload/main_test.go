package main

import (
	"context"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A short in-process run delivers every commit to every watcher.
func TestRunDeliversEverything(t *testing.T) {
	res, err := run(context.Background(), options{inprocess: true, peers: 12, docs: 3, writers: 1, rate: 200, duration: 300 * time.Millisecond, size: 8}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent == 0 || res.Refused != 0 || len(res.Errors) != 0 {
		t.Fatalf("result %+v", res)
	}
	// 3 writers, 3 watchers each: every commit reaches 3 watchers.
	if res.Delivered != res.Sent*3 {
		t.Fatalf("%d deliveries for %d commits, want %d", res.Delivered, res.Sent, res.Sent*3)
	}
	if res.P50ms <= 0 || res.MaxMs < res.P99ms {
		t.Fatalf("latencies %+v", res)
	}
}

func TestLoopbackOnly(t *testing.T) {
	for _, u := range []string{"ws://127.0.0.1:8080/", "ws://localhost/", "ws://[::1]:9/"} {
		if err := loopbackOnly(u, false); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	if err := loopbackOnly("ws://192.0.2.1/", false); err == nil {
		t.Error("a remote address was allowed")
	}
	if err := loopbackOnly("ws://192.0.2.1/", true); err != nil {
		t.Errorf("-allow-remote: %v", err)
	}
}
