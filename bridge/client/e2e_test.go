package client_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// End to end: the SDK against a real gateway and bridge on 127.0.0.1.

func dialPeer(t *testing.T, lc *local) *peer.Peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	p, err := peer.Dial(ctx, lc.ws, peer.Options{})
	if err != nil {
		t.Fatalf("peer: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func nextEvent[T any](t *testing.T, d *peer.Doc) T {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case ev, ok := <-d.Events():
			if !ok {
				t.Fatalf("%s ended: %v", d.Name(), d.Err())
			}
			if e, ok := ev.(T); ok {
				return e
			}
		case <-timeout:
			var zero T
			t.Fatalf("%s: no %T", d.Name(), zero)
		}
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

func mustClaim(t *testing.T, c *client.Client, p client.Pattern, h client.Handlers) *client.Claim {
	t.Helper()
	cl, err := c.Claim(ctxT(t), p, h)
	if err != nil {
		t.Fatalf("Claim %s: %v", p, err)
	}
	return cl
}

func addText(id commit.ID, key, s string) commit.Delta {
	return commit.Delta{Op: commit.Add, ID: id, Ref: commit.ObjectKey(key), Value: commit.TextValue(s)}
}

// A browser's commit under /admin is refused with the handler's reasons
// and path; its other commits land; a unary write is judged the same way,
// and a stream write is not asked of its own stream (the open policy
// answers it, there being no other claimant).
func TestE2ERefusesAdmin(t *testing.T) {
	lc := startLocalT(t, bridge.Config{Policy: bridge.PolicyOpen})
	c := dialLocal(t, lc, client.Options{Backend: "rules"})
	asked := make(chan client.AcceptQuestion, 16)
	mustClaim(t, c, client.Prefix("board:"), client.Handlers{
		Accept: func(ctx context.Context, q client.AcceptQuestion) ([]client.Reason, error) {
			asked <- q
			return refuseAdmin(ctx, q)
		},
		MayOpen: func(context.Context, client.MayOpenQuestion) ([]client.Reason, error) { return nil, nil },
	})

	p := dialPeer(t, lc)
	doc := document.New(commit.NewID(), commit.Object, document.Limits{})
	d, err := p.Share(ctxT(t), "board:1", doc)
	if err != nil {
		t.Fatalf("Share: %v", err)
	}
	root, _ := d.Root()
	okSeq, err := d.Commit(addText(root, "title", "plan"))
	if err != nil {
		t.Fatal(err)
	}
	badSeq, err := d.Commit(addText(root, "admin", "me"))
	if err != nil {
		t.Fatal(err)
	}
	r := nextEvent[peer.Refused](t, d)
	if !r.Mine || r.Seq != badSeq || len(r.Reasons) != 1 || r.Reasons[0].Code != "forbidden" || strings.Join(r.Reasons[0].Path, "/") != "admin" {
		t.Fatalf("refused %+v (title was seq %d), want our forbidden at admin", r, okSeq)
	}
	// Both commits were asked about (in flight together), each with its path.
	var paths []string
	for range 2 {
		q := wait(t, asked, "an accept question")
		if q.Document != "board:1" || q.Origin.Peer == nil || len(q.Paths) != 1 {
			t.Fatalf("question = %+v", q)
		}
		paths = append(paths, strings.Join(q.Paths[0], "/"))
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"admin", "title"}) {
		t.Fatalf("asked about %v", paths)
	}

	wr, err := c.WriteCommit(ctxT(t), "board:1", commit.Commit{Deltas: []commit.Delta{addText(root, "admin", "x")}}, client.WriteOptions{})
	if err != nil || wr.Status != client.WriteRefused || wr.Reasons[0].Code != "forbidden" || !slices.Equal(wr.Reasons[0].Path, []string{"admin"}) {
		t.Fatalf("unary write under admin = %+v, %v", wr, err)
	}
	sw, err := c.StreamWriteCommit(ctxT(t), "board:1", commit.Commit{Deltas: []commit.Delta{addText(root, "admin", "backend")}}, client.WriteOptions{Label: "own"})
	if err != nil || sw.Status != client.WriteApplied || sw.Applied == nil || !slices.Equal(sw.Applied.Paths[0], []string{"admin"}) {
		t.Fatalf("stream write = %+v, %v: a stream's own write is not judged by it", sw, err)
	}
	if q := <-asked; q.Origin.Backend == nil || q.Origin.Backend.Name != "rules" || q.Origin.Backend.StreamID != 0 {
		t.Fatalf("the unary write's question has origin %+v", q.Origin)
	}
	if n := len(asked); n != 0 {
		t.Fatalf("%d more questions: the stream write was asked of its own stream", n)
	}
	st, cur, err := c.GetState(ctxT(t), "board:1")
	if err != nil || cur != sw.Cursor || len(st.Commit.Deltas) != 2 || st.Root.ID != root {
		t.Fatalf("GetState = %+v, %d, %v", st, cur, err)
	}
	var names []string
	for info, err := range c.ListDocuments(ctxT(t), client.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, info.Name)
	}
	if !slices.Equal(names, []string{"board:1"}) {
		t.Fatalf("listed %v", names)
	}
}

