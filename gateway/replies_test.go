package gateway_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// stallingStore fails one append of a document and then holds its reload,
// so that document's hub sits in a store call.
type stallingStore struct {
	store.Store
	doc     string
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
}

func (s *stallingStore) Append(ctx context.Context, doc string, recs []store.Record) error {
	s.mu.Lock()
	fail := s.armed && doc == s.doc
	s.mu.Unlock()
	if fail {
		return errors.New("stalling store: this append fails")
	}
	return s.Store.Append(ctx, doc, recs)
}

func (s *stallingStore) Load(ctx context.Context, doc string) (*store.Snapshot, []store.Record, error) {
	s.mu.Lock()
	hold := s.armed && doc == s.doc
	s.armed = s.armed && !hold
	s.mu.Unlock()
	if hold {
		close(s.entered)
		<-s.release
	}
	return s.Store.Load(ctx, doc)
}

type ask struct {
	req   *gateway.AcceptRequest
	reply func(gateway.Verdict)
}

// streamAuthority hands every question to the test, which answers it (as
// one backend stream's receive loop would, in order, or held).
type streamAuthority struct {
	asks chan ask
}

func (a *streamAuthority) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	a.asks <- ask{req, reply}
}

func (a *streamAuthority) MayOpen(_ gateway.OpenRequest, reply func(error)) { reply(nil) }

// Issue 16: one document busy in a store call never holds the answers for
// another on the same stream. Its verdicts (more than the hub's old reply
// buffer) are answered while it is stalled, then another document's: that
// one lands at once.
func TestStalledDocumentDoesNotHoldAnotherDocumentsVerdicts(t *testing.T) {
	st := &stallingStore{Store: store.NewMemory(), doc: "a", entered: make(chan struct{}), release: make(chan struct{})}
	auth := &streamAuthority{asks: make(chan ask, 4096)}
	ts := startGateway(t, gateway.Config{Store: st, Authority: auth, MaxFramesInFlight: 1024, JudgeTimeout: time.Minute})
	defer close(st.release)
	da, _ := sharedPair(t, ts.url, "a")
	db, dbJoin := sharedPair(t, ts.url, "b")

	st.mu.Lock()
	st.armed = true
	st.mu.Unlock()
	const n = 200
	for i := range n {
		if _, err := set(da, key(0, i), commit.IntValue(int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	var held []ask
	for len(held) < n {
		held = append(held, <-auth.asks)
	}
	held[0].reply(gateway.Verdict{}) // its append fails; the reload stalls
	<-st.entered
	if _, err := set(db, "k", text("v")); err != nil {
		t.Fatal(err)
	}
	b := <-auth.asks
	if b.req.Document != "b" {
		t.Fatalf("asked about %q, want b", b.req.Document)
	}
	answered := make(chan struct{})
	go func() { // the stream's receive loop, in order
		defer close(answered)
		for _, q := range held[1:] {
			q.reply(gateway.Verdict{})
		}
		b.reply(gateway.Verdict{})
	}()
	waitApplied(t, dbJoin, 1)
	<-answered
}

// Issue 16: a commit asked while an earlier one was in flight is shown the
// paths of the document without that one; when the earlier one lands and
// moves what the later one touches, the later one is asked again with its
// real paths before it lands, so an authority that judges by path is never
// shown a stale one.
func TestPipelinedCommitIsAskedWithItsRealPaths(t *testing.T) {
	auth := &streamAuthority{asks: make(chan ask, 16)}
	ts := startGateway(t, gateway.Config{Authority: auth})
	r := dialRaw(t, ts.url)
	_, root := r.create("doc", nil)
	x := commit.NewID()
	encode := func(d commit.Delta) []byte {
		b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{d}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	attach := encode(commit.Delta{Op: commit.Add, ID: root.ID, Ref: commit.ObjectKey("admin"),
		Value: commit.RefTo(commit.Reference{Edge: commit.Attach, Kind: commit.Object, ID: x})})
	write := encode(commit.Delta{Op: commit.Add, ID: x, Ref: commit.ObjectKey("k"), Value: text("v")})
	r.send(frame.Frame{Kind: frame.Commits, Topic: 1, First: 1, Commits: [][]byte{attach, write}})
	first, second := <-auth.asks, <-auth.asks // both in flight at once
	if got := second.req.Paths; len(got) != 1 || got[0] != nil {
		t.Fatalf("the second commit was first asked with paths %q, want none (its target is not reachable yet)", got)
	}
	second.reply(gateway.Verdict{})
	first.reply(gateway.Verdict{})
	var again ask
	select {
	case again = <-auth.asks:
	case <-time.After(20 * time.Second):
		t.Fatal("the second commit was never asked again with its real paths")
	}
	if got := again.req.Paths; len(got) != 1 || strings.Join(got[0], "/") != "admin/k" {
		t.Fatalf("asked again with paths %q, want [admin/k]", got)
	}
	again.reply(gateway.Verdict{})
	waitCursor(t, ts.Server, "doc", 2)
}
