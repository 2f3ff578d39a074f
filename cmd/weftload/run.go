package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/natsrelay"
	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/peer"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
)

// Bounds of a run.
const (
	// docPrefix starts every document name the tool uses (and claims).
	docPrefix = "load:"
	// drainGrace bounds the wait, once writers stop, for the deliveries
	// still on their way.
	drainGrace = 10 * time.Second
	// dialTimeout bounds one peer's handshake and share or join.
	dialTimeout = 30 * time.Second
	// fdsSpare is descriptors besides one per link (two with -inprocess).
	fdsSpare = 64
	// maxEventBuffer bounds each peer's event channel (16 bytes a slot).
	maxEventBuffer = 1 << 14
	// defaultWindow is -latency-window left 0.
	defaultWindow = 10 * time.Second
	// maxWindows bounds the latency windows of a run (35 KiB each).
	maxWindows = 1000
)

// In-process stores (-store).
const (
	storeMemory = "memory"
	storeBolt   = "bolt"
	// storeNats is a JetStream store on an embedded nats-server, one per
	// node; -nodes above 1 implies it.
	storeNats = "nats"
)

// options are the flags.
type options struct {
	url, metrics, grpc, grpcToken string
	urls, metricsURLs             []string // -url and -metrics split; the in-process nodes' urls
	nodes                         int      // -inprocess gateways; 0 means 1
	inprocess, allowRemote        bool
	authority, jsonOut            bool
	inlineAccept                  bool // the authority's Handlers.InlineAccept
	peers, docs, writers          int
	size, window, dialers         int
	rate                          float64
	duration, settle              time.Duration
	memprofile                    string // heap profile written once links settle
	shape, watch, write           string
	readers                       int             // -shape fanout: readers on the one document
	store                         string          // the in-process gateway's store
	winLen                        time.Duration   // latency window
	set                           map[string]bool // flags given on the command line
}

// windows is how many latency windows the run's duration spans.
func (o *options) windows() int { return int((o.duration + o.winLen - 1) / o.winLen) }

func (o *options) check() error {
	if o.shape == shapeFanout {
		for _, f := range []string{"peers", "docs", "writers"} {
			if o.set[f] {
				return fmt.Errorf("-shape fanout sets -%s itself (one document, one writer): give -readers", f)
			}
		}
		if o.readers < 1 {
			return errors.New("-shape fanout needs -readers of at least 1")
		}
		if o.write == watchRaw {
			return errors.New("-shape fanout's one writer makes the document, so it is a full peer: -write raw would change nothing")
		}
		o.peers, o.docs, o.writers = o.readers+1, 1, 1
	} else if o.readers != 0 {
		return errors.New("-readers goes with -shape fanout; other shapes count -peers")
	}
	if o.winLen == 0 {
		o.winLen = defaultWindow
	}
	if o.nodes == 0 {
		o.nodes = 1
	}
	if o.nodes > 1 && (o.store == "" || o.store == storeMemory && !o.set["store"]) {
		o.store = storeNats
	}
	switch o.store {
	case "":
		o.store = storeMemory
	case storeMemory, storeBolt, storeNats:
	default:
		return fmt.Errorf("-store %q: want memory, bolt or nats", o.store)
	}
	switch {
	case o.nodes < 1 || o.nodes > maxNodes:
		return fmt.Errorf("-nodes %d: want 1 to %d", o.nodes, maxNodes)
	case o.nodes > 1 && !o.inprocess:
		return errors.New("-nodes starts gateways in this process: add -inprocess, or give separate gateways as -url a,b,c")
	case o.nodes > 1 && o.store != storeNats:
		return fmt.Errorf("-nodes %d share documents through NATS: -store nats (or leave -store out), not %s", o.nodes, o.store)
	case o.store != storeMemory && !o.inprocess:
		return errors.New("-store chooses the -inprocess gateway's store; a separate gateway has its own")
	case o.winLen < 0:
		return errors.New("-latency-window must be positive")
	case o.duration > 0 && o.windows() > maxWindows:
		return fmt.Errorf("-duration over -latency-window is %d windows, more than %d", o.windows(), maxWindows)
	}
	switch {
	case o.docs < 1 || o.writers < 1 || o.duration <= 0:
		return errors.New("need -docs and -writers of at least 1 and a positive -duration")
	case o.peers < 2*o.docs || o.peers < o.docs*o.writers:
		return errors.New("need -peers of at least 2 per document and at least -docs times -writers")
	case o.rate < 0 || o.window < 1 || o.dialers < 1 || o.size < 0:
		return errors.New("-rate, -size must not be negative; -window and -dialers at least 1")
	}
	switch o.shape {
	case shapeField, shapeInsert, shapeLarge, shapeFanout:
	default:
		return fmt.Errorf("-shape %q: want field, insert, large or fanout", o.shape)
	}
	if !o.inprocess {
		if err := o.checkURLs(); err != nil {
			return err
		}
	}
	if o.authority && !o.inprocess && len(o.urls) > 1 {
		return errors.New("-authority with several -url: the backend claims through one node's gRPC and the tool cannot check that separate nodes relay its questions; use -inprocess -nodes N, whose nodes do (decision 034)")
	}
	for flag, kind := range map[string]*string{"-watch": &o.watch, "-write": &o.write} {
		switch *kind {
		case "":
			*kind = watchPeer
		case watchPeer, watchRaw:
		default:
			return fmt.Errorf("%s %q: want peer or raw", flag, *kind)
		}
	}
	if o.size == 0 {
		o.size = defaultSize
		if o.shape == shapeLarge {
			o.size = defaultLargeSize
		}
	}
	return nil
}

