package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway/tail"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// trimDoc is a gateway holding document "d" with one member, and a
// backend's write of key i to it.
type trimDoc struct {
	s     *Server
	root  frame.Root
	d     *peer.Doc
	write func(i int)
}

func newTrimDoc(t *testing.T, ctx context.Context) *trimDoc {
	t.Helper()
	s, err := New(Config{PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	root := frame.Root{ID: commit.NewID(), Kind: commit.Object}
	if err := s.Create(ctx, "d", root); err != nil {
		t.Fatal(err)
	}
	p, err := peer.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), peer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	d, err := p.Join(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	td := &trimDoc{s: s, root: root, d: d}
	td.write = func(i int) {
		b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root.ID, Ref: commit.ObjectKey(fmt.Sprint("k", i)), Value: commit.IntValue(int64(i))}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(ctx, "d", Origin{Kind: "backend", ID: "t"}, b, nil); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	return td
}

// memberHas waits until the member holds key i.
func (td *trimDoc) memberHas(t *testing.T, ctx context.Context, i int) {
	t.Helper()
	for has := false; !has; {
		td.d.Read(func(doc *document.Document) { _, has = doc.Get(td.root.ID, commit.ObjectKey(fmt.Sprint("k", i))) })
		select {
		case <-ctx.Done():
			t.Fatalf("the member did not get key %d", i)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// recv waits for c to close.
func recv(t *testing.T, ctx context.Context, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-ctx.Done():
		t.Fatalf("timed out waiting for %s", what)
	}
}

// holds says which cursors the document's tail holds, from the first one
// after after: an error when it no longer holds after+1.
func (td *trimDoc) holds(after uint64) ([]uint64, error) {
	h := td.s.reg.acquire("d")
	defer td.s.reg.release(h)
	es, err := h.tail.Read(after, nil, 0)
	var cs []uint64
	for _, e := range es {
		cs = append(cs, e.Cursor)
	}
	return cs, err
}

// A document whose readers have read its commits lets them go: its tail
// holds what was appended since they last read, not the tail's bounds.
func TestATailEveryReaderReadIsLetGo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	td := newTrimDoc(t, ctx)
	got := make(chan uint64, 1024)
	go td.s.Subscribe(ctx, "d", 0, func(ev Event) error { got <- ev.Cursor; return nil })
	const n = 200
	for i := range n {
		td.write(i)
	}
	td.memberHas(t, ctx, n-1)
	for c := range uint64(n) {
		if cur := <-got; cur != c+1 {
			t.Fatalf("the subscriber got cursor %d, want %d", cur, c+1)
		}
	}
	// Both have read all n (the subscriber has published n-1 at least:
	// it publishes a cursor once its event is handed on), so the pass for
	// the next lets them go.
	td.write(n)
	if cs, err := td.holds(n); err != nil || len(cs) != 1 || cs[0] != n+1 {
		t.Fatalf("after %d the tail holds %v (%v), want the newest, %d", n, cs, err, n+1)
	}
	if _, err := td.holds(n - 2); !errors.Is(err, tail.ErrFellOff) {
		t.Fatalf("the tail still holds commit %d, which its readers read: %v", n-1, err)
	}
}

// A subscriber that has not read on holds the tail for itself; once it
// has, the next pass lets go of what it read.
func TestATailWaitsForItsSlowestReader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	td := newTrimDoc(t, ctx)
	first, held, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var last atomic.Uint64
	go td.s.Subscribe(ctx, "d", 0, func(ev Event) error {
		switch ev.Cursor {
		case 1:
			close(first)
		case 5:
			close(held)
			select { // ctx too, so a failed test leaves no goroutine behind
			case <-release:
			case <-ctx.Done():
			}
		}
		last.Store(ev.Cursor)
		return nil
	})
	// Once it has the first commit, it was among the hub's readers before
	// the second was written.
	td.write(0)
	recv(t, ctx, first, "the subscriber's first commit")
	const n = 100
	for i := 1; i < n; i++ {
		td.write(i)
	}
	recv(t, ctx, held, "the subscriber to reach cursor 5")
	td.memberHas(t, ctx, n-1)
	td.write(n)
	if cs, err := td.holds(4); err != nil || len(cs) != n+1-4 {
		t.Fatalf("with a subscriber at cursor 4 the tail holds %d commits after it (%v), want %d", len(cs), err, n+1-4)
	}
	close(release)
	for last.Load() != n+1 {
		select {
		case <-ctx.Done():
			t.Fatalf("the subscriber stopped at %d", last.Load())
		case <-time.After(5 * time.Millisecond):
		}
	}
	td.memberHas(t, ctx, n)
	// The subscriber has published n at least, the member n+1.
	td.write(n + 1)
	if _, err := td.holds(n - 1); !errors.Is(err, tail.ErrFellOff) {
		t.Fatalf("once every reader read on, the tail still holds commit %d: %v", n, err)
	}
}
