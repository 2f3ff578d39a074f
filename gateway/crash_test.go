package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
)

const childEnv = "WEFTGATE_TEST_GATEWAY_DIR"

// runChild, in a re-executed test binary, runs a gateway on the bbolt store
// in $WEFTGATE_TEST_GATEWAY_DIR until it is killed, printing its URL.
func runChild() bool {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return false
	}
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	s, err := gateway.New(gateway.Config{Store: st, PingInterval: -1})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	fmt.Printf("URL ws://%s/\n", ln.Addr())
	http.Serve(ln, s)
	return true
}

// startChild starts a gateway process on dir and returns its URL.
func startChild(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "URL ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q (%v)", line, err)
	}
	return cmd, strings.TrimSpace(strings.TrimPrefix(line, "URL "))
}

// A gateway killed with SIGKILL during a write burst loses none of the
// commits any peer was sent, across several kills.
func TestSIGKILLLosesNothingDelivered(t *testing.T) {
	dir := t.TempDir()
	var delivered [][]byte // every commit the watcher received, in order
	for round := range 3 {
		cmd, url := startChild(t, dir)
		w := dial(t, url, peer.Options{EventBuffer: 1 << 16})
		var wd *peer.Doc
		var err error
		if round == 0 {
			wd, err = w.Share(ctxT(t), "burst", newDoc())
		} else {
			wd, err = w.Join(ctxT(t), "burst")
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if round > 0 && len(wd.Snapshot().Deltas) == 0 {
			t.Fatalf("round %d: the document came back empty", round)
		}
		wr := dial(t, url, peer.Options{})
		wrd, err := wr.Join(ctxT(t), "burst")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if _, err := set(wrd, fmt.Sprintf("r%d-%d", round, i%50), commit.IntValue(int64(i))); err != nil {
					return // the link ended under the kill
				}
				if i > 5000 {
					return
				}
			}
		}()
		// Kill once the watcher has seen a good part of the burst.
		got := waitApplied(t, wd, 300)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		// Whatever else was in its queue was also sent to it.
	drain:
		for {
			select {
			case ev, ok := <-wd.Events():
				if !ok {
					break drain
				}
				if a, ok := ev.(peer.Applied); ok {
					got = append(got, a)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the watcher's link did not end after the kill")
			}
		}
		wg.Wait()
		for _, a := range got {
			b, err := commit.Encode(a.Commit)
			if err != nil {
				t.Fatal(err)
			}
			delivered = append(delivered, b)
		}
		w.Close()
		wr.Close()
		// Every delivered commit is in the store, in order, with no gap.
		st, err := store.Open(dir, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var recs []store.Record
		for next := uint64(1); ; {
			rs, err := st.Read(context.Background(), "burst", next, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) == 0 {
				break
			}
			recs = append(recs, rs...)
			next = rs[len(rs)-1].Cursor + 1
		}
		st.Close()
		if len(recs) < len(delivered) {
			t.Fatalf("round %d: %d commits stored, %d delivered", round, len(recs), len(delivered))
		}
		// The store holds the watcher's commits plus, for the first round,
		// nothing else: the writer is the only origin besides it.
		j := 0
		for i, r := range recs {
			if r.Cursor != uint64(i+1) {
				t.Fatalf("gap: record %d has cursor %d", i, r.Cursor)
			}
			if j < len(delivered) && string(r.Commit) == string(delivered[j]) {
				j++
			}
		}
		if j != len(delivered) {
			t.Fatalf("round %d: only %d of %d delivered commits are stored in order", round, j, len(delivered))
		}
		delivered = delivered[:0]
		for _, r := range recs {
			delivered = append(delivered, r.Commit)
		}
	}
}

// A clean restart on the same store brings every document back.
func TestRestartKeepsDocuments(t *testing.T) {
	dir := t.TempDir()
	open := func() (*testServer, store.Store) {
		st, err := store.Open(dir, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return startGateway(t, gateway.Config{Store: st, SnapshotEvery: 7}), st
	}
	ts, st := open()
	a := dial(t, ts.url, peer.Options{})
	da, err := a.Share(ctxT(t), "kept", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := set(da, key(0, i%4), commit.IntValue(int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	waitCursor(t, ts.Server, "kept", 30)
	want := stateOf(t, da)
	a.Close()
	ts.stop(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	ts, st = open()
	defer st.Close()
	defer ts.stop(t)
	b := dial(t, ts.url, peer.Options{})
	db, err := b.Join(ctxT(t), "kept")
	if err != nil {
		t.Fatal(err)
	}
	if stateOf(t, db) != want {
		t.Fatal("the document did not come back as it was")
	}
	if _, _, cursor, _ := ts.State(ctxT(t), "kept"); cursor != 30 {
		t.Fatalf("cursor %d after restart, want 30", cursor)
	}
}