// member is one peer's share of one document.
type member struct {
	d       *peer.Doc       // a peer's; nil for a raw socket
	ws      *websocket.Conn // a raw watcher's or writer's
	closing atomic.Bool     // the raw socket is being closed by us
	idx     int             // its place on the document: writers first
	credits chan struct{}   // a writer's commits not yet seen by its observer
	next    []int           // per writer, the sequence it expects next; its reader's

	// A raw writer's, owned by its writing goroutine.
	seq   uint64      // the last commit's sequence on the topic
	out   []byte      // the frame being written
	guard *time.Timer // ends a write that takes too long
}

// run drives one load run and measures it.
func run(ctx context.Context, o options, progress io.Writer) (*result, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	need := uint64(o.peers + fdsSpare)
	if o.inprocess {
		need += uint64(o.peers)
	}
	if lim := raiseFileLimit(); lim != 0 && lim < need {
		return nil, fmt.Errorf("the open-file limit is %d; %d links need about %d", lim, o.peers, need)
	}
	st := newRunStats(time.Now(), o.winLen, o.windows())
	res := &result{Peers: o.peers, Documents: o.docs, Writers: o.writers, Readers: o.readers, Shape: o.shape, Size: o.size,
		Rate: o.rate, Authority: o.authority, WindowSeconds: o.winLen.Seconds()}
	if o.inprocess {
		res.Store = o.store
	}

	var gws []*gateway.Server
	var claimsSeen []*natsrelay.Relay // nodes that must learn the backend's claim
	grpcAddr := o.grpc
	if o.inprocess {
		nd, err := startNodes(ctx, o.nodes, o.authority, o.store)
		if err != nil {
			return nil, err
		}
		defer nd.stop()
		gws, o.urls, grpcAddr, claimsSeen = nd.servers, nd.urls, nd.grpcAddr, nd.relays
	} else if o.authority {
		if err := loopbackOnly("-grpc", o.grpc, o.allowRemote); err != nil {
			return nil, err
		}
	}
	res.Nodes = placement(o.urls, o.docs, o.peers, o.writers)
	// CPU is the in-process gateways' with the tool's, or the separate
	// gateways' summed from their /metrics.
	readCPU := func() (float64, bool) {
		if gws != nil {
			return processCPU(), true
		}
		g, err := scrapeAll(ctx, o.metricsURLs)
		if err != nil || !g.hasCPU {
			return 0, false
		}
		return g.CPU, true
	}
	readGauges := func() (gauges, bool) {
		if gws != nil {
			return inProcessGauges(gws), true
		}
		g, err := scrapeAll(ctx, o.metricsURLs)
		if err != nil {
			st.fail("metrics", err)
			return g, false
		}
		return g, len(o.metricsURLs) > 0
	}
	before, haveBefore := readGauges()

	var auth *authority
	if o.authority {
		a, err := startAuthority(ctx, grpcAddr, o.grpcToken, o.inlineAccept)
		if err != nil {
			return nil, err
		}
		defer a.close()
		auth = a
		if err := waitClaims(ctx, claimsSeen); err != nil {
			return nil, err
		}
	}

	start := time.Now()
	docs, peers, err := connect(ctx, o, st)
	defer closeAll(peers, o.dialers)
	if err != nil {
		return nil, err
	}
	res.ConnectSeconds = time.Since(start).Seconds()
	res.ConnectPerS = float64(o.peers) / res.ConnectSeconds

	// Observers: each writer's commits are counted off by the next member
	// of its document, which returns the writer's credit. They read from
	// now on, so raw sockets answer the gateway's pings while they settle.
	var raws sync.WaitGroup
	defer raws.Wait()
	for _, ms := range docs {
		for _, m := range ms {
			if m.ws != nil {
				raws.Add(1)
				go func() { defer raws.Done(); st.watchRaw(m, ms) }()
				defer closeRaw(m)
				continue
			}
			go st.observe(m, ms)
		}
	}
	if o.settle > 0 {
		select {
		case <-time.After(o.settle):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if o.memprofile != "" {
		if err := writeHeapProfile(o.memprofile); err != nil {
			return nil, err
		}
	}
	if after, ok := readGauges(); ok {
		res.Gateway = &after
		for i, n := range after.perNode {
			res.Nodes[i].Links = n.links
		}
		if lost := float64(o.peers) - after.Links; lost > 0 {
			st.failN("links-missing-at-the-gateway", int64(lost))
		}
		if haveBefore && after.Links > 0 {
			links := float64(o.peers)
			if after.Heap > before.Heap {
				res.HeapPerLinkB = (after.Heap - before.Heap) / links
				res.RSSPerLinkB = (after.RSS - before.RSS) / links
				res.HeapIncludesPeers = gws != nil
			} else {
				// A gateway that freed earlier runs' garbage meanwhile:
				// only a fresh one gives a figure per link.
				st.failN("heap-shrank-no-per-link-figure", 1)
			}
		}
	}

	logBefore, haveLog := readGauges() // before the CPU reading: it collects
	cpuBefore, haveCPU := readCPU()
	wctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	t0 := time.Now()
	st.t0.Store(t0.UnixNano())
	var writers sync.WaitGroup
	sentBy := make([]atomic.Int64, len(docs))
	for k, ms := range docs {
		root, _ := ms[0].d.Root()
		for _, m := range ms[:o.writers] {
			writers.Add(1)
			go func() {
				defer writers.Done()
				st.write(wctx, m, newWriter(root, o.shape, m.idx, o.size), o.rate, &sentBy[k])
			}()
		}
	}
	progressDone := make(chan struct{})
	go func() { defer close(progressDone); showProgress(wctx, progress, st, auth, t0) }()
	writers.Wait()
	res.Seconds = time.Since(t0).Seconds()
	<-progressDone

	// Every commit reaches every other member of its document.
	var want int64
	for k, ms := range docs {
		want += sentBy[k].Load() * int64(len(ms)-1)
	}
	st.waitDelivered(ctx, want, drainGrace)
	if cpuAfter, ok := readCPU(); ok && haveCPU && cpuAfter > cpuBefore {
		res.CPUSeconds = cpuAfter - cpuBefore
		res.CPUIncludesTool = gws != nil
	}
	if end, ok := readGauges(); ok && haveLog {
		for i, n := range end.perNode {
			res.Nodes[i].Conflicts = n.conflicts - logBefore.perNode[i].conflicts
			res.Nodes[i].CatchUps = n.catchUps - logBefore.perNode[i].catchUps
		}
	}
	for _, ms := range docs {
		for _, m := range ms {
			if m.d == nil {
				continue
			}
			if n := m.d.Missed(); n > 0 {
				st.failN("events-dropped", int64(n))
			}
		}
	}
	res.fill(st, want)
	if auth != nil {
		res.Verdicts = auth.verdicts.Load()
		res.VerdictsPerS = float64(res.Verdicts) / res.Seconds
	}
	return res, nil
}

// connect dials the peers: one per document shares it, then the rest join,
// o.dialers at a time.
func connect(ctx context.Context, o options, st *stats) ([][]*member, []*peer.Peer, error) {
	peers := make([]*peer.Peer, o.peers)
	docs := make([][]*member, o.docs)
	// A run's own names: a gateway that outlives a run keeps its documents.
	names := docPrefix + commit.NewID().String()[:8] + ":"
	// Members other than a writer's observer may lag behind it; room for
	// many windows keeps their events from being dropped under load.
	popts := peer.Options{EventBuffer: min(maxEventBuffer, max(peer.DefaultEventBuffer, 16*o.window*o.writers))}
	one := func(i int) (*member, error) {
		cctx, cancel := context.WithTimeout(ctx, dialTimeout)
		defer cancel()
		k := i % o.docs
		name := names + strconv.Itoa(k)
		m := &member{idx: i / o.docs, next: make([]int, o.writers)}
		writer := m.idx < o.writers
		url := o.urls[nodeOf(m.idx, o.writers, len(o.urls))]
		// The document's first member makes it, so it is always a peer.
		if i >= o.docs && (!writer && o.watch == watchRaw || writer && o.write == watchRaw) {
			type opened struct {
				ws    *websocket.Conn
				state commit.Commit
			}
			r, err := retryNoDocument(cctx, func() (opened, error) {
				ws, state, err := dialRaw(cctx, url, name)
				return opened{ws, state}, err
			})
			ws, state := r.ws, r.state
			if err != nil {
				return nil, fmt.Errorf("raw member %d on %s: %w", i, name, err)
			}
			m.ws, m.next = ws, stateCovers(state, o.writers)
			if writer {
				m.credits = make(chan struct{}, o.window)
			}
			return m, nil
		}
		p, err := peer.Dial(cctx, url, popts)
		if err != nil {
			return nil, fmt.Errorf("peer %d: %w", i, err)
		}
		peers[i] = p
		var d *peer.Doc
		if i < o.docs {
			d, err = p.Share(cctx, name, document.New(commit.NewID(), commit.Object, document.Limits{}))
		} else {
			d, err = retryNoDocument(cctx, func() (*peer.Doc, error) { return p.Join(cctx, name) })
		}
		if err != nil {
			return nil, fmt.Errorf("peer %d on %s: %w", i, name, err)
		}
		m.d = d
		if m.idx < o.writers {
			m.credits = make(chan struct{}, o.window)
		}
		return m, nil
	}
	members := make([]*member, o.peers)
	for i := range o.docs {
		m, err := one(i)
		if err != nil {
			return nil, peers, err
		}
		members[i] = m
	}
	var next atomic.Int64
	next.Store(int64(o.docs))
	errs := make(chan error, o.dialers)
	var wg sync.WaitGroup
	for range o.dialers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= o.peers || ctx.Err() != nil {
					return
				}
				m, err := one(i)
				if err != nil {
					errs <- err
					next.Store(int64(o.peers)) // the others stop too
					return
				}
				members[i] = m
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, peers, err
	}
	if ctx.Err() != nil {
		return nil, peers, ctx.Err()
	}
	for i, m := range members {
		docs[i%o.docs] = append(docs[i%o.docs], m)
	}
	return docs, peers, nil
}

// closeRaw closes a raw watcher's socket; its reader then returns.
func closeRaw(m *member) {
	m.closing.Store(true)
	m.ws.CloseNow()
}

// closeAll closes the peers, n at a time: closing waits for each link's
// goroutines.
func closeAll(peers []*peer.Peer, n int) {
	ch := make(chan *peer.Peer)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ch {
				p.Close()
			}
		}()
	}
	for _, p := range peers {
		if p != nil {
			ch <- p
		}
	}
	close(ch)
	wg.Wait()
}

