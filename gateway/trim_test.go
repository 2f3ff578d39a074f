package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/weftgate/weftgate/gateway/tail"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// A document whose members have read its commits lets them go: its tail
// holds what was appended since they last read, not the tail's bounds.
func TestATailEveryMemberReadIsLetGo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := New(Config{PingInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	defer hs.Close()
	defer s.Shutdown(ctx)
	root := frame.Root{ID: commit.NewID(), Kind: commit.Object}
	if err := s.Create(ctx, "d", root); err != nil {
		t.Fatal(err)
	}
	p, err := peer.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http"), peer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	d, err := p.Join(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	write := func(i int) {
		b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root.ID, Ref: commit.ObjectKey(fmt.Sprint("k", i)), Value: commit.IntValue(int64(i))}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(ctx, "d", Origin{Kind: "backend", ID: "t"}, b, nil); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	const n = 200
	for i := range n {
		write(i)
	}
	for has := false; !has; {
		d.Read(func(doc *document.Document) { _, has = doc.Get(root.ID, commit.ObjectKey(fmt.Sprint("k", n-1))) })
		select {
		case <-ctx.Done():
			t.Fatal("the member did not get every commit")
		case <-time.After(5 * time.Millisecond):
		}
	}
	// The member has read all n, so the pass for the next lets them go.
	write(n)
	h := s.reg.acquire("d")
	defer s.reg.release(h)
	es, err := h.tail.Read(n, nil, 0)
	if err != nil || len(es) != 1 || es[0].Cursor != n+1 {
		t.Fatalf("after %d the tail holds %d commits (%v), want the newest, %d", n, len(es), err, n+1)
	}
	if _, err := h.tail.Read(n-1, nil, 0); !errors.Is(err, tail.ErrFellOff) {
		t.Fatalf("the tail still holds commit %d, which its member read: %v", n, err)
	}
}