// A subscriber sees every commit once, in cursor order, across a network
// cut; the authority stream comes back and re-claims, so the closed policy
// never answers for the claimed names after it.
func TestE2EReconnectResumesAndReclaims(t *testing.T) {
	lc := startLocalT(t, bridge.Config{Policy: bridge.PolicyClosed})
	c := dialLocal(t, lc, client.Options{Backend: "follower"})
	mustClaim(t, c, client.Prefix("notes:"), client.Handlers{Accept: refuseAdmin})
	root := commit.NewID()
	create := client.WriteOptions{CreateRoot: &client.Root{ID: root, Kind: commit.Object}}

	events := make(chan client.Event, 64)
	subDone := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		<-subDone
	}()
	if r, err := c.WriteCommit(ctxT(t), "notes:1", commit.Commit{Deltas: []commit.Delta{addText(root, "k0", "v")}}, create); err != nil || r.Status != client.WriteApplied {
		t.Fatalf("first write = %+v, %v", r, err)
	}
	go func() {
		subDone <- c.Subscribe(ctx, "notes:1", 0, func(ev client.Event) error {
			events <- ev
			return nil
		})
	}()
	next := func() client.Event {
		t.Helper()
		for {
			ev := wait(t, events, "an event")
			if ev.Kind != client.CaughtUpEvent {
				return ev
			}
		}
	}
	if ev := next(); ev.Kind != client.CommitEvent || ev.Cursor != 1 {
		t.Fatalf("first event %v at %d", ev.Kind, ev.Cursor)
	}
	write := func(key string) uint64 {
		t.Helper()
		r, err := c.WriteCommit(ctxT(t), "notes:1", commit.Commit{Deltas: []commit.Delta{addText(root, key, "v")}}, client.WriteOptions{})
		if err != nil || r.Status != client.WriteApplied {
			t.Fatalf("write %s = %+v, %v", key, r, err)
		}
		return r.Cursor
	}
	write("k1")
	if ev := next(); ev.Cursor != 2 {
		t.Fatalf("event at %d, want 2", ev.Cursor)
	}

	lc.proxy.cut()
	until(t, c, "the re-claim", func(st client.Status) bool {
		return st.Connects >= 2 && st.State == client.StateConnected && len(st.Claims) == 1 && st.Claims[0].Granted
	})
	// Commits while the subscription may be away: each arrives once.
	for _, k := range []string{"k2", "k3", "k4"} {
		write(k)
	}
	r, err := c.WriteCommit(ctxT(t), "notes:1", commit.Commit{Deltas: []commit.Delta{addText(root, "admin", "x")}}, client.WriteOptions{})
	if err != nil || r.Status != client.WriteRefused || r.Reasons[0].Code != "forbidden" {
		t.Fatalf("after the reconnect, under admin = %+v, %v: our claim must judge it, not the closed policy", r, err)
	}
	for want := uint64(3); want <= 5; want++ {
		ev := next()
		if ev.Kind != client.CommitEvent || ev.Cursor != want {
			t.Fatalf("event %v at %d, want the commit at %d", ev.Kind, ev.Cursor, want)
		}
	}
	sub := c.Status().Subscriptions[0]
	if sub.Documents["notes:1"].Observed != 5 || sub.Duplicates != 0 {
		t.Fatalf("subscription status = %+v", sub)
	}
}