// nodes are the gateways startNodes started in this process.
type nodes struct {
	servers  []*gateway.Server
	urls     []string
	grpcAddr string             // the first node's bridge, with a bridge
	relays   []*natsrelay.Relay // the other nodes', which must learn the backend's claim
	stop     func()             // stops them all and removes what they wrote
}

// startNodes starts n gateways on 127.0.0.1:0 in this process, each on a
// store of storeKind: memory, bbolt (cmd/gateway's default) in a directory
// of its own, or JetStream on one embedded nats-server that all nodes
// share, each node with its own connection. withBridge gives each an
// in-process gRPC bridge as its authority, the first one's served for the
// tool's backend; on JetStream every node also joins the question relay
// (decision 034), so that one backend answers for all, and relays are the
// other nodes', which must learn its claim.
func startNodes(ctx context.Context, n int, withBridge bool, storeKind string) (nd *nodes, err error) {
	var stops []func() // run last first
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	nd = &nodes{stop: stop}
	natsURL := ""
	if storeKind == storeNats {
		u, stopNats, err := startNats()
		if err != nil {
			return nil, err
		}
		stops = append(stops, stopNats)
		natsURL = u
	}
	for i := range n {
		cfg := gateway.Config{PingInterval: -1, Admission: gatewayAdmission()}
		var relay *natsrelay.Relay
		switch storeKind {
		case storeBolt:
			dir, err := os.MkdirTemp("", "weftload-store-")
			if err != nil {
				return nil, err
			}
			st, err := store.Open(dir, store.Options{})
			if err != nil {
				os.RemoveAll(dir)
				return nil, err
			}
			cfg.Store = st
			stops = append(stops, func() { st.Close(); os.RemoveAll(dir) })
		case storeNats:
			st, nc, closeStore, err := openJetStream(ctx, natsURL)
			if err != nil {
				return nil, err
			}
			cfg.Store = st
			stops = append(stops, closeStore)
			if withBridge && n > 1 {
				r, err := natsrelay.New(ctx, nc, natsrelay.Options{})
				if err != nil {
					return nil, fmt.Errorf("join the question relay: %w", err)
				}
				stops = append(stops, func() { r.Close() })
				relay = r
			}
		}
		var b *bridge.Server
		if withBridge {
			bc := bridge.Config{}
			if relay != nil { // a nil *Relay in the interface would not be nil
				bc.Relay = relay
			}
			b = bridge.New(bc)
			cfg.Authority, cfg.Calls = b, b
		}
		s, err := gateway.New(cfg)
		if err != nil {
			return nil, err
		}
		if b != nil {
			b.Attach(s)
			if relay != nil {
				if err := relay.Serve(b); err != nil {
					return nil, fmt.Errorf("answer other nodes' questions: %w", err)
				}
				if i > 0 {
					nd.relays = append(nd.relays, relay)
				}
			}
			if i == 0 {
				addr, stopBridge, err := serveBridge(b)
				if err != nil {
					return nil, err
				}
				nd.grpcAddr = addr
				stops = append(stops, stopBridge)
			} else {
				stops = append(stops, func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					b.Close(ctx)
				})
			}
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		hs := &http.Server{Handler: s}
		served := make(chan struct{})
		go func() {
			defer close(served)
			hs.Serve(ln)
		}()
		stops = append(stops, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s.Shutdown(ctx)
			hs.Close()
			<-served
		})
		nd.servers = append(nd.servers, s)
		nd.urls = append(nd.urls, "ws://"+ln.Addr().String()+"/")
	}
	return nd, nil
}

