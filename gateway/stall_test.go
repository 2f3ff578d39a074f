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
	// stallPending and stallWriteTimeout leave a watcher that the shared
	// host starves for a moment (the race detector, other tests) room to
	// catch up: about 0.8 s of commits, and 5 s for one write. The stalled
	// peer passes both, whatever the host's speed.
	stallPending      = 1 << 20
	stallWriteTimeout = 5 * time.Second
	// stallQueueSlack is what a link's queue may show past MaxPendingBytes:
	// the one message that tipped it over, counted before it is refused.
	stallQueueSlack = stallValue + 4<<10
	// stallHeapSlack is what the heap may grow by, beyond MaxPendingBytes,
	// while a peer is stalled: socket and event buffers in flight.
	stallHeapSlack = 8 << 20
)

// One peer that stops reading among many, in rounds of an unloaded phase and
// a stalled one. What holds whatever the host's speed: each stalled peer is
// ended with slow-consumer and its socket cut; every other peer applies every
// commit exactly once and in order; the gateway never queues more than
// MaxPendingBytes toward a link, and its heap stays within that of the
// unloaded phase. How much the stalled peer slows the others is a
// wall-clock figure: BenchmarkStalledPeerLatency measures it.
func TestStalledPeerDoesNotSlowOthers(t *testing.T) {
	start := time.Now()
	r := runStall(t, func(round int) bool { return soak.Until(start, round, 3) })
	t.Logf("%d rounds, %d commits of %d B to %d watchers; largest link queue %d B", r.rounds, r.sent, stallValue, stallWatchers, r.maxQueue)
	for i := range r.rounds {
		un, st := percentiles(r.lat[stallPhase{i, false}]), percentiles(r.lat[stallPhase{i, true}])
		t.Logf("round %d: unloaded p50 %v p99 %v; stalled p50 %v p99 %v", i, un[0], un[1], st[0], st[1])
	}
	if r.maxQueue > stallPending+stallQueueSlack {
		t.Errorf("a link's queue reached %d bytes, over MaxPendingBytes %d (+%d)", r.maxQueue, stallPending, stallQueueSlack)
	}
	if r.maxQueue == 0 {
		t.Error("no link's queue was ever seen non-empty: the stalled peer never held anything back")
	}
	// The heap, by the median over rounds, so one GC's timing cannot decide.
	unHeap, stHeap := median(r.busy), median(r.peak)
	t.Logf("heap: %d MiB unloaded, %d MiB stalled (medians)", unHeap>>20, stHeap>>20)
	if stHeap > unHeap+stallPending+stallHeapSlack {
		t.Errorf("the heap is %d bytes with a stalled peer and %d without (medians of rounds): more than MaxPendingBytes and %d apart", stHeap, unHeap, stallHeapSlack)
	}
}

// BenchmarkStalledPeerLatency reports the others' p99 commit-to-delivery
// latency in unloaded and stalled phases (one round of each per iteration),
// and their ratio. Run alone: on a shared host the ratio is noise.
//
//	go test -run '^$' -bench StalledPeer -benchtime 5x ./gateway/
func BenchmarkStalledPeerLatency(b *testing.B) {
	n := 0
	r := runStall(b, func(round int) bool { n = round; return round < b.N })
	var un, st []time.Duration
	for i := range n {
		un = append(un, percentiles(r.lat[stallPhase{i, false}])[1])
		st = append(st, percentiles(r.lat[stallPhase{i, true}])[1])
	}
	u, s := median(un), median(st)
	b.ReportMetric(float64(u.Microseconds())/1000, "unloaded-p99-ms")
	b.ReportMetric(float64(s.Microseconds())/1000, "stalled-p99-ms")
	if u > 0 {
		b.ReportMetric(float64(s)/float64(u), "stalled/unloaded")
	}
}

type stallPhase struct {
	round   int
	stalled bool // a peer was stalled when the commit was sent
}

type stallResult struct {
	rounds, sent int
	lat          map[stallPhase][]time.Duration
	busy, peak   []uint64 // mid-phase heaps, unloaded and stalled, by round
	maxQueue     int      // the most bytes seen queued toward one link
}

