package gateway_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Issue 18: a link that fell behind takes everything from its cursor to
// the tail's head at once, so its frames carry many commits each. The
// reader here stops reading while 2,000 commits of 4 KiB (twice what the
// sockets buffer) are made durable, then reads: every commit arrives once,
// in order, and those that waited in the tail in frames of hundreds.
func TestFarBehindLinkGetsManyCommitsPerFrame(t *testing.T) {
	ts := startGateway(t, gateway.Config{MaxPendingBytes: 32 << 20})
	w := dial(t, ts.url, peer.Options{})
	d, err := w.Share(ctxT(t), "behind", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	// A fixed receive buffer (no autotuning to tens of MiB), large enough
	// to read at loopback speed.
	r := dialBuffered(t, ts.url, 256<<10)
	r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "behind", Want: true})
	if f := r.next(); f.Kind != frame.Open {
		t.Fatalf("got %v, want open", f.Kind)
	}
	const total = 2000
	for i := range total {
		if _, err := set(d, key(0, i%10), numbered(i, 4<<10)); err != nil {
			t.Fatal(err)
		}
	}
	waitCursor(t, ts.Server, "behind", total)
	if f := r.next(); f.Kind != frame.State {
		t.Fatalf("got %v, want the state first", f.Kind)
	}
	frames, most, seq := 0, 0, uint64(1)
	for got := 0; got < total; {
		f := r.next()
		if f.Kind != frame.Commits || f.First != seq {
			t.Fatalf("got %v first %d, want commits from %d", f.Kind, f.First, seq)
		}
		for _, b := range f.Commits {
			c, err := commit.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if i := numberOf(c); i != got {
				t.Fatalf("commit %d where %d was due", i, got)
			}
			got++
		}
		seq += uint64(len(f.Commits))
		frames++
		most = max(most, len(f.Commits))
	}
	t.Logf("%d commits in %d frames, at most %d in one", total, frames, most)
	// What the sockets took before the reader's filled went one or a few
	// commits a frame; everything after waited in the tail.
	if most < 100 {
		t.Errorf("%d commits came in %d frames, at most %d in one: a link behind does not batch", total, frames, most)
	}
}

// A link whose cursor falls off its document's tail is ended with
// slow-consumer; a reader that keeps up, on the same document, gets every
// commit once and in order. The tail here holds 64 commits, and the bound
// in bytes is far away, so it is the fall that ends the stalled link.
func TestFallingOffTheTailIsSlowConsumer(t *testing.T) {
	ts := startGateway(t, gateway.Config{TailCommits: 64, MaxPendingBytes: 256 << 20})
	w := dial(t, ts.url, peer.Options{})
	wd, err := w.Share(ctxT(t), "fall", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	fast := dial(t, ts.url, peer.Options{EventBuffer: 1 << 14})
	fd, err := fast.Join(ctxT(t), "fall")
	if err != nil {
		t.Fatal(err)
	}
	dialStalled(t, ts.url, "fall")
	waitForLinks(t, ts.Server, "fall", 3)
	const n, step = 1200, 16 // commits of 4 KiB: the stalled socket fills within a few dozen
	for i := 0; i < n; i += step {
		for j := i; j < min(i+step, n); j++ {
			if _, err := set(wd, key(0, j%10), numbered(j, 4<<10)); err != nil {
				t.Fatal(err)
			}
		}
		for k, a := range waitApplied(t, fd, min(step, n-i)) {
			if got := numberOf(a.Commit); got != i+k {
				t.Fatalf("the reader got commit %d where %d was due", got, i+k)
			}
		}
	}
	eventually(t, "slow-consumer", func() bool { return ts.Metrics().SlowConsumers.Load() == 1 })
	waitForLinks(t, ts.Server, "fall", 2)
	if fd.Err() != nil {
		t.Fatalf("the reader that kept up ended: %v", fd.Err())
	}
}

// Many links, some there from the start and some joining while a writer
// writes as fast as it can: each gets its state first, then every commit
// after it exactly once, in order.
func TestManyLinksGetEveryCommitOnceInOrder(t *testing.T) {
	ts := startGateway(t, gateway.Config{})
	const total, early, late = 2000, 24, 24
	w := dial(t, ts.url, peer.Options{})
	d, err := w.Share(ctxT(t), "many", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	var readers []*rawPeer
	var topics []uint64
	join := func() {
		r := dialRaw(t, ts.url)
		r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "many", Want: true})
		f := r.next()
		if f.Kind != frame.Open {
			t.Fatalf("got %v (%s), want open", f.Kind, f.Reason)
		}
		readers, topics = append(readers, r), append(topics, f.Topic)
	}
	for range early {
		join()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range total {
			if _, err := set(d, keyOf(i), commit.IntValue(int64(i))); err != nil {
				t.Errorf("write %d: %v", i, err)
				return
			}
		}
	}()
	for range late {
		join()
	}
	wg.Wait()
	// Each is read whole after the writing: what it was owed waited in
	// its socket and the document's tail meanwhile.
	for i, r := range readers {
		checkStateThenCommits(t, r, topics[i], total, fmt.Sprintf("reader %d", i))
	}
}

