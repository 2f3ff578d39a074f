package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/internal/soak"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// eventually waits for cond, checking every few milliseconds, up to 20 s.
// It waits on a condition, never for a fixed time.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(20 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A peer that stops reading is ended with slow-consumer, while the others'
// deliveries go on. The writer waits for the reading peer every 1 MiB, so
// that only the stalled one can reach the 2 MiB queue bound; the write
// timeout is long enough that a reading peer starved of CPU for a moment
// (the race detector on 2 busy cores) is never taken for a stalled one.
func TestSlowConsumerIsEnded(t *testing.T) {
	ts := startGateway(t, gateway.Config{MaxPendingBytes: 2 << 20, WriteTimeout: 2 * time.Second})
	w := dial(t, ts.url, peer.Options{})
	wd, err := w.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	fast := dial(t, ts.url, peer.Options{EventBuffer: 1 << 14})
	fd, err := fast.Join(ctxT(t), "doc")
	if err != nil {
		t.Fatal(err)
	}
	slow := dialStalled(t, ts.url, "doc")
	waitForLinks(t, ts.Server, "doc", 3)
	const n, step = 600, 32 // commits of 32 KiB: 1 MiB a step
	big := strings.Repeat("x", 32<<10)
	for i := 0; i < n; i += step {
		for j := i; j < min(i+step, n); j++ {
			if _, err := set(wd, key(0, j%10), commit.TextValue(big[:len(big)-j%7])); err != nil {
				t.Fatal(err)
			}
		}
		waitApplied(t, fd, min(step, n-i))
	}
	eventually(t, "slow-consumer", func() bool { return ts.Metrics().SlowConsumers.Load() == 1 })
	waitForLinks(t, ts.Server, "doc", 2)
	// Reading now, the slow peer finds its socket closed.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if _, _, err := slow.Read(ctx); err != nil {
			if ctx.Err() != nil {
				t.Fatal("the slow socket was never closed")
			}
			break
		}
	}
}

// dialStalled opens name on a raw socket that then never reads. A small
// receive buffer turns off the kernel's autotuning, so the socket fills
// after a few megabytes instead of tens.
func dialStalled(t *testing.T, url, name string) *websocket.Conn {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(4096)
		}
		return c, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	slow, _, err := websocket.Dial(ctxT(t), url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slow.CloseNow() })
	open, _ := frame.Encode(frame.Frame{Kind: frame.Open, Topic: 1, Name: name, Want: true})
	if err := slow.Write(ctxT(t), websocket.MessageBinary, open); err != nil {
		t.Fatal(err)
	}
	return slow
}

// flood commits n values of about 32 KiB (n = 600 is about 19 MiB, far past
// any socket buffer), keeping the writer's own socket moving.
func flood(t *testing.T, s *gateway.Server, d *peer.Doc, n int) {
	t.Helper()
	big := strings.Repeat("x", 32<<10)
	for i := range n {
		if _, err := set(d, key(0, i%10), commit.TextValue(big[:len(big)-i%7])); err != nil {
			t.Fatal(err)
		}
		if i%50 == 0 {
			waitCursor(t, s, d.Name(), uint64(i+1))
		}
	}
}

