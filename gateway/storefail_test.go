package gateway_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// lateFailStore fails appends while armed, after (landed) or instead of
// writing them, and can fail loads too.
type lateFailStore struct {
	store.Store
	landThenFail atomic.Bool
	failAppend   atomic.Bool
	failLoad     atomic.Bool
}

var errInjected = errors.New("injected: the disk went away")

func (s *lateFailStore) Append(ctx context.Context, doc string, recs []store.Record) error {
	switch {
	case s.landThenFail.Load():
		if err := s.Store.Append(ctx, doc, recs); err != nil {
			return err
		}
		return errInjected
	case s.failAppend.Load():
		return errInjected
	}
	return s.Store.Append(ctx, doc, recs)
}

func (s *lateFailStore) Load(ctx context.Context, doc string) (*store.Snapshot, []store.Record, error) {
	if s.failLoad.Load() {
		return nil, nil, errInjected
	}
	return s.Store.Load(ctx, doc)
}

// An append that reports failure although its records landed is not
// refused: the hub asks the store, finds them, and delivers them.
func TestFailedAppendThatLandedIsDelivered(t *testing.T) {
	st := &lateFailStore{Store: store.NewMemory()}
	ts := startGateway(t, gateway.Config{Store: st})
	da, db := sharedPair(t, ts.url, "doc")
	st.landThenFail.Store(true)
	if _, err := set(da, "landed", text("1")); err != nil {
		t.Fatal(err)
	}
	got := waitApplied(t, db, 1)
	if k := got[0].Commit.Deltas[0].Ref.Key; k != "landed" {
		t.Fatalf("b got %q, want the commit that landed", k)
	}
	st.landThenFail.Store(false)
	if _, err := set(da, "next", text("2")); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, db, 1)
	// No refusal reached a: its next event, if any, is not Refused.
	select {
	case ev := <-da.Events():
		if r, ok := ev.(peer.Refused); ok {
			t.Fatalf("a was told %+v for a commit the store holds", r)
		}
	default:
	}
	if _, _, cursor, _ := ts.State(ctxT(t), "doc"); cursor != 2 {
		t.Fatalf("cursor %d, want 2", cursor)
	}
	if stateOf(t, da) != stateOf(t, db) {
		t.Fatal("the two peers differ")
	}
}

// When the store can say neither yes nor no (the append and the reload both
// fail), the origin is not told refused; every member's topic ends with
// store-unavailable, and each gets the stored truth when it opens again.
func TestUnknownAppendOutcomeEndsTopics(t *testing.T) {
	st := &lateFailStore{Store: store.NewMemory()}
	ts := startGateway(t, gateway.Config{Store: st})
	da, db := sharedPair(t, ts.url, "doc")
	st.failAppend.Store(true)
	st.failLoad.Store(true)
	if _, err := set(da, "lost", text("1")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*peer.Doc{da, db} {
		e := nextEvent[peer.Ended](t, d)
		if e.Reason != gateway.ReasonStoreUnavailable {
			t.Fatalf("topic ended with %+v, want store-unavailable", e)
		}
	}
	st.failAppend.Store(false)
	st.failLoad.Store(false)
	// Each link's leave reached the hub before its fault was written, so
	// the hub has no members when c opens, and reloads.
	// Open again: the store never got the commit, and a fresh join says so.
	c := dial(t, ts.url, peer.Options{})
	dc, err := c.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, cursor, _ := ts.State(ctxT(t), "doc"); cursor != 0 {
		t.Fatalf("cursor %d, want 0", cursor)
	}
	if js, _ := dc.JSON(); strings.Contains(string(js), "lost") {
		t.Fatalf("a commit the store never got came back: %s", js)
	}
}

// A backend's calls on a document the store cannot load say
// store-unavailable (not no-document, which could invite a second
// document under the name), and see the document once the store is back.
func TestCallsOnADocumentTheStoreCannotLoad(t *testing.T) {
	st := &lateFailStore{Store: store.NewMemory()}
	ts := startGateway(t, gateway.Config{Store: st})
	da, _ := sharedPair(t, ts.url, "doc")
	cur, err := set(da, "kept", text("1"))
	if err != nil {
		t.Fatal(err)
	}
	waitCursor(t, ts.Server, "doc", cur)
	ts.stop(t)
	// A second gateway on the same store, which now fails its loads.
	st.failLoad.Store(true)
	ts = startGateway(t, gateway.Config{Store: st})
	root, _ := da.Root()
	b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey("more"), Value: text("2")}}})
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"State": func() error { _, _, _, err := ts.State(ctxT(t), "doc"); return err },
		"Write": func() error { _, err := ts.Write(ctxT(t), "doc", gateway.Origin{ID: "backend"}, b, nil); return err },
		"ReplaceState": func() error {
			_, _, err := ts.ReplaceState(ctxT(t), "doc", gateway.Origin{ID: "backend"}, nil, nil)
			return err
		},
	}
	for name, call := range calls {
		if err := call(); protocol.ReasonOf(err) != gateway.ReasonStoreUnavailable {
			t.Fatalf("%s while the store fails = %v, want %s", name, err, gateway.ReasonStoreUnavailable)
		}
	}
	st.failLoad.Store(false)
	if _, _, cursor, err := ts.State(ctxT(t), "doc"); err != nil || cursor != cur {
		t.Fatalf("State once the store is back = %d, %v; want cursor %d", cursor, err, cur)
	}
}

// stallLoadStore blocks Load of one document until released.
type stallLoadStore struct {
	store.Store
	doc     string
	entered chan struct{}
	release chan struct{}
}

func (s *stallLoadStore) Load(ctx context.Context, doc string) (*store.Snapshot, []store.Record, error) {
	if doc == s.doc {
		s.entered <- struct{}{}
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	return s.Store.Load(ctx, doc)
}

// A hub's store load runs off its goroutine (issue 16): while one document's
// load is stalled, the status still answers for it (as loading), other
// documents work, and the open that waited completes once the load does.
func TestStalledLoadHoldsOnlyItsDocument(t *testing.T) {
	st := &stallLoadStore{Store: store.NewMemory(), doc: "stuck", entered: make(chan struct{}, 1), release: make(chan struct{})}
	ts := startGateway(t, gateway.Config{Store: st})
	opened := make(chan error, 1)
	go func() {
		p, err := peer.Dial(ctxT(t), ts.url, peer.Options{})
		if err != nil {
			opened <- err
			return
		}
		defer p.Close()
		_, err = p.Share(ctxT(t), "stuck", newDoc())
		opened <- err
	}()
	<-st.entered
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var loading bool
	for _, d := range ts.Status(ctx).Documents {
		if d.Name == "stuck" {
			loading = d.Loading
		}
	}
	if ctx.Err() != nil || !loading {
		t.Fatalf("status during the stalled load: loading=%v, ctx %v; want it answered, loading", loading, ctx.Err())
	}
	da, db := sharedPair(t, ts.url, "other")
	if _, err := set(da, "k", text("v")); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, db, 1)
	select {
	case err := <-opened:
		t.Fatalf("the open of the stalled document ended before its load: %v", err)
	default:
	}
	close(st.release)
	if err := <-opened; err != nil {
		t.Fatalf("share after the load: %v", err)
	}
}
