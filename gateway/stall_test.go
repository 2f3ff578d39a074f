package gateway_test

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
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

const (
	stallWatchers = 10
	stallValue    = 8 << 10 // bytes of each commit's value: a stalled socket fills in seconds
	stallEvery    = 6 * time.Millisecond
	stallPerPhase = 200 // commits in an unloaded phase, and at least in a stalled one
	stallPending  = 256 << 10
	// stallFloor is added to the bound because on 2 shared cores a p99 of
	// a few milliseconds moves by about that much from scheduling alone.
	stallFloor = time.Millisecond
	// stallHeapSlack is what the heap may grow by, beyond MaxPendingBytes,
	// while a peer is stalled: socket and event buffers in flight.
	stallHeapSlack = 8 << 20
)

// One peer that stops reading among many: it is ended with slow-consumer,
// the others' p99 commit-to-delivery latency stays within twice its value
// without the stalled peer, and the gateway's heap stays bounded.
// Unloaded and stalled phases alternate, so that noise falls on both.
func TestStalledPeerDoesNotSlowOthers(t *testing.T) {
	// On disk, so that the heap measures the gateway and not the commits
	// a memory store keeps.
	bolt, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bolt.Close()
	ts := startGateway(t, gateway.Config{Store: bolt, MaxPendingBytes: stallPending, WriteTimeout: 500 * time.Millisecond})
	w := dial(t, ts.url, peer.Options{})
	wd, err := w.Share(ctxT(t), "stall", newDoc())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	type phase struct {
		round   int
		stalled bool // a peer was stalled when the commit was sent
	}
	lat := map[phase][]time.Duration{}
	var wg sync.WaitGroup
	var docs []*peer.Doc
	for range stallWatchers {
		p := dial(t, ts.url, peer.Options{EventBuffer: 1 << 14, MaxMessageBytes: 4 << 20})
		d, err := p.Join(ctxT(t), "stall")
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d)
	}
	counts := make([]int, len(docs))
	for i, d := range docs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range d.Events() {
				a, ok := ev.(peer.Applied)
				if !ok {
					continue
				}
				now := time.Now()
				round, stalled, sent := parseStamp(a.Commit.Deltas[0].Value.Str)
				mu.Lock()
				ph := phase{round, stalled}
				lat[ph] = append(lat[ph], now.Sub(sent))
				counts[i]++
				mu.Unlock()
			}
		}()
	}
	pad := strings.Repeat("x", stallValue)
	sent := 0
	rounds := 0
	send := func(stalled bool) {
		v := fmt.Sprintf("%d %t %d %s", rounds, stalled, time.Now().UnixNano(), pad)
		if _, err := set(wd, "k"+strconv.Itoa(sent%8), commit.TextValue(v)); err != nil {
			t.Fatal(err)
		}
		sent++
	}
	tick := time.NewTicker(stallEvery)
	defer tick.Stop()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	var busy, peak []uint64 // mid-phase heaps, unloaded and stalled, by round
	start := time.Now()
	for ; soak.Until(start, rounds, 5); rounds++ {
		for i := range stallPerPhase {
			<-tick.C
			send(false)
			if i == stallPerPhase/2 {
				busy = append(busy, heap())
			}
		}
		waitDelivered(t, &mu, counts, sent)
		ended := ts.Metrics().SlowConsumers.Load()
		slow := stallPeer(t, ts.url)
		waitForLinks(t, ts.Server, "stall", stallWatchers+2)
		for i := 0; i < stallPerPhase || ts.Metrics().SlowConsumers.Load() == ended; i++ {
			<-tick.C
			send(true)
			if i == stallPerPhase/2 {
				peak = append(peak, heap())
			}
			if i > 50*stallPerPhase {
				t.Fatal("the stalled peer was never ended")
			}
		}
		slow.CloseNow()
		waitDelivered(t, &mu, counts, sent)
	}
	if n := ts.Metrics().SlowConsumers.Load(); n != int64(rounds) {
		t.Fatalf("%d slow consumers ended, want %d (one per stalled phase)", n, rounds)
	}
	waitForLinks(t, ts.Server, "stall", stallWatchers+1)
	after := heap()
	w.Close()
	for _, d := range docs {
		d.Leave()
	}
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	// Each round's p99 of each kind, then the median over five rounds: a
	// stalled peer that slowed the others would do so in every round, while
	// a hiccup of the shared host falls in one or two (with three rounds, CI
	// saw two hiccups land in stalled phases while other packages' tests
	// shared its 2 cores).
	var unP99, stP99 []time.Duration
	t.Logf("%d rounds, %d commits of %d B to %d watchers", rounds, sent, stallValue, stallWatchers)
	for r := range rounds {
		un, st := percentiles(lat[phase{r, false}]), percentiles(lat[phase{r, true}])
		t.Logf("round %d: unloaded p50 %v p99 %v max %v; stalled p50 %v p99 %v max %v", r, un[0], un[1], un[2], st[0], st[1], st[2])
		unP99, stP99 = append(unP99, un[1]), append(stP99, st[1])
	}
	// The heap, too, by the median over rounds.
	unHeap, stHeap := median(busy), median(peak)
	t.Logf("heap: %d MiB at rest, %d MiB unloaded, %d MiB stalled, %d MiB after (medians)", base>>20, unHeap>>20, stHeap>>20, after>>20)
	un, st := median(unP99), median(stP99)
	if bound := 2*un + stallFloor; st > bound {
		t.Errorf("others' p99 with a stalled peer is %v (median of rounds), over twice the unloaded %v (+%v)", st, un, stallFloor)
	}
	if stHeap > unHeap+stallPending+stallHeapSlack {
		t.Errorf("the heap is %d bytes with a stalled peer and %d without (medians of rounds): more than MaxPendingBytes and %d apart", stHeap, unHeap, stallHeapSlack)
	}
}

// stallPeer opens the document on a socket that never reads. Its small
// receive buffer turns off autotuning, so the socket fills after a few
// hundred kilobytes and the gateway has to queue for it.
func stallPeer(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(4096)
		}
		return c, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	c, _, err := websocket.Dial(ctxT(t), url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	open, _ := frame.Encode(frame.Frame{Kind: frame.Open, Topic: 1, Name: "stall", Want: true})
	if err := c.Write(ctxT(t), websocket.MessageBinary, open); err != nil {
		t.Fatal(err)
	}
	return c
}

// waitDelivered waits until every watcher has applied n commits.
func waitDelivered(t *testing.T, mu *sync.Mutex, counts []int, n int) {
	t.Helper()
	eventually(t, "deliveries", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range counts {
			if c < n {
				return false
			}
		}
		return true
	})
}

func parseStamp(v string) (int, bool, time.Time) {
	f := strings.SplitN(v, " ", 4)
	round, _ := strconv.Atoi(f[0])
	ns, _ := strconv.ParseInt(f[2], 10, 64)
	return round, f[1] == "true", time.Unix(0, ns)
}

// percentiles is p50, p99 and max.
func percentiles(d []time.Duration) [3]time.Duration {
	if len(d) == 0 {
		return [3]time.Duration{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return [3]time.Duration{s[len(s)/2], s[len(s)*99/100], s[len(s)-1]}
}

func median[T cmp.Ordered](d []T) T {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
