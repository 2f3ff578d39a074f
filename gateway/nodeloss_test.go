package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/weftgate/weftgate/gateway/store"
	jsstore "github.com/weftgate/weftgate/gateway/store/jetstream"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/natstest"
	"github.com/weftgate/weftgate/internal/soak"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
)

// natsChildEnv makes a re-executed test binary a gateway node on the NATS
// server at its value.
const natsChildEnv = "WEFTGATE_TEST_NATS_URL"

// runNATSChild, in a re-executed test binary, runs a gateway node and its
// gRPC bridge on the JetStream log until it is killed, printing both
// addresses, as runChild does on bbolt.
func runNATSChild() bool {
	url := os.Getenv(natsChildEnv)
	if url == "" {
		return false
	}
	fail := func(err error) {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	nc, err := nats.Connect(url)
	if err != nil {
		fail(err)
	}
	st, err := jsstore.Open(context.Background(), nc, jsstore.Options{Retain: -1})
	if err != nil {
		fail(err)
	}
	serveChild(st, fail)
	return true
}

type natsChild struct {
	cmd  *exec.Cmd
	url  string
	addr string
}

func startNATSChild(t *testing.T, natsURL string) *natsChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), natsChildEnv+"="+natsURL)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "URL" {
		t.Fatalf("child said %q (%v)", line, err)
	}
	return &natsChild{cmd: cmd, url: f[1], addr: f[2]}
}

// received collects the commits readers were sent, by their bytes.
type received struct {
	mu  sync.Mutex
	got map[string]bool
	n   int
}

func (r *received) add(b []byte) {
	r.mu.Lock()
	r.got[string(b)] = true
	r.n++
	r.mu.Unlock()
}

func (r *received) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Node loss (issue 17): three gateway processes on one NATS server; peers
// and a backend write through the first while peers on the other two read.
// The first is killed with SIGKILL at a random point; its writers move to
// another node and go on. Every commit a reader received, and every write
// the backend saw accepted, is in the log afterwards at the cursor it was
// given, and the readers end with the log's state. Each round kills the
// node again (restarted in between) at another point; replay a failure
// with WEFTGATE_CRASH_SEED.
func TestSIGKILLANodeOfThree(t *testing.T) {
	seed := time.Now().UnixNano()
	if v := os.Getenv(crashSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, v, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 2))
	ns := natstest.Start(t)
	nodes := []*natsChild{startNATSChild(t, ns.URL), startNATSChild(t, ns.URL), startNATSChild(t, ns.URL)}
	const doc = "lossy"
	creator, err := dial(t, nodes[1].url, peer.Options{}).Share(ctxT(t), doc, newDoc())
	if err != nil {
		t.Fatal(err)
	}
	root, _ := creator.Root()
	log, err := jsstore.Open(ctxT(t), ns.Connect(t), jsstore.Options{Retain: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	eventually(t, "the document to reach the log", func() bool {
		_, _, err := log.Load(context.Background(), doc)
		return err == nil
	})

	got := &received{got: map[string]bool{}}
	var readers []*peer.Doc
	for _, n := range nodes[1:] {
		d, err := dial(t, n.url, peer.Options{EventBuffer: 1 << 16}).Join(ctxT(t), doc)
		if err != nil {
			t.Fatal(err)
		}
		readers = append(readers, d)
		go func() {
			for ev := range d.Events() {
				if a, ok := ev.(peer.Applied); ok {
					if b, err := commit.Encode(a.Commit); err == nil {
						got.add(b)
					}
				}
			}
		}()
	}

	type ack struct {
		cursor uint64
		bytes  []byte
	}
	var acksMu sync.Mutex
	var acks []ack
	start := time.Now()
	for round := 0; soak.Until(start, round, 2); round++ {
		victim := nodes[0]
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		// A backend writes through the victim; each accepted write is
		// acknowledged with its cursor once durable.
		cc, err := grpc.NewClient(victim.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			api := v1.NewGatewayServiceClient(cc)
			for i := 0; ctx.Err() == nil; i++ {
				c := commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey(fmt.Sprintf("r%d-backend-%d", round, i)), Value: commit.IntValue(int64(i))}}}
				b, err := commit.Encode(c)
				if err != nil {
					t.Error(err)
					return
				}
				res, err := api.WriteCommit(ctx, &v1.WriteCommitRequest{Document: doc, Commit: &v1.Commit{Encoded: b}, Writer: "loss"})
				if err != nil {
					return // the node died under it
				}
				if res.GetResult().GetStatus() == v1.WriteStatus_WRITE_STATUS_APPLIED {
					acksMu.Lock()
					acks = append(acks, ack{res.GetResult().GetCursor(), b})
					acksMu.Unlock()
				}
			}
		}()
		// Peers write through the victim, then through another node once
		// it is gone, as a browser reconnects.
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				i := 0
				for _, n := range []*natsChild{victim, nodes[1+w]} {
					p, err := peer.Dial(ctx, n.url, peer.Options{})
					if err != nil {
						return
					}
					d, err := p.Join(ctx, doc)
					if err != nil {
						p.Close()
						return
					}
					for ; ctx.Err() == nil; i++ {
						if _, err := set(d, fmt.Sprintf("r%d-p%d-%d", round, w, i), commit.IntValue(int64(i))); err != nil {
							break // the node died: move on
						}
						if n != victim && i%50 == 49 {
							break // after the kill a few more are enough
						}
					}
					p.Close()
					if n != victim {
						return
					}
				}
			}()
		}
		killAt := got.count() + rng.IntN(300)
		eventually(t, "the readers to receive commits before the kill", func() bool { return got.count() >= killAt })
		victim.cmd.Process.Signal(syscall.SIGKILL)
		victim.cmd.Wait()
		t.Logf("round %d: killed the first node after %d received commits", round, killAt)
		cancel()
		wg.Wait()
		cc.Close()
		nodes[0] = startNATSChild(t, ns.URL)
	}

	// Everything the readers were sent and every acknowledged write is in
	// the log, and the readers end with its state.
	snap, recs := logRecords(t, log, doc)
	inLog := map[string]uint64{}
	for _, r := range recs {
		inLog[string(r.Commit)] = r.Cursor
	}
	want := replay(t, snap, recs)
	eventually(t, "the readers to hold the log's state", func() bool {
		for _, d := range readers {
			if stateOf(t, d) != want {
				return false
			}
		}
		return true
	})
	got.mu.Lock()
	for b := range got.got {
		if _, ok := inLog[b]; !ok {
			t.Errorf("a reader received a commit the log does not hold")
		}
	}
	n := len(got.got)
	got.mu.Unlock()
	for _, a := range acks {
		if c, ok := inLog[string(a.bytes)]; !ok || c != a.cursor {
			t.Errorf("an acknowledged write at cursor %d is in the log at %d (held %v)", a.cursor, c, ok)
		}
	}
	t.Logf("%d records, %d received by readers, %d acknowledged writes", len(recs), n, len(acks))
}

// logRecords reads every record of doc from the log, with its snapshot.
func logRecords(t *testing.T, st store.Store, doc string) (*store.Snapshot, []store.Record) {
	t.Helper()
	snap, _, err := st.Load(context.Background(), doc)
	if err != nil {
		t.Fatal(err)
	}
	var recs []store.Record
	for next := uint64(1); ; {
		rs, err := st.Read(context.Background(), doc, next, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			return snap, recs
		}
		recs = append(recs, rs...)
		next = rs[len(rs)-1].Cursor + 1
	}
}
