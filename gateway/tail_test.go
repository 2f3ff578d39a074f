package gateway_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
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
	const n, step = 1200, 8 // commits of 4 KiB: the stalled socket fills within a few dozen
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
// A second run wakes the links once per interval (as a document with
// thousands of links does), and two more wake them in chunks of a few, as
// a document of more than FanoutChunk links does (decision 041).
func TestManyLinksGetEveryCommitOnceInOrder(t *testing.T) {
	t.Run("woken per append", func(t *testing.T) { testManyLinks(t, gateway.Config{FanoutMembers: -1}) })
	t.Run("woken per interval", func(t *testing.T) {
		testManyLinks(t, gateway.Config{FanoutMembers: 2, FanoutInterval: 5 * time.Millisecond})
	})
	t.Run("woken per append in chunks", func(t *testing.T) {
		testManyLinks(t, gateway.Config{FanoutMembers: -1, FanoutChunk: 5})
	})
	t.Run("woken per interval in chunks", func(t *testing.T) {
		testManyLinks(t, gateway.Config{FanoutMembers: 2, FanoutInterval: 5 * time.Millisecond, FanoutChunk: 5})
	})
}

func testManyLinks(t *testing.T, cfg gateway.Config) {
	ts := startGateway(t, cfg)
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

// Issue 18: a document with at least FanoutMembers links wakes them once
// per FanoutInterval, so a link that keeps up still gets the commits of
// each interval together: a pass per interval the writing took, and one
// for the interval it started in, each a frame plus at most one for what
// became durable while the link wrote; waking per append gives about a
// frame a commit.
// A document under FanoutMembers links waits in proportion: two links of
// four wait half the interval.
func TestManyLinksAreWokenOncePerInterval(t *testing.T) {
	t.Run("at FanoutMembers", func(t *testing.T) {
		testWokenPerInterval(t, gateway.Config{FanoutMembers: 2, FanoutInterval: 100 * time.Millisecond}, 100*time.Millisecond)
	})
	t.Run("in proportion below", func(t *testing.T) {
		testWokenPerInterval(t, gateway.Config{FanoutMembers: 4, FanoutInterval: 200 * time.Millisecond}, 100*time.Millisecond)
	})
}

func testWokenPerInterval(t *testing.T, cfg gateway.Config, interval time.Duration) {
	ts := startGateway(t, cfg)
	w := dial(t, ts.url, peer.Options{})
	d, err := w.Share(ctxT(t), "paced", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, ts.url)
	r.send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "paced", Want: true})
	if f := r.next(); f.Kind != frame.Open {
		t.Fatalf("got %v, want open", f.Kind)
	}
	if f := r.next(); f.Kind != frame.State {
		t.Fatalf("got %v, want the state", f.Kind)
	}
	// Each write returns once durable: an append apiece, so waking per
	// append would give a frame a commit.
	root, _ := d.Root()
	const total = 200
	start := time.Now()
	for i := range total {
		b, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root, Ref: commit.ObjectKey(keyOf(i)), Value: commit.IntValue(int64(i))}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.Write(ctxT(t), "paced", gateway.Origin{Kind: "backend", ID: "paced"}, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	frames := 0
	for got := 0; got < total; frames++ {
		f := r.next()
		if f.Kind != frame.Commits {
			t.Fatalf("got %v, want commits", f.Kind)
		}
		got += len(f.Commits)
	}
	if most := 2 * (int(took/interval) + 2); frames > most {
		t.Fatalf("%d commits written in %v came in %d frames, want at most %d", total, took, frames, most)
	}
	t.Logf("%d commits written in %v came in %d frames", total, took, frames)
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
// store carry none). One held until the tail has let its next commit go
// reads the store, then is fed from the tail again: still every cursor
// once, in order. The writer goes in step with the subscribers it waits
// for, so which source feeds which event does not depend on the host.
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
	const total, half, stallAt = 400, 200, 5
	type follower struct {
		seen  chan uint64 // every cursor, as it is seen
		paths chan bool   // whether it came with paths
		done  chan error
	}
	stall := make(chan struct{})
	follow := func(hold bool) *follower {
		f := &follower{seen: make(chan uint64, total), paths: make(chan bool, total), done: make(chan error, 1)}
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			end := fmt.Errorf("done")
			err := ts.Subscribe(ctx, "subs", 0, func(ev gateway.Event) error {
				f.seen <- ev.Cursor
				f.paths <- ev.Paths != nil
				if hold && ev.Cursor == stallAt {
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
			f.done <- err
		}()
		return f
	}
	// upTo waits until f has seen cursor n, checking each cursor comes once
	// and in order.
	next := map[*follower]uint64{}
	upTo := func(f *follower, n uint64) {
		t.Helper()
		for next[f] < n {
			var c uint64
			select {
			case c = <-f.seen:
			case err := <-f.done:
				f.done <- err // for the end of the test
				select {
				case c = <-f.seen: // seen before it ended
				default:
					t.Fatalf("the subscription ended at %d: %v", next[f], err)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no cursor after %d", next[f])
			}
			if c != next[f]+1 {
				t.Fatalf("cursor %d after %d", c, next[f])
			}
			next[f] = c
		}
	}
	live, held := follow(false), follow(true)
	// Both registered before the first write: the first to register
	// empties the tail at the document's cursor.
	eventually(t, "two subscribers", func() bool {
		for _, d := range ts.Documents(context.Background()) {
			if d.Name == "subs" {
				return d.Subscribers == 2
			}
		}
		return false
	})
	for i := range half {
		write(i)
		upTo(live, uint64(i+1))
	}
	close(stall) // the held one is at 5, far past the 16 commits the tail holds
	upTo(held, half)
	for i := half; i < total; i++ {
		write(i)
		upTo(live, uint64(i+1))
		upTo(held, uint64(i+1))
	}
	for _, f := range []*follower{live, held} {
		if err := <-f.done; err != nil {
			t.Fatal(err)
		}
	}
	for c := 1; c <= total; c++ {
		if !<-live.paths {
			t.Errorf("commit %d reached the subscriber in step from the store, not the tail", c)
		}
	}
	// The held one: the tail had let go of most of what followed 5 by the
	// time it was let go on, so some of 6 to 200 came from the store; it
	// had caught up before 201 was written, so 201 on came from the tail.
	stored := 0
	for c := 1; c <= total; c++ {
		p := <-held.paths
		if c > stallAt && c <= half && !p {
			stored++
		}
		if c > half && !p {
			t.Errorf("commit %d, written once the held subscriber had caught up, came from the store", c)
		}
	}
	if stored == 0 {
		t.Error("the held subscriber never read the store, though the tail had let its commits go")
	}
}

// A writer is not woken for its own commits, which it never gets back, yet
// it keeps its place: after writing far more than the tail holds, it still
// receives the next commit another peer makes.
func TestWriterKeepsItsPlacePastItsOwnCommits(t *testing.T) {
	ts := startGateway(t, gateway.Config{TailCommits: 16})
	da, db := sharedPair(t, ts.url, "own")
	// In runs the reader keeps up with, so that only the writer's own
	// place is under test.
	for i := range 200 {
		if _, err := set(da, key(0, i), commit.IntValue(int64(i))); err != nil {
			t.Fatal(err)
		}
		if i%8 == 7 {
			waitApplied(t, db, 8)
		}
	}
	if _, err := set(db, "fromb", text("x")); err != nil {
		t.Fatal(err)
	}
	if got := waitApplied(t, da, 1); got[0].Commit.Deltas[0].Ref.Key != "fromb" {
		t.Fatalf("the writer got %q, want b's commit", got[0].Commit.Deltas[0].Ref.Key)
	}
}
