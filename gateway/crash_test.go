package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/soak"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

const (
	childEnv = "WEFTGATE_TEST_GATEWAY_DIR"
	// crashSeedEnv replays a failed run of TestSIGKILLAtRandomPoints.
	crashSeedEnv = "WEFTGATE_CRASH_SEED"
	// crashSnapshotEvery is small so that kills also land around snapshots.
	crashSnapshotEvery = 20
)

// runChild, in a re-executed test binary, runs a gateway and its gRPC
// bridge on the bbolt store in $WEFTGATE_TEST_GATEWAY_DIR until it is
// killed, printing both addresses.
func runChild() bool {
	dir := os.Getenv(childEnv)
	if dir == "" {
		return false
	}
	fail := func(err error) {
		fmt.Println("ERR", err)
		os.Exit(2)
	}
	st, err := store.Open(dir, store.Options{Retain: -1})
	if err != nil {
		fail(err)
	}
	serveChild(st, fail)
	return true
}

// serveChild runs a gateway and its gRPC bridge on st, wired as
// cmd/gateway wires them, printing both addresses, until the process is
// killed.
func serveChild(st store.Store, fail func(error)) {
	b := bridge.New(bridge.Config{Store: st})
	// The bridge is the authority, and so hears of every document as it
	// appears.
	cfg := gateway.Config{Store: st, Authority: b, Calls: b, PingInterval: -1, SnapshotEvery: crashSnapshotEvery}
	cfg.Admission.Identifier = b
	s, err := gateway.New(cfg)
	if err != nil {
		fail(err)
	}
	b.Attach(s)
	ws, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	gl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	g := b.NewGRPCServer()
	go g.Serve(gl)
	fmt.Printf("URL ws://%s/ %s\n", ws.Addr(), gl.Addr())
	http.Serve(ws, s)
}

// startChild starts a gateway process on dir and returns its WebSocket URL
// and gRPC address.
func startChild(t *testing.T, dir string) (*exec.Cmd, string, string) {
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
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "URL" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q (%v)", line, err)
	}
	return cmd, f[1], f[2]
}

// subEvent is one commit a subscriber was sent.
type subEvent struct {
	cursor uint64
	commit []byte
}

// subscribe follows doc from cursor after over gRPC until the stream ends
// (the gateway is killed), sending each commit to out.
func subscribe(ctx context.Context, client v1.GatewayServiceClient, doc string, after uint64, out *subLog) error {
	s, err := client.Subscribe(ctx, &v1.SubscribeRequest{
		Target: &v1.SubscribeRequest_Document{Document: doc},
		Resume: map[string]uint64{doc: after},
	})
	if err != nil {
		return err
	}
	for {
		m, err := s.Recv()
		if err != nil {
			return err
		}
		switch {
		case m.GetCommit() != nil:
			e := m.GetCommit()
			out.add(doc, subEvent{cursor: e.GetCursor(), commit: e.GetCommit().GetEncoded()})
		case m.GetSnapshot() != nil:
			return fmt.Errorf("a snapshot at %d, where every commit is retained", m.GetSnapshot().GetCursor())
		}
	}
}

// subLog holds what the subscriptions were sent. It has no bound: after a
// kill, gRPC can still hold far more received commits than any channel
// buffer, and a stream must reach its end however many there are.
type subLog struct {
	mu     sync.Mutex
	events map[string][]subEvent
	n      int
	more   chan struct{} // capacity 1: something was added
}

func newSubLog() *subLog {
	return &subLog{events: map[string][]subEvent{}, more: make(chan struct{}, 1)}
}

func (l *subLog) add(doc string, e subEvent) {
	l.mu.Lock()
	l.events[doc] = append(l.events[doc], e)
	l.n++
	l.mu.Unlock()
	select {
	case l.more <- struct{}{}:
	default:
	}
}

func (l *subLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// take returns each document's events, once every subscription has ended.
func (l *subLog) take() map[string][]subEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events
}