// A wrong token is refused by the real bridge; Subscribe gives up at once.
func TestE2EToken(t *testing.T) {
	lc := startLocalT(t, bridge.Config{Tokens: []string{"the-right-token-123"}})
	good := dialLocal(t, lc, client.Options{Token: "the-right-token-123"})
	if _, _, err := good.GetState(ctxT(t), "x"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("with the token: %v", err)
	}
	bad := dialLocal(t, lc, client.Options{Token: "a-wrong-token-4567"})
	if err := bad.Subscribe(ctxT(t), "x", 0, func(client.Event) error { return nil }); err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Fatalf("Subscribe with a wrong token = %v", err)
	}
}

// Load questions are answered from the backend's own store, cursor
// included, and a document nobody has is ErrNotFound.
func TestE2ELoad(t *testing.T) {
	lc := startLocalT(t, bridge.Config{})
	c := dialLocal(t, lc, client.Options{})
	root := commit.NewID()
	asked := make(chan client.LoadQuestion, 4)
	mustClaim(t, c, client.Prefix("stored:"), client.Handlers{Load: func(_ context.Context, q client.LoadQuestion) (*client.Loaded, error) {
		asked <- q
		if q.Document != "stored:a" {
			return nil, nil
		}
		return &client.Loaded{State: client.State{Root: client.Root{ID: root, Kind: commit.Object},
			Commit: commit.Commit{Deltas: []commit.Delta{addText(root, "from", "disk")}}}, Cursor: 40}, nil
	}})
	p := dialPeer(t, lc)
	d, err := p.Join(ctxT(t), "stored:a")
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	// It names the joining peer: the one link, anonymous, from loopback.
	if q := wait(t, asked, "a load question"); q.Document != "stored:a" || q.Peer == nil || q.Peer.ConnectionID == 0 ||
		q.Peer.RemoteAddr != "127.0.0.1" || !q.Peer.Identity.Anonymous {
		t.Fatalf("load question = %+v (peer %+v), want the joiner named", q, q.Peer)
	}
	if got := d.Snapshot(); len(got.Deltas) != 1 || got.Deltas[0].Value.Str != "disk" {
		t.Fatalf("the peer joined %+v, want the loaded state", got)
	}
	// The gateway's cursors continue from the backend's.
	st, cur, err := c.GetState(ctxT(t), "stored:a")
	if err != nil || st.Root.ID != root || len(st.Commit.Deltas) != 1 || cur != 40 {
		t.Fatalf("GetState = %+v, %d, %v; want the loaded state at cursor 40", st, cur, err)
	}
	if _, _, err := c.GetState(ctxT(t), "stored:none"); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("GetState of nothing = %v, want ErrNotFound", err)
	}
}

// A backend's own calls load a document no peer has opened: GetState and
// WriteCommit ask the load claimant first, and a failing load is
// UNAVAILABLE (retry), never NOT_FOUND or a new document.
func TestE2ELoadForCalls(t *testing.T) {
	lc := startLocalT(t, bridge.Config{})
	c := dialLocal(t, lc, client.Options{})
	root := commit.NewID()
	var named atomic.Int32 // loads that named a peer: none, as no peer asked
	mustClaim(t, c, client.Prefix("stored:"), client.Handlers{Load: func(_ context.Context, q client.LoadQuestion) (*client.Loaded, error) {
		if q.Peer != nil {
			named.Add(1)
		}
		if q.Document == "stored:broken" {
			return nil, errors.New("the disk is unreadable")
		}
		return &client.Loaded{State: client.State{Root: client.Root{ID: root, Kind: commit.Object},
			Commit: commit.Commit{Deltas: []commit.Delta{addText(root, "from", "disk")}}}, Cursor: 40}, nil
	}})
	st, cur, err := c.GetState(ctxT(t), "stored:read")
	if err != nil || st.Root.ID != root || len(st.Commit.Deltas) != 1 || cur != 40 {
		t.Fatalf("GetState = %+v, %d, %v; want the loaded state at cursor 40", st, cur, err)
	}
	res, err := c.WriteCommit(ctxT(t), "stored:write", commit.Commit{Deltas: []commit.Delta{addText(root, "more", "x")}}, client.WriteOptions{})
	if err != nil || res.Status != client.WriteApplied || res.Cursor != 41 {
		t.Fatalf("WriteCommit = %+v, %v; want applied at 41, after the loaded 40", res, err)
	}
	_, _, err = c.GetState(ctxT(t), "stored:broken")
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("GetState with a failing load = %v, want UNAVAILABLE", err)
	}
	if n := named.Load(); n != 0 {
		t.Fatalf("%d loads for a backend's calls named a peer", n)
	}
}