// A peer that stops reading while what waits for it stays far under
// MaxPendingBytes is ended by WriteTimeout alone: the write that cannot
// finish is given up, and the link ends with slow-consumer.
func TestWriteTimeoutEndsAStalledSocket(t *testing.T) {
	ts := startGateway(t, gateway.Config{MaxPendingBytes: 256 << 20, WriteTimeout: 300 * time.Millisecond})
	w := dial(t, ts.url, peer.Options{})
	wd, err := w.Share(ctxT(t), "doc", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	dialStalled(t, ts.url, "doc")
	waitForLinks(t, ts.Server, "doc", 2)
	flood(t, ts.Server, wd, 600)
	eventually(t, "slow-consumer", func() bool { return ts.Metrics().SlowConsumers.Load() == 1 })
	waitForLinks(t, ts.Server, "doc", 1)
}

func waitForLinks(t testing.TB, s *gateway.Server, name string, n int) {
	t.Helper()
	eventually(t, "links", func() bool {
		for _, d := range s.Documents(context.Background()) {
			if d.Name == name {
				return d.Links == n
			}
		}
		return false
	})
}

// A store that fails writes makes the gateway refuse new commits with
// store-unavailable and keep what it stored; writes resume once it recovers.
func TestFailingStoreRefusesAndRecovers(t *testing.T) {
	var failing atomic.Bool
	st, err := store.Open(t.TempDir(), store.Options{Fault: func() error {
		if failing.Load() {
			return errors.New("injected: no space left on device")
		}
		return nil
	}, ProbeInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts := startGateway(t, gateway.Config{Store: st})
	da, db := sharedPair(t, ts.url, "doc")
	if _, err := set(da, "before", text("1")); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, db, 1)
	// Fail and recover, once in CI and again and again in a soak.
	start := time.Now()
	for round := 0; soak.Until(start, round, 1); round++ {
		failing.Store(true)
		seq, _ := set(da, fmt.Sprintf("during-%d", round), text("2"))
		r := nextEvent[peer.Refused](t, da)
		if r.Seq != seq || r.Reasons[0].Code != string(gateway.ReasonStoreUnavailable) {
			t.Fatalf("round %d: refusal %+v, want store-unavailable for seq %d", round, r, seq)
		}
		if st.Healthy(context.Background()) == nil {
			t.Fatal("the store says it is healthy while failing")
		}
		failing.Store(false)
		if err := st.Healthy(context.Background()); err != nil {
			t.Fatalf("round %d: the store did not recover: %v", round, err)
		}
		// a still holds its refused write (peers keep them); b never saw it.
		after := fmt.Sprintf("after-%d", round)
		if _, err := set(da, after, text("3")); err != nil {
			t.Fatal(err)
		}
		got := waitApplied(t, db, 1)
		if k := got[0].Commit.Deltas[0].Ref.Key; k != after {
			t.Fatalf("round %d: b got %q, want %s", round, k, after)
		}
		if _, _, cursor, _ := ts.State(ctxT(t), "doc"); cursor != uint64(round+2) {
			t.Fatalf("round %d: cursor %d, want %d", round, cursor, round+2)
		}
	}
}

// heldAuthority answers no verdict until released.
type heldAuthority struct{ release chan struct{} }

func (a heldAuthority) Judge(_ *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	go func() {
		<-a.release
		reply(gateway.Verdict{})
	}()
}

func (heldAuthority) MayOpen(_ gateway.OpenRequest, reply func(error)) { reply(nil) }

// Issue 16: while the gateway holds a socket's reading back for verdicts
// (MaxFramesInFlight reached), the peer's pongs wait behind its data; the
// ping loop does not take that for a dead peer. The link outlives many ping
// timeouts and carries on once the verdicts come.
func TestHeldReadingIsNotAMissedPong(t *testing.T) {
	auth := heldAuthority{release: make(chan struct{})}
	const ping = 30 * time.Millisecond
	ts := startGateway(t, gateway.Config{Authority: auth, MaxFramesInFlight: 1, PingInterval: ping, PingTimeout: ping, JudgeTimeout: time.Minute})
	ws, _, err := websocket.Dial(ctxT(t), ts.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	fc := countFrames(t, ws) // reads all along, so the client answers pings
	root := rootOf()
	send := func(f frame.Frame) {
		b, _ := frame.Encode(f)
		if err := ws.Write(ctxT(t), websocket.MessageBinary, b); err != nil {
			t.Fatal(err)
		}
	}
	send(frame.Frame{Kind: frame.Open, Topic: 1, Name: "doc", Root: root})
	fc.wait(t, "the gateway's want", func(k map[frame.Kind]int, _ map[string]int) bool { return k[frame.Open] == 1 })
	send(frame.Frame{Kind: frame.State, Topic: 1})
	for i := 1; i <= 3; i++ { // the second waits for the first's verdict, the third is not read
		c, err := commit.Encode(commit.Commit{Deltas: []commit.Delta{{Op: commit.Add, ID: root.ID, Ref: commit.ObjectKey(fmt.Sprint(i)), Value: commit.IntValue(int64(i))}}})
		if err != nil {
			t.Fatal(err)
		}
		send(frame.Frame{Kind: frame.Commits, Topic: 1, First: uint64(i), Commits: [][]byte{c}})
	}
	// Ten ping timeouts pass with the reading held: the time under test.
	time.Sleep(10 * ping)
	close(auth.release)
	waitCursor(t, ts.Server, "doc", 3)
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.done {
		t.Fatalf("the link ended while its reading was held: %v", fc.err)
	}
}
