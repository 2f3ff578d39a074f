package bridge_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
)

// writeN writes n commits k<from>..k<from+n-1> into doc (created on the
// first), one unary call each.
func writeN(t *testing.T, e *env, doc string, root commit.ID, from, n int) {
	t.Helper()
	pr := &v1.Root{Id: pid(root), Kind: v1.Kind_KIND_OBJECT}
	for i := from; i < from+n; i++ {
		r, err := e.client.WriteCommit(context.Background(), &v1.WriteCommitRequest{Document: doc, Commit: addText(root, fmt.Sprintf("k%d", i), "v"), CreateRoot: pr})
		if err != nil || r.Result.Status != v1.WriteStatus_WRITE_STATUS_APPLIED {
			t.Errorf("write %d: %v %v", i, r, err)
			return
		}
	}
}

func subscribeDoc(t *testing.T, e *env, ctx context.Context, doc string, resume map[string]uint64) v1.GatewayService_SubscribeClient {
	t.Helper()
	s, err := e.client.Subscribe(ctx, &v1.SubscribeRequest{Target: &v1.SubscribeRequest_Document{Document: doc}, Resume: resume})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A subscriber cut off and resumed at random points, while commits keep
// landing, sees every cursor exactly once, in order.
func TestResumeSeesEveryCursorOnce(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true})
	root := commit.NewID()
	writeN(t, e, "doc", root, 0, 1)
	const total = 300
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		writeN(t, e, "doc", root, 1, total-1)
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	var last uint64
	sessions := 0
	for last < total {
		sessions++
		ctx, cancel := context.WithCancel(ctxT(t))
		s := subscribeDoc(t, e, ctx, "doc", map[string]uint64{"doc": last})
		take := 1 + rng.IntN(25)
		for take > 0 && last < total {
			ev, err := s.Recv()
			if err != nil {
				t.Fatalf("session %d after %d: %v", sessions, last, err)
			}
			switch x := ev.Event.(type) {
			case *v1.SubscribeResponse_Commit:
				if x.Commit.Cursor != last+1 {
					t.Fatalf("session %d: cursor %d after %d", sessions, x.Commit.Cursor, last)
				}
				if got := x.Commit.Commit.Deltas[0].Ref.GetObjectKey(); got != fmt.Sprintf("k%d", last) {
					t.Fatalf("cursor %d holds %s", x.Commit.Cursor, got)
				}
				last = x.Commit.Cursor
				take--
			case *v1.SubscribeResponse_Snapshot:
				t.Fatalf("snapshot %v within retention", x.Snapshot)
			}
		}
		cancel()
	}
	wg.Wait()
	if sessions < 5 {
		t.Fatalf("only %d sessions; the test did not resume", sessions)
	}
}

