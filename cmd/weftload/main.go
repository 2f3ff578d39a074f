package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

type options struct {
	url         string
	inprocess   bool
	allowRemote bool
	peers       int
	docs        int
	writers     int
	rate        float64
	duration    time.Duration
	size        int
	jsonOut     bool
}

// result is what a run measured.
type result struct {
	Peers          int              `json:"peers"`
	Documents      int              `json:"documents"`
	Writers        int              `json:"writers"`
	Seconds        float64          `json:"seconds"`
	Sent           int64            `json:"commits_sent"`
	Refused        int64            `json:"commits_refused"`
	Delivered      int64            `json:"deliveries"`
	DeliveriesPerS float64          `json:"deliveries_per_second"`
	ConnectPerS    float64          `json:"connections_per_second"`
	P50ms          float64          `json:"latency_p50_ms"`
	P99ms          float64          `json:"latency_p99_ms"`
	P999ms         float64          `json:"latency_p999_ms"`
	MaxMs          float64          `json:"latency_max_ms"`
	HeapPerLinkB   float64          `json:"heap_per_link_bytes,omitempty"`
	Errors         map[string]int64 `json:"errors"`
}

func main() {
	var o options
	flag.StringVar(&o.url, "url", "ws://127.0.0.1:8080/", "the gateway to load (loopback unless -allow-remote)")
	flag.BoolVar(&o.inprocess, "inprocess", false, "start a gateway in this process on 127.0.0.1 (measures heap per link)")
	flag.BoolVar(&o.allowRemote, "allow-remote", false, "allow a non-loopback -url")
	flag.IntVar(&o.peers, "peers", 100, "peers (one WebSocket each)")
	flag.IntVar(&o.docs, "docs", 10, "documents, spread over the peers")
	flag.IntVar(&o.writers, "writers", 1, "writers per document; the other peers watch")
	flag.Float64Var(&o.rate, "rate", 100, "commits per second per writer (0: as fast as possible)")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long to write")
	flag.IntVar(&o.size, "size", 16, "bytes of text in each commit besides its timestamp")
	flag.BoolVar(&o.jsonOut, "json", false, "print the result as JSON")
	flag.Parse()
	res, err := run(context.Background(), o, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weftload:", err)
		os.Exit(1)
	}
	if o.jsonOut {
		json.NewEncoder(os.Stdout).Encode(res)
		return
	}
	printTable(res)
}

