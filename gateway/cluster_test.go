package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	jsstore "github.com/weftgate/weftgate/gateway/store/jetstream"
	"github.com/weftgate/weftgate/internal/natstest"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// sharedLog is one in-memory log that several gateway nodes append to and
// follow: the shape of a log shared through JetStream (issue 17), without
// the broker, so that the hub's side of it is tested on its own.
type sharedLog struct {
	store.Store
	mu   sync.Mutex
	wake chan struct{} // closed and replaced on every append
}

func newSharedLog() *sharedLog {
	return &sharedLog{Store: store.NewMemory(), wake: make(chan struct{})}
}

func (s *sharedLog) changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wake
}

func (s *sharedLog) Append(ctx context.Context, doc string, recs []store.Record) error {
	err := s.Store.Append(ctx, doc, recs)
	if err == nil {
		s.mu.Lock()
		close(s.wake)
		s.wake = make(chan struct{})
		s.mu.Unlock()
	}
	return err
}

func (s *sharedLog) Follow(ctx context.Context, doc string, after uint64, fn func(store.Record) error) error {
	next := after + 1
	for {
		w := s.changed()
		recs, err := s.Read(ctx, doc, next, 0)
		if err != nil && !errors.Is(err, store.ErrUnknownDocument) {
			return err
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
			next = r.Cursor + 1
		}
		if len(recs) > 0 {
			continue
		}
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// node is one gateway's view of the shared log; its appends can be held.
type node struct {
	*sharedLog
	mu      sync.Mutex
	hold    chan struct{} // while set, an append waits for it to close
	holding chan struct{} // told when an append is held
	// failFollows: the next follows fail at once, as when NATS is away.
	failFollows atomic.Int32
	// mute, while set, holds back what the node's follows bring.
	mute atomic.Pointer[chan struct{}]
}

func (n *node) Follow(ctx context.Context, doc string, after uint64, fn func(store.Record) error) error {
	if n.failFollows.Add(-1) >= 0 {
		return errInjected
	}
	return n.sharedLog.Follow(ctx, doc, after, func(r store.Record) error {
		if m := n.mute.Load(); m != nil {
			select {
			case <-*m:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return fn(r)
	})
}

// muteFollows holds back every record the node's follows bring until the
// returned func is called.
func (n *node) muteFollows() (unmute func()) {
	m := make(chan struct{})
	n.mute.Store(&m)
	return func() {
		n.mute.Store(nil)
		close(m)
	}
}

func (n *node) Append(ctx context.Context, doc string, recs []store.Record) error {
	n.mu.Lock()
	hold, holding := n.hold, n.holding
	n.mu.Unlock()
	if hold != nil {
		holding <- struct{}{}
		<-hold
	}
	return n.sharedLog.Append(ctx, doc, recs)
}

// holdAppends makes the node's next appends wait until release is called.
func (n *node) holdAppends() (held <-chan struct{}, release func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.hold, n.holding = make(chan struct{}), make(chan struct{}, 1)
	hold := n.hold
	return n.holding, func() {
		n.mu.Lock()
		n.hold = nil
		n.mu.Unlock()
		close(hold)
	}
}

// twoNodes starts two gateways on one shared log, with a document created
// through the first and stored.
func twoNodes(t *testing.T, raceWait time.Duration) (log *sharedLog, a, b *testServer, na *node) {
	log = newSharedLog()
	na = &node{sharedLog: log}
	a = startGateway(t, gateway.Config{Store: na, LostRaceWait: raceWait})
	b = startGateway(t, gateway.Config{Store: &node{sharedLog: log}, LostRaceWait: raceWait})
	return log, a, b, na
}

func shareAcross(t *testing.T, log *sharedLog, a, b *testServer, name string) (*peer.Doc, *peer.Doc) {
	t.Helper()
	da, err := dial(t, a.url, peer.Options{}).Share(ctxT(t), name, newDoc())
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the new document to be stored", func() bool {
		_, _, err := log.Load(context.Background(), name)
		return err == nil
	})
	db, err := dial(t, b.url, peer.Options{}).Join(ctxT(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return da, db
}

// Peers on two nodes share a document as on one: one order of commits,
// nothing refused, the same state and the same cursor on both nodes,
// while both write as fast as they can.
func TestNodesShareOneLog(t *testing.T) {
	eachTopology(t, gateway.Config{}, testNodesShareOneLog)
}

func testNodesShareOneLog(t *testing.T, tp topology) {
	da, err := dial(t, tp.url(0), peer.Options{}).Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	tp.stored(t, "doc")
	db, err := dial(t, tp.url(1), peer.Options{}).Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	for i, d := range []*peer.Doc{da, db} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < n; j++ {
				if _, err := set(d, fmt.Sprintf("p%d-%d", i, j), text("v")); err != nil {
					t.Errorf("peer %d commit %d: %v", i, j, err)
					return
				}
			}
		}()
	}
	waitApplied(t, da, n)
	waitApplied(t, db, n)
	wg.Wait()
	if stateOf(t, da) != stateOf(t, db) {
		t.Fatal("the peers on the two nodes diverged")
	}
	for _, s := range tp.nodes {
		waitCursor(t, s.Server, "doc", 2*n)
		_, state, cursor, err := s.State(ctxT(t), "doc")
		if err != nil {
			t.Fatal(err)
		}
		if cursor != 2*n || string(state) != stateOf(t, da) {
			t.Fatalf("a node is at cursor %d (want %d), same state %v", cursor, 2*n, string(state) == stateOf(t, da))
		}
	}
	for i, s := range tp.nodes {
		t.Logf("node %d: %d conflicts, %d catch-ups, %d commits from other nodes", i, s.Metrics().Conflicts.Load(), s.Metrics().CatchUps.Load(), s.Metrics().Foreign.Load())
	}
}

// An append that loses the race for its cursor to another node is not
// refused: the node takes the other's commit from its follow, delivers it,
// and lands its own after it (issue 17: a commit valid on one node is never
// refused because of the cluster). With the follow muted it reads the log
// once the race wait is over.
func TestLostRaceLandsAfterTheWinner(t *testing.T) {
	for _, muted := range []bool{false, true} {
		t.Run(fmt.Sprint("muted=", muted), func(t *testing.T) {
			// Unmuted, the wait outlasts the test: only the follow
			// can end it.
			wait := time.Hour
			if muted {
				wait = 10 * time.Millisecond
			}
			log, a, b, na := twoNodes(t, wait)
			da, db := shareAcross(t, log, a, b, "doc")
			held, release := na.holdAppends()
			if _, err := set(da, "from-a", text("1")); err != nil {
				t.Fatal(err)
			}
			<-held // a's append waits at cursor 1
			if muted {
				defer na.muteFollows()()
			}
			if _, err := set(db, "from-b", text("2")); err != nil {
				t.Fatal(err)
			}
			waitCursor(t, b.Server, "doc", 1) // b won cursor 1
			release()
			if got := waitApplied(t, da, 1); got[0].Commit.Deltas[0].Ref.Key != "from-b" {
				t.Fatalf("a's peer got %q, want b's commit", got[0].Commit.Deltas[0].Ref.Key)
			}
			if got := waitApplied(t, db, 1); got[0].Commit.Deltas[0].Ref.Key != "from-a" {
				t.Fatalf("b's peer got %q, want a's commit", got[0].Commit.Deltas[0].Ref.Key)
			}
			wantReads := int64(0)
			if muted {
				wantReads = 1
			}
			if c, r := a.Metrics().Conflicts.Load(), a.Metrics().CatchUps.Load(); c != 1 || r != wantReads {
				t.Fatalf("a counted %d conflicts and %d catch-up reads, want 1 and %d", c, r, wantReads)
			}
			recs, err := log.Read(context.Background(), "doc", 1, 0)
			if err != nil || len(recs) != 2 {
				t.Fatalf("the log holds %d records (%v), want 2", len(recs), err)
			}
			if stateOf(t, da) != stateOf(t, db) {
				t.Fatal("the peers diverged")
			}
		})
	}
}

// topology is the gateways a test's peers are spread over: one node, or
// three nodes on one shared log (issue 17: the end-to-end behaviours run a
// second time with the peers spread over three nodes).
type topology struct {
	nodes []*testServer
	log   store.Store // the shared log; nil on one node
}

// url is the address of the node peer i uses.
func (tp topology) url(i int) string { return tp.nodes[i%len(tp.nodes)].url }

// node is the gateway peer i uses.
func (tp topology) node(i int) *testServer { return tp.nodes[i%len(tp.nodes)] }

// stored waits, on a shared log, until a new document has reached it, so
// that a peer on another node finds it (on one node it is found at once).
func (tp topology) stored(t *testing.T, name string) {
	t.Helper()
	if tp.log == nil {
		return
	}
	eventually(t, name+" to reach the shared log", func() bool {
		_, _, err := tp.log.Load(context.Background(), name)
		return err == nil
	})
}

// eachTopology runs fn on one node, on three nodes sharing one log in
// memory, and on three nodes sharing one log on NATS JetStream (an
// embedded server).
func eachTopology(t *testing.T, cfg gateway.Config, fn func(t *testing.T, tp topology)) {
	t.Run("one node", func(t *testing.T) {
		fn(t, topology{nodes: []*testServer{startGateway(t, cfg)}})
	})
	t.Run("three nodes", func(t *testing.T) {
		log := newSharedLog()
		tp := topology{log: log}
		for range 3 {
			c := cfg
			c.Store = &node{sharedLog: log}
			tp.nodes = append(tp.nodes, startGateway(t, c))
		}
		fn(t, tp)
	})
	t.Run("three nodes on NATS", func(t *testing.T) {
		ns := natstest.Start(t)
		var tp topology
		for i := range 3 {
			st, err := jsstore.Open(ctxT(t), ns.Connect(t), jsstore.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if i == 0 {
				tp.log = st
			}
			c := cfg
			c.Store = st
			tp.nodes = append(tp.nodes, startGateway(t, c))
		}
		fn(t, tp)
	})
}

// A node whose follow of the shared log fails (NATS away) follows it again
// after a wait, and its peers get what other nodes wrote meanwhile.
func TestFollowResumesAfterTheLogFails(t *testing.T) {
	log := newSharedLog()
	a := startGateway(t, gateway.Config{Store: &node{sharedLog: log}})
	nb := &node{sharedLog: log}
	nb.failFollows.Store(2)
	b := startGateway(t, gateway.Config{Store: nb})
	da, db := shareAcross(t, log, a, b, "doc")
	if _, err := set(da, "k", text("v")); err != nil {
		t.Fatal(err)
	}
	if got := waitApplied(t, db, 1); got[0].Commit.Deltas[0].Ref.Key != "k" {
		t.Fatalf("b's peer got %q", got[0].Commit.Deltas[0].Ref.Key)
	}
	if n := nb.failFollows.Load(); n >= 0 {
		t.Fatalf("%d injected follow failures left: the follow was not retried", n+1)
	}
}

// A node cut off from NATS refuses writes with store-unavailable and keeps
// its links; once NATS is back the same links open the document again and
// write (issue 17).
func TestNodeCutOffFromNATS(t *testing.T) {
	ns := natstest.Start(t)
	st, err := jsstore.Open(ctxT(t), ns.Connect(t), jsstore.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := startGateway(t, gateway.Config{Store: st})
	pa, pb := dial(t, ts.url, peer.Options{}), dial(t, ts.url, peer.Options{})
	da, err := pa.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	db, err := pb.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(da, "before", text("1")); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, db, 1)

	ns.Stop()
	if _, err := set(da, "during", text("2")); err != nil {
		t.Fatal(err)
	}
	// The commit cannot be stored: its writer hears store-unavailable, as
	// a refusal or as its topic's end (when the node cannot tell whether
	// the write landed, the peer resyncs).
	func() {
		timeout := time.After(20 * time.Second)
		for {
			select {
			case ev, ok := <-da.Events():
				if !ok {
					t.Fatalf("a's document ended without a reason: %v", da.Err())
				}
				switch e := ev.(type) {
				case peer.Refused:
					if e.Mine && e.Reasons[0].Code == string(gateway.ReasonStoreUnavailable) {
						return
					}
				case peer.Ended:
					if e.Reason == gateway.ReasonStoreUnavailable {
						return
					}
					t.Fatalf("a's document ended with %s: %s", e.Reason, e.Message)
				}
			case <-timeout:
				t.Fatal("no store-unavailable while NATS was away")
			}
		}
	}()
	for _, p := range []*peer.Peer{pa, pb} {
		select {
		case <-p.Done():
			t.Fatalf("a link ended while NATS was away: %v", p.Err())
		default:
		}
	}

	ns.Restart(t)
	var d2 *peer.Doc
	eventually(t, "the document to open again once NATS is back", func() bool {
		d2, err = pa.Join(ctxT(t), "doc")
		return err == nil
	})
	db2, err := pb.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set(d2, "after", text("3")); err != nil {
		t.Fatal(err)
	}
	if got := waitApplied(t, db2, 1); got[0].Commit.Deltas[0].Ref.Key != "after" {
		t.Fatalf("b got %q after NATS came back", got[0].Commit.Deltas[0].Ref.Key)
	}
}

// The backend calls give one answer on every node: a write through one
// node is read through another at the same cursor, and a compare-and-swap
// write through a third lands only at the cursor the log is at (issue 17).
func TestCallsAgreeAcrossNodes(t *testing.T) {
	eachTopology(t, gateway.Config{}, func(t *testing.T, tp topology) {
		root := frame.Root{ID: commit.NewID(), Kind: commit.Object}
		if err := tp.node(0).Create(ctxT(t), "calls", root); err != nil {
			t.Fatal(err)
		}
		tp.stored(t, "calls")
		write := func(n *testServer, k string, expect *uint64) (uint64, error) {
			b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root.ID, Ref: commit.ObjectKey(k), Value: commit.IntValue(1)}}})
			if err != nil {
				t.Fatal(err)
			}
			return n.Write(ctxT(t), "calls", gateway.Origin{Kind: "backend", ID: "test"}, b, expect)
		}
		cur, err := write(tp.node(0), "a", nil)
		if err != nil || cur != 1 {
			t.Fatalf("write through node 0: cursor %d, %v", cur, err)
		}
		waitCursor(t, tp.node(1).Server, "calls", 1)
		_, state0, c0, err := tp.node(0).State(ctxT(t), "calls")
		if err != nil {
			t.Fatal(err)
		}
		_, state1, c1, err := tp.node(1).State(ctxT(t), "calls")
		if err != nil || c1 != c0 || string(state1) != string(state0) {
			t.Fatalf("node 1 reads cursor %d (%v), node 0 %d; same state %v", c1, err, c0, string(state1) == string(state0))
		}
		waitCursor(t, tp.node(2).Server, "calls", 1)
		stale := uint64(0)
		var cm *gateway.CursorMismatch
		if _, err := write(tp.node(2), "b", &stale); !errors.As(err, &cm) || cm.Actual != 1 {
			t.Fatalf("a write expecting cursor 0 through node 2: %v, want a cursor mismatch at 1", err)
		}
		at := uint64(1)
		if cur, err := write(tp.node(2), "c", &at); err != nil || cur != 2 {
			t.Fatalf("a write expecting cursor 1 through node 2: cursor %d, %v", cur, err)
		}
		// A node that has not yet seen another's write still refuses a
		// write that expects the cursor before it: its append loses the
		// race, and the commit, decided again, no longer matches.
		for i := range 20 {
			before := uint64(2 + 2*i)
			if _, err := write(tp.node(0), fmt.Sprint("x", i), nil); err != nil {
				t.Fatal(err)
			}
			if cur, err := write(tp.node(1), fmt.Sprint("y", i), &before); !errors.As(err, &cm) {
				t.Fatalf("round %d: a write expecting cursor %d landed at %d (%v) after another node's", i, before, cur, err)
			}
			waitCursor(t, tp.node(1).Server, "calls", before+1)
			if cur, err := write(tp.node(1), fmt.Sprint("z", i), nil); err != nil || cur != before+2 {
				t.Fatalf("round %d: cursor %d, %v", i, cur, err)
			}
		}
	})
}