// runStall runs rounds while more(round) and checks, as it goes, what must
// hold whatever the host's speed: deliveries complete and in order, one
// slow-consumer per stalled phase, the stalled socket cut.
func runStall(tb testing.TB, more func(round int) bool) stallResult {
	// On disk, so that the heap measures the gateway and not the commits
	// a memory store keeps.
	bolt, err := store.Open(tb.TempDir(), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { bolt.Close() })
	ts := startGateway(tb, gateway.Config{Store: bolt, MaxPendingBytes: stallPending, WriteTimeout: stallWriteTimeout})
	w := dial(tb, ts.url, peer.Options{})
	wd, err := w.Share(ctxT(tb), "stall", newDoc())
	if err != nil {
		tb.Fatal(err)
	}
	res := stallResult{lat: map[stallPhase][]time.Duration{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var docs []*peer.Doc
	for range stallWatchers {
		p := dial(tb, ts.url, peer.Options{EventBuffer: 1 << 14, MaxMessageBytes: 4 << 20})
		d, err := p.Join(ctxT(tb), "stall")
		if err != nil {
			tb.Fatal(err)
		}
		docs = append(docs, d)
	}
	counts := make([]int, len(docs))
	var order []string // first out-of-order delivery per watcher
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
				st := parseStamp(a.Commit.Deltas[0].Value.Str)
				mu.Lock()
				ph := stallPhase{st.round, st.stalled}
				res.lat[ph] = append(res.lat[ph], now.Sub(st.sent))
				if st.index != counts[i] && len(order) < 10 {
					order = append(order, fmt.Sprintf("watcher %d applied commit %d where %d was next", i, st.index, counts[i]))
				}
				counts[i]++
				mu.Unlock()
			}
		}()
	}
	pad := strings.Repeat("x", stallValue)
	send := func(stalled bool) {
		v := fmt.Sprintf("%d %t %d %d %s", res.rounds, stalled, res.sent, time.Now().UnixNano(), pad)
		if _, err := set(wd, "k"+strconv.Itoa(res.sent%8), commit.TextValue(v)); err != nil {
			tb.Fatal(err)
		}
		res.sent++
	}
	sampleQueues := func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for _, l := range ts.Status(ctx).Links {
			res.maxQueue = max(res.maxQueue, l.QueueBytes)
		}
	}
	tick := time.NewTicker(stallEvery)
	defer tick.Stop()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for ; more(res.rounds); res.rounds++ {
		for i := range stallPerPhase {
			<-tick.C
			send(false)
			if i == stallPerPhase/2 {
				res.busy = append(res.busy, heap())
			}
		}
		waitDelivered(tb, &mu, counts, res.sent)
		ended := ts.Metrics().SlowConsumers.Load()
		slow := stallPeer(tb, ts.url)
		waitForLinks(tb, ts.Server, "stall", stallWatchers+2)
		for i := 0; i < stallPerPhase || ts.Metrics().SlowConsumers.Load() == ended; i++ {
			<-tick.C
			send(true)
			if i%10 == 0 {
				sampleQueues()
			}
			if i == stallPerPhase/2 {
				res.peak = append(res.peak, heap())
			}
			if i > 50*stallPerPhase {
				tb.Fatal("the stalled peer was never ended")
			}
		}
		if n := ts.Metrics().SlowConsumers.Load(); n != ended+1 {
			tb.Fatalf("round %d: %d links ended as slow consumers, want only the stalled one", res.rounds, n-ended)
		}
		waitForLinks(tb, ts.Server, "stall", stallWatchers+1)
		waitCut(tb, ts, stallWatchers+1)
		slow.CloseNow()
		waitDelivered(tb, &mu, counts, res.sent)
	}
	w.Close()
	for _, d := range docs {
		d.Leave()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, o := range order {
		tb.Error(o)
	}
	for i, c := range counts {
		if c != res.sent {
			tb.Errorf("watcher %d applied %d commits, want exactly %d", i, c, res.sent)
		}
	}
	return res
}

// waitCut waits until the gateway has closed the stalled peer's
// connection: it no longer lists it. (Reading the peer's end would not tell:
// the kernel still trickles megabytes it had buffered into the socket's
// 4 KiB window.)
func waitCut(tb testing.TB, ts *testServer, links int) {
	tb.Helper()
	eventually(tb, "the stalled connection closed", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return len(ts.Status(ctx).Links) == links
	})
}

// stallPeer opens the document on a socket that never reads. Its small
// receive buffer turns off autotuning, so the socket fills after a few
// hundred kilobytes and the gateway has to queue for it.
func stallPeer(tb testing.TB, url string) *websocket.Conn {
	tb.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetReadBuffer(4096)
		}
		return c, err
	}}
	tb.Cleanup(tr.CloseIdleConnections)
	c, _, err := websocket.Dial(ctxT(tb), url, &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.CloseNow() })
	open, _ := frame.Encode(frame.Frame{Kind: frame.Open, Topic: 1, Name: "stall", Want: true})
	if err := c.Write(ctxT(tb), websocket.MessageBinary, open); err != nil {
		tb.Fatal(err)
	}
	return c
}

// waitDelivered waits until every watcher has applied n commits.
func waitDelivered(tb testing.TB, mu *sync.Mutex, counts []int, n int) {
	tb.Helper()
	eventually(tb, "deliveries", func() bool {
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

type stamp struct {
	round   int
	stalled bool
	index   int
	sent    time.Time
}

func parseStamp(v string) stamp {
	f := strings.SplitN(v, " ", 5)
	round, _ := strconv.Atoi(f[0])
	index, _ := strconv.Atoi(f[2])
	ns, _ := strconv.ParseInt(f[3], 10, 64)
	return stamp{round, f[1] == "true", index, time.Unix(0, ns)}
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
	if len(d) == 0 {
		var zero T
		return zero
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