func run(ctx context.Context, o options, progress *os.File) (*result, error) {
	if o.peers < 1 || o.docs < 1 || o.writers < 1 || o.writers*o.docs > o.peers || o.duration <= 0 {
		return nil, fmt.Errorf("need peers >= docs*writers >= 1 and a positive duration")
	}
	raiseFileLimit()
	var gw *gateway.Server
	if o.inprocess {
		s, url, stop, err := startInProcess()
		if err != nil {
			return nil, err
		}
		defer stop()
		gw, o.url = s, url
	} else if err := loopbackOnly(o.url, o.allowRemote); err != nil {
		return nil, err
	}
	var before runtime.MemStats
	if gw != nil {
		runtime.GC()
		runtime.ReadMemStats(&before)
	}
	st := &stats{errors: map[string]int64{}}
	start := time.Now()
	peers := make([]*peer.Peer, o.peers)
	docs := make([][]*peer.Doc, o.docs) // per document, writers first
	for i := range peers {
		p, err := peer.Dial(ctx, o.url, peer.Options{EventBuffer: 4096})
		if err != nil {
			return nil, fmt.Errorf("peer %d: %w", i, err)
		}
		defer p.Close()
		peers[i] = p
		k := i % o.docs
		name := fmt.Sprintf("load:%d", k)
		var d *peer.Doc
		if i < o.docs {
			d, err = p.Share(ctx, name, document.New(commit.NewID(), commit.Object, document.Limits{}))
		} else {
			d, err = p.Join(ctx, name)
		}
		if err != nil {
			return nil, fmt.Errorf("peer %d on %s: %w", i, name, err)
		}
		docs[k] = append(docs[k], d)
	}
	connectSecs := time.Since(start).Seconds()
	res := &result{Peers: o.peers, Documents: o.docs, Writers: o.writers, ConnectPerS: float64(o.peers) / connectSecs}
	if gw != nil {
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		// Both ends live in this process: this counts the peers' side too,
		// so it is an upper bound on the gateway's heap per link.
		res.HeapPerLinkB = float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / float64(o.peers)
	}
	wctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	// Watchers outlive the writers until every commit sent has reached
	// every watcher, or a grace period passes.
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var writers, watchers sync.WaitGroup
	sentBy := make([]atomic.Int64, o.docs)
	for k, ds := range docs {
		for j, d := range ds {
			if j < o.writers {
				writers.Add(1)
				go func() { defer writers.Done(); st.write(wctx, d, o, j, &sentBy[k]) }()
			} else {
				watchers.Add(1)
				go func() { defer watchers.Done(); st.watch(watchCtx, d) }()
			}
		}
	}
	go showProgress(wctx, progress, st, time.Now())
	t0 := time.Now()
	writers.Wait()
	res.Seconds = time.Since(t0).Seconds()
	// Every commit reaches every other peer on its document.
	var want int64
	for k, ds := range docs {
		want += sentBy[k].Load() * int64(len(ds)-1)
	}
	grace := time.Now().Add(10 * time.Second)
	for st.delivered.Load() < want && time.Now().Before(grace) {
		time.Sleep(10 * time.Millisecond)
	}
	if missing := want - st.delivered.Load(); missing > 0 {
		st.fail(fmt.Sprintf("%d deliveries missing after the grace period", missing))
	}
	stopWatch()
	watchers.Wait()
	res.Sent, res.Refused, res.Delivered = st.sent.Load(), st.refused.Load(), st.delivered.Load()
	res.DeliveriesPerS = float64(res.Delivered) / res.Seconds
	res.P50ms, res.P99ms, res.P999ms, res.MaxMs = st.percentiles()
	res.Errors = st.errors
	return res, nil
}

// stats are shared by every writer and watcher.
type stats struct {
	sent, refused, delivered atomic.Int64
	mu                       sync.Mutex
	lat                      []time.Duration // bounded: see keep
	seen                     int64
	errors                   map[string]int64
}

const keep = 1 << 20 // latency samples kept (reservoir beyond)

func (s *stats) sample(d time.Duration) {
	s.mu.Lock()
	s.seen++
	if len(s.lat) < keep {
		s.lat = append(s.lat, d)
	} else if i := int(uint64(s.seen*2654435761) % uint64(s.seen)); i < keep {
		s.lat[i] = d
	}
	s.mu.Unlock()
}

func (s *stats) fail(kind string) {
	s.mu.Lock()
	s.errors[kind]++
	s.mu.Unlock()
}

func (s *stats) percentiles() (p50, p99, p999, max float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.lat) == 0 {
		return
	}
	sort.Slice(s.lat, func(i, j int) bool { return s.lat[i] < s.lat[j] })
	at := func(q float64) float64 {
		return float64(s.lat[min(len(s.lat)-1, int(q*float64(len(s.lat))))]) / 1e6
	}
	return at(0.50), at(0.99), at(0.999), float64(s.lat[len(s.lat)-1]) / 1e6
}