// A subscriber resuming from before what the store retains gets a snapshot,
// then the tail, then CaughtUp, then live commits; one resuming from ahead
// of the document gets a snapshot too.
func TestResumeTooOldGetsSnapshot(t *testing.T) {
	st := store.NewMemoryOptions(store.Options{Retain: 10})
	t.Cleanup(func() { st.Close() })
	e := startEnv(t, envOpts{bufconn: true, gateway: gateway.Config{Store: st, SnapshotEvery: 5}})
	root := commit.NewID()
	writeN(t, e, "doc", root, 0, 40)
	waitCursor(t, e.gw, "doc", 40)

	s := subscribeDoc(t, e, ctxT(t), "doc", map[string]uint64{"doc": 1})
	ev, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	snap := ev.GetSnapshot()
	if snap == nil || snap.Reason != v1.SnapshotReason_SNAPSHOT_REASON_EXPIRED || snap.Cursor <= 1 || snap.Cursor > 40 {
		t.Fatalf("first event %v, want an expired snapshot", ev)
	}
	if n := len(snap.State.Commit.GetDeltas()); uint64(n) != snap.Cursor {
		t.Fatalf("snapshot at %d holds %d keys", snap.Cursor, n)
	}
	last := snap.Cursor
	for last < 40 {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		c := ev.GetCommit()
		if c == nil || c.Cursor != last+1 {
			t.Fatalf("after %d: %v", last, ev)
		}
		// A replica built from the snapshot gives every delta its path.
		if p := c.Commit.Deltas[0].Path.GetSteps(); len(p) != 1 || p[0] != fmt.Sprintf("k%d", c.Cursor-1) {
			t.Fatalf("path %v at %d", p, c.Cursor)
		}
		last = c.Cursor
	}
	if ev, err := s.Recv(); err != nil || ev.GetCaughtUp() == nil {
		t.Fatalf("%v %v, want CaughtUp", ev, err)
	}
	writeN(t, e, "doc", root, 40, 1)
	if ev, err := s.Recv(); err != nil || ev.GetCommit().GetCursor() != 41 {
		t.Fatalf("%v %v, want live cursor 41", ev, err)
	}

	ahead := subscribeDoc(t, e, ctxT(t), "doc", map[string]uint64{"doc": 500})
	ev, err = ahead.Recv()
	if err != nil || ev.GetSnapshot().GetReason() != v1.SnapshotReason_SNAPSHOT_REASON_AHEAD || ev.GetSnapshot().GetCursor() != 41 {
		t.Fatalf("%v %v, want an ahead snapshot at 41", ev, err)
	}
}

// A pattern subscription follows the documents it matches, snapshot first
// when asked, and picks up documents created after it began.
func TestPatternSubscription(t *testing.T) {
	e := startEnv(t, envOpts{bufconn: true})
	root := commit.NewID()
	writeN(t, e, "p/a", root, 0, 2)
	writeN(t, e, "q/x", root, 0, 1)
	s, err := e.client.Subscribe(ctxT(t), &v1.SubscribeRequest{Target: &v1.SubscribeRequest_Pattern{Pattern: prefix("p/")}, Start: v1.StartPosition_START_POSITION_SNAPSHOT})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := s.Recv()
	if err != nil || ev.GetSnapshot().GetDocument() != "p/a" || ev.GetSnapshot().GetCursor() != 2 || ev.GetSnapshot().GetReason() != v1.SnapshotReason_SNAPSHOT_REASON_REQUESTED {
		t.Fatalf("%v %v, want p/a's snapshot at 2", ev, err)
	}
	if ev, err := s.Recv(); err != nil || ev.GetCaughtUp() == nil {
		t.Fatalf("%v %v, want CaughtUp", ev, err)
	}
	writeN(t, e, "q/y", root, 0, 1)
	writeN(t, e, "p/b", root, 0, 2)
	writeN(t, e, "p/a", root, 2, 1)
	seen := map[string][]uint64{}
	for len(seen["p/b"]) < 2 || len(seen["p/a"]) < 1 {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		c := ev.GetCommit()
		if c == nil {
			t.Fatalf("%v, want commits", ev)
		}
		seen[c.Document] = append(seen[c.Document], c.Cursor)
	}
	if fmt.Sprint(seen) != "map[p/a:[3] p/b:[1 2]]" {
		t.Fatalf("seen %v", seen)
	}
}

// A subscription to a document that does not exist yet starts with its
// first commit once a peer creates it.
func TestSubscribeBeforeTheDocumentExists(t *testing.T) {
	e := startEnv(t, envOpts{})
	s := subscribeDoc(t, e, ctxT(t), "later", nil)
	if ev, err := s.Recv(); err != nil || ev.GetCaughtUp() == nil {
		t.Fatalf("%v %v, want CaughtUp", ev, err)
	}
	p := dialPeer(t, e, peer.Options{})
	d, err := p.Share(ctxT(t), "later", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := set(d, fmt.Sprintf("k%d", i), text("v")); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		ev, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if c := ev.GetCommit(); c == nil || c.Cursor != uint64(i)+1 || c.Origin.GetPeer() == nil {
			t.Fatalf("event %d: %v", i, ev)
		}
	}
}