// storedRecords reads every record of doc from the store in dir, with the
// document's root, once the gateway is dead.
func storedRecords(t *testing.T, dir, doc string) (*store.Snapshot, []store.Record) {
	t.Helper()
	st, err := store.Open(dir, store.Options{Retain: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, _, err := st.Load(context.Background(), doc); errors.Is(err, store.ErrUnknownDocument) {
		return nil, nil
	}
	return logRecords(t, st, doc)
}

// replay is the state recs make of an empty document with snap's root.
func replay(t *testing.T, snap *store.Snapshot, recs []store.Record) string {
	t.Helper()
	d := document.New(commit.ID(snap.Root), commit.Kind(snap.RootKind), document.Limits{})
	for _, r := range recs {
		c, err := commit.Decode(r.Commit)
		if err == nil {
			_, err = d.Apply(c)
		}
		if err != nil {
			t.Fatalf("record %d does not apply: %v", r.Cursor, err)
		}
	}
	return encodeState(t, d.Snapshot())
}

// A gateway killed with SIGKILL at random points of a write burst from many
// peers, restarted on the same store, again and again: every commit a peer
// or the subscriber was sent is stored, cursors have no gap, each watcher's
// replica equals the store's state at the last commit it saw, a peer
// joining after a restart gets the stored state, and a subscriber resuming
// from its last cursor sees every cursor exactly once.
func TestSIGKILLAtRandomPoints(t *testing.T) {
	seed := time.Now().UnixNano()
	if v := os.Getenv(crashSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, v, err)
		}
	}
	t.Logf("seed %d (replay with %s=%d)", seed, crashSeedEnv, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	dir := t.TempDir()
	docs := []string{"burst-a", "burst-b"}
	const writersPerDoc = 3
	seen := map[string][]subEvent{} // the subscriber's, across every round
	stored := map[string]string{}   // each document's stored state after the last kill
	start := time.Now()
	round := 0
	for ; soak.Until(start, round, 3); round++ {
		cmd, url, addr := startChild(t, dir)
		cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		// The subscriber resumes each document from the last cursor it saw.
		subCtx, subCancel := context.WithCancel(context.Background())
		subDone := make(chan error, len(docs))
		sub := newSubLog()
		for _, doc := range docs {
			var after uint64
			if s := seen[doc]; len(s) > 0 {
				after = s[len(s)-1].cursor
			}
			go func() { subDone <- subscribe(subCtx, v1.NewGatewayServiceClient(cc), doc, after, sub) }()
		}
		// One watcher per document; after the first round each must get the
		// stored state when it joins.
		watchers := map[string]*peer.Doc{}
		var peers []*peer.Peer
		for _, doc := range docs {
			p := dial(t, url, peer.Options{EventBuffer: 1 << 16})
			peers = append(peers, p)
			var d *peer.Doc
			if round == 0 {
				d, err = p.Share(ctxT(t), doc, newDoc())
			} else {
				d, err = p.Join(ctxT(t), doc)
			}
			if err != nil {
				t.Fatalf("round %d: %s: %v", round, doc, err)
			}
			if round > 0 && stateOf(t, d) != stored[doc] {
				t.Fatalf("round %d: %s: a peer joining after the restart does not get the stored state", round, doc)
			}
			watchers[doc] = d
		}
		// The writers: each its own keys, as fast as the link takes them.
		var wg sync.WaitGroup
		for _, doc := range docs {
			for w := range writersPerDoc {
				p := dial(t, url, peer.Options{})
				peers = append(peers, p)
				d, err := p.Join(ctxT(t), doc)
				if err != nil {
					t.Fatalf("round %d: writer: %v", round, err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 20000; i++ {
						if _, err := set(d, fmt.Sprintf("r%d-w%d-%d", round, w, i%16), commit.IntValue(int64(i))); err != nil {
							return // the link ended under the kill
						}
					}
				}()
			}
		}
		// Kill once the subscriber has been sent a random number of commits
		// this round, from none at all to a few hundred.
		killAt := rng.IntN(400)
		timeout := time.After(20 * time.Second)
		for sub.count() < killAt {
			select {
			case <-sub.more:
			case <-timeout:
				t.Fatalf("round %d: %d of %d commits reached the subscriber", round, sub.count(), killAt)
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		t.Logf("round %d: killed after %d subscribed commits", round, killAt)
		// What was already on its way still counts: drain every stream.
		for range docs {
			select {
			case err := <-subDone:
				if err != nil && !isStreamEnd(err) {
					t.Errorf("round %d: subscriber: %v", round, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: the subscription did not end after the kill", round)
			}
		}
		subCancel()
		cc.Close()
		for doc, evs := range sub.take() {
			seen[doc] = append(seen[doc], evs...)
		}
		applied := map[string][][]byte{}
		for _, doc := range docs {
			d := watchers[doc]
			for ended := false; !ended; {
				select {
				case ev, ok := <-d.Events():
					if !ok {
						ended = true
						break
					}
					if a, ok := ev.(peer.Applied); ok {
						b, err := commit.Encode(a.Commit)
						if err != nil {
							t.Fatal(err)
						}
						applied[doc] = append(applied[doc], b)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("round %d: the watcher's link did not end after the kill", round)
				}
			}
		}
		wg.Wait()
		for _, p := range peers {
			p.Close()
		}
		for _, doc := range docs {
			stored[doc] = checkAfterKill(t, round, dir, doc, seen[doc], applied[doc], watchers[doc])
		}
	}
	// One last start: a peer joining gets exactly the stored state.
	cmd, url, _ := startChild(t, dir)
	defer func() {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}()
	for _, doc := range docs {
		p := dial(t, url, peer.Options{})
		d, err := p.Join(ctxT(t), doc)
		if err != nil {
			t.Fatal(err)
		}
		if stateOf(t, d) != stored[doc] {
			t.Errorf("%s: a peer joining after %d kills does not get the stored state", doc, round)
		}
		p.Close()
	}
}

// checkAfterKill compares what the subscriber and a watcher were sent with
// what the store holds for doc.
func checkAfterKill(t *testing.T, round int, dir, doc string, seen []subEvent, applied [][]byte, w *peer.Doc) string {
	t.Helper()
	snap, recs := storedRecords(t, dir, doc)
	for i, r := range recs {
		if r.Cursor != uint64(i+1) {
			t.Fatalf("round %d: %s: gap: record %d has cursor %d", round, doc, i, r.Cursor)
		}
	}
	// The subscriber, across every round so far: cursors 1, 2, 3, ... each
	// once, each the stored commit.
	for i, e := range seen {
		if e.cursor != uint64(i+1) {
			t.Fatalf("round %d: %s: the subscriber's event %d has cursor %d: a gap or a duplicate", round, doc, i, e.cursor)
		}
		if i >= len(recs) {
			t.Fatalf("round %d: %s: the subscriber was sent cursor %d; the store ends at %d", round, doc, e.cursor, len(recs))
		}
		if string(e.commit) != string(recs[i].Commit) {
			t.Fatalf("round %d: %s: cursor %d differs from the stored commit", round, doc, e.cursor)
		}
	}
	all := replay(t, snap, recs)
	// The watcher was sent a run of consecutive stored commits, from the
	// state it joined with; its replica is the store's state at the end of
	// that run.
	if len(applied) == 0 {
		return all
	}
	at := -1
	for i := range recs {
		if string(recs[i].Commit) == string(applied[0]) && i+len(applied) <= len(recs) {
			ok := true
			for j := range applied {
				if string(recs[i+j].Commit) != string(applied[j]) {
					ok = false
					break
				}
			}
			if ok {
				at = i
				break
			}
		}
	}
	if at < 0 {
		t.Fatalf("round %d: %s: the %d commits the watcher was sent are not a run of stored commits", round, doc, len(applied))
	}
	if stateOf(t, w) != replay(t, snap, recs[:at+len(applied)]) {
		t.Fatalf("round %d: %s: the watcher's replica is not the stored state at cursor %d", round, doc, at+len(applied))
	}
	return all
}

// isStreamEnd reports whether err is a subscription ended by its
// gateway's death.
func isStreamEnd(err error) bool {
	return errors.Is(err, io.EOF) || status.Code(err) == codes.Unavailable
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