// write commits to its own key at the rate, each carrying its send time.
func (s *stats) write(ctx context.Context, d *peer.Doc, o options, j int, sent *atomic.Int64) {
	root, _ := d.Root()
	pad := strings.Repeat("x", o.size)
	var tick <-chan time.Time
	if o.rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / o.rate))
		defer t.Stop()
		tick = t.C
	}
	go func() { // writers see the other writers' commits, and refusals of theirs
		for ev := range d.Events() {
			s.observe(ev)
		}
	}()
	for i := 0; ; i++ {
		if tick != nil {
			select {
			case <-tick:
			case <-ctx.Done():
				return
			}
		} else if ctx.Err() != nil {
			return
		}
		op := commit.Replace
		if i == 0 {
			op = commit.Add
		}
		v := commit.TextValue(fmt.Sprintf("%d %s", time.Now().UnixNano(), pad))
		if _, err := d.Commit(commit.Delta{Op: op, ID: root, Ref: commit.ObjectKey(fmt.Sprintf("w%d", j)), Value: v}); err != nil {
			s.fail("commit: " + err.Error())
			return
		}
		s.sent.Add(1)
		sent.Add(1)
	}
}

// watch counts deliveries and their latency.
func (s *stats) watch(ctx context.Context, d *peer.Doc) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-d.Events():
			if !ok {
				s.fail("ended: " + fmt.Sprint(d.Err()))
				return
			}
			s.observe(ev)
		}
	}
}

// observe counts a delivery and its latency, or a refusal of our own.
func (s *stats) observe(ev peer.Event) {
	switch e := ev.(type) {
	case peer.Refused:
		if e.Mine {
			s.refused.Add(1)
		}
	case peer.Applied:
		now := time.Now().UnixNano()
		for _, dl := range e.Commit.Deltas {
			var sent int64
			if _, err := fmt.Sscanf(dl.Value.Str, "%d", &sent); err == nil {
				s.sample(time.Duration(now - sent))
			}
		}
		s.delivered.Add(1)
	}
}

func showProgress(ctx context.Context, w *os.File, s *stats, t0 time.Time) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(w)
			return
		case <-t.C:
			secs := time.Since(t0).Seconds()
			fmt.Fprintf(w, "\r%5.0fs  sent %d (%.0f/s)  delivered %d (%.0f/s)  refused %d ", secs,
				s.sent.Load(), float64(s.sent.Load())/secs, s.delivered.Load(), float64(s.delivered.Load())/secs, s.refused.Load())
		}
	}
}

func printTable(r *result) {
	fmt.Printf("peers %d, documents %d, writers per document %d, %.1f s\n", r.Peers, r.Documents, r.Writers, r.Seconds)
	fmt.Printf("%-28s %d\n%-28s %d\n%-28s %d\n", "commits sent", r.Sent, "commits refused", r.Refused, "deliveries", r.Delivered)
	fmt.Printf("%-28s %.0f\n%-28s %.0f\n", "deliveries per second", r.DeliveriesPerS, "connections per second", r.ConnectPerS)
	fmt.Printf("%-28s p50 %.2f  p99 %.2f  p99.9 %.2f  max %.2f\n", "latency ms", r.P50ms, r.P99ms, r.P999ms, r.MaxMs)
	if r.HeapPerLinkB > 0 {
		fmt.Printf("%-28s %.0f (both ends, upper bound)\n", "heap bytes per link", r.HeapPerLinkB)
	}
	for k, v := range r.Errors {
		fmt.Printf("error %-22s %d\n", k, v)
	}
}

// loopbackOnly refuses to load anything but this machine.
func loopbackOnly(raw string, allow bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("-url: %w", err)
	}
	if allow {
		return nil
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("-url %s is not loopback; load tests target this machine only (-allow-remote to override)", raw)
}

func startInProcess() (*gateway.Server, string, func(), error) {
	s, err := gateway.New(gateway.Config{PingInterval: -1, Admission: gatewayAdmission()})
	if err != nil {
		return nil, "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	hs := &http.Server{Handler: s}
	go hs.Serve(ln)
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		hs.Close()
	}
	return s, "ws://" + ln.Addr().String() + "/", stop, nil
}

// raiseFileLimit lifts the soft open-file limit to the hard one: thousands
// of links need twice as many descriptors in one process.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