// numbered is a text value of about size bytes that starts with i: the
// commits that carry it replace a few keys, so the document stays small.
func numbered(i, size int) commit.Value {
	return commit.TextValue(fmt.Sprintf("%08d", i) + strings.Repeat("x", size))
}

// numberOf is the number a commit's numbered value starts with, or -1.
func numberOf(c commit.Commit) int {
	if len(c.Deltas) != 1 {
		return -1
	}
	var i int
	if _, err := fmt.Sscanf(c.Deltas[0].Value.Str[:min(8, len(c.Deltas[0].Value.Str))], "%08d", &i); err != nil {
		return -1
	}
	return i
}

// dialBuffered is dialRaw with a receive buffer of size bytes, which turns
// off the kernel's autotuning.
func dialBuffered(t *testing.T, url string, size int) *rawPeer {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			err = c.(*net.TCPConn).SetReadBuffer(size)
		}
		return c, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	ws, _, err := websocket.Dial(ctxT(t), url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(16 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &rawPeer{t: t, ws: ws}
}

// A subscriber that keeps up is fed from the tail: every cursor once, in
// order, each with the paths computed at apply (commits read back from the
// store carry none). One that stalls until the tail has let its next
// commit go resumes from the store, then is fed live again: still every
// cursor once, in order.
func TestSubscribersReadTheTail(t *testing.T) {
	ts := startGateway(t, gateway.Config{TailCommits: 16})
	// A backend writes (no link is a member): each write returns once
	// durable.
	root := frame.Root{ID: commit.NewID(), Kind: commit.Object}
	if err := ts.Create(ctxT(t), "subs", root); err != nil {
		t.Fatal(err)
	}
	write := func(i int) {
		op := commit.Replace
		if i < 10 {
			op = commit.Add
		}
		b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: op, ID: root.ID, Ref: commit.ObjectKey(key(0, i%10)), Value: commit.IntValue(int64(i))}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.Write(ctxT(t), "subs", gateway.Origin{Kind: "backend", ID: "test"}, b, nil); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	const total, stallAt = 400, 5
	type seen struct {
		cursors  []uint64
		live     int // events with paths
		lastLive bool
		at       atomic.Uint64 // the last cursor seen, for the writer
	}
	follow := func(stall <-chan struct{}, res *seen, done chan<- error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		end := fmt.Errorf("done")
		err := ts.Subscribe(ctx, "subs", 0, func(ev gateway.Event) error {
			res.cursors = append(res.cursors, ev.Cursor)
			res.at.Store(ev.Cursor)
			res.lastLive = ev.Paths != nil
			if res.lastLive {
				res.live++
			}
			if ev.Cursor == stallAt && stall != nil {
				<-stall
			}
			if ev.Cursor == total {
				return end
			}
			return nil
		})
		if err == end {
			err = nil
		}
		done <- err
	}
	var live, stalled seen
	liveDone, stalledDone := make(chan error, 1), make(chan error, 1)
	stall := make(chan struct{})
	go follow(nil, &live, liveDone)
	go follow(stall, &stalled, stalledDone)
	for i := range total {
		if i == total-1 {
			// The last commit comes once both have caught up (on a busy
			// host even the live one may fall off the 16 commits), so it
			// must come from the tail whatever the host's speed.
			eventually(t, "the subscribers to catch up", func() bool { return stalled.at.Load() == total-1 && live.at.Load() == total-1 })
		}
		write(i)
		if i == total/2 {
			close(stall) // far past the 16 commits the tail holds
		}
	}
	for _, c := range []struct {
		name string
		done chan error
		res  *seen
	}{{"live", liveDone, &live}, {"stalled", stalledDone, &stalled}} {
		if err := <-c.done; err != nil {
			t.Fatalf("%s subscriber: %v", c.name, err)
		}
		for i, cur := range c.res.cursors {
			if cur != uint64(i+1) {
				t.Fatalf("%s subscriber: event %d is cursor %d", c.name, i, cur)
			}
		}
		if len(c.res.cursors) != total {
			t.Fatalf("%s subscriber: %d events, want %d", c.name, len(c.res.cursors), total)
		}
		t.Logf("%s subscriber: %d of %d events fed from the tail", c.name, c.res.live, total)
	}
	if live.live == 0 || !live.lastLive {
		t.Error("the subscriber that kept up was never fed from the tail")
	}
	if stalled.live == total {
		t.Error("the stalled subscriber never read the store, though the tail let its commits go")
	}
	if !stalled.lastLive {
		t.Error("the stalled subscriber was not fed from the tail again once caught up")
	}
}