// claimWait bounds the wait for every node to learn the backend's claim.
const claimWait = 10 * time.Second

// waitClaims waits until each relay knows a node whose backend claims
// something: before that, a node would answer its commits by the
// fallback policy instead of asking the backend.
func waitClaims(ctx context.Context, relays []*natsrelay.Relay) error {
	deadline := time.Now().Add(claimWait)
	for _, r := range relays {
		for !claimed(r) {
			if time.Now().After(deadline) {
				return fmt.Errorf("node %s did not learn the backend's claim within %s", r.ID(), claimWait)
			}
			select {
			case <-time.After(10 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

func claimed(r *natsrelay.Relay) bool {
	for _, n := range r.Nodes() {
		if len(n.Claims) > 0 {
			return true
		}
	}
	return false
}

// kindOf names an error for the errors table, coarsely enough that the
// table stays short: its protocol reason, handshake status, close status or
// errno, or "other".
func kindOf(err error) string {
	if r := protocol.ReasonOf(err); r != "" {
		return string(r)
	}
	var he *peer.HandshakeError
	var se *statusError
	var errno syscall.Errno
	switch {
	case errors.As(err, &se):
		return "http-" + strconv.Itoa(se.code)
	case errors.As(err, &he):
		return "handshake-" + strconv.Itoa(he.StatusCode)
	case websocket.CloseStatus(err) != -1:
		return "close-" + strconv.Itoa(int(websocket.CloseStatus(err)))
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &errno):
		return "socket-" + errno.Error()
	}
	return "other"
}

// writeHeapProfile writes this process's heap (with -inprocess, the
// gateway's too) after a collection.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