// NATS loss (issue 17): with the log at three replicas on three NATS
// servers, the stream's leader is stopped while a backend writes through
// one gateway node and a peer reads through another. Writes go on (a
// write the election leaves unanswered is refused store-unavailable and
// retried, as a backend does); every acknowledged write is in the log at
// its cursor, and the reader ends with the log's state.
func TestNATSServerLostUnderWrites(t *testing.T) {
	servers := natstest.StartCluster(t, 3)
	urls := natstest.URLs(servers)
	open := func() *jsstore.Store {
		var st *jsstore.Store
		var err error
		eventually(t, "JetStream to take the log at three replicas", func() bool {
			st, err = jsstore.Open(ctxT(t), natstest.Connect(t, urls), jsstore.Options{Replicas: 3, Timeout: 2 * time.Second})
			return err == nil
		})
		t.Cleanup(func() { st.Close() })
		return st
	}
	sa, sb := open(), open()
	a := startGateway(t, gateway.Config{Store: sa})
	b := startGateway(t, gateway.Config{Store: sb})
	root := frame.Root{ID: commit.NewID(), Kind: commit.Object}
	if err := a.Create(ctxT(t), "ha", root); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the document to reach the log", func() bool {
		_, _, err := sb.Load(context.Background(), "ha")
		return err == nil
	})
	reader, err := dial(t, b.url, peer.Options{EventBuffer: 1 << 14}).Join(ctxT(t), "ha")
	if err != nil {
		t.Fatal(err)
	}
	type ack struct {
		cursor uint64
		bytes  []byte
	}
	var acks []ack
	const n = 300
	stopped := false
	for i := 0; i < n; i++ {
		if i == n/3 {
			// The leader of the log's stream goes.
			js, err := jetstream.New(natstest.Connect(t, urls))
			if err != nil {
				t.Fatal(err)
			}
			s, err := js.Stream(ctxT(t), jsstore.DefaultStream)
			if err != nil {
				t.Fatal(err)
			}
			info, err := s.Info(ctxT(t))
			if err != nil || info.Cluster == nil {
				t.Fatalf("stream info %+v %v", info, err)
			}
			for _, srv := range servers {
				if srv.Server != nil && srv.Name() == info.Cluster.Leader {
					srv.Stop()
					stopped = true
				}
			}
		}
		b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root.ID, Ref: commit.ObjectKey(fmt.Sprint("k", i)), Value: commit.IntValue(int64(i))}}})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprint("write ", i), func() bool {
			cur, err := a.Write(ctxT(t), "ha", gateway.Origin{Kind: "backend", ID: "ha"}, b, nil)
			if err == nil {
				acks = append(acks, ack{cur, b})
				return true
			}
			if protocol.ReasonOf(err) != gateway.ReasonStoreUnavailable {
				t.Fatalf("write %d: %v", i, err)
			}
			return false // the election is under way: retry
		})
	}
	if !stopped {
		t.Fatal("no server was the stream's leader")
	}
	snap, recs := logRecords(t, sb, "ha")
	inLog := map[uint64]string{}
	for _, r := range recs {
		inLog[r.Cursor] = string(r.Commit)
	}
	for _, k := range acks {
		if inLog[k.cursor] != string(k.bytes) {
			t.Fatalf("the write acknowledged at cursor %d is not there in the log", k.cursor)
		}
	}
	want := replay(t, snap, recs)
	eventually(t, "the reader to hold the log's state", func() bool { return stateOf(t, reader) == want })
}
