package gateway

import (
	"context"
	"errors"
	"golang.org/x/time/rate"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/net/http/httpguts"

	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/requests"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/internal/wsguard"
	"github.com/weftgate/weftgate/protocol/link"
)

// ErrClosed is returned by calls made after Shutdown began.
var ErrClosed = errors.New("gateway: shutting down")

// Server is the gateway: an http.Handler that upgrades aweft WebSockets, and
// the owner of every document hub. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   store.Store
	gate    *admission.Gate
	metrics *Metrics
	reg     registry

	ctx      context.Context
	cancel   context.CancelFunc
	stopHubs chan struct{}

	wg       sync.WaitGroup
	closing  atomic.Bool
	conns    sync.Map // *conn -> struct{}
	connWG   sync.WaitGroup
	connMu   sync.Mutex // orders a link's connWG.Add against Shutdown
	nextConn atomic.Uint64
	paths    map[string]bool
	ownStore bool
}

// New returns a Server for cfg; the zero Config works.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		store:    cfg.Store,
		metrics:  newMetrics(),
		stopHubs: make(chan struct{}),
		paths:    map[string]bool{},
	}
	if s.store == nil {
		s.store = store.NewMemory()
		s.ownStore = true
	}
	s.gate = admission.New(cfg.Admission)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.reg = registry{hubs: map[string]*hub{}, max: cfg.MaxDocuments, start: func(name string) *hub { return newHub(s, name) }}
	for _, p := range cfg.Paths {
		s.paths[p] = true
	}
	return s, nil
}

// Metrics returns the server's counters.
func (s *Server) Metrics() *Metrics { return s.metrics }

// track runs fn in a goroutine that Shutdown waits for.
func (s *Server) track(fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
}

// ServeHTTP upgrades an aweft WebSocket on one of the configured paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.paths[r.URL.Path] {
		http.NotFound(w, r)
		return
	}
	if s.closing.Load() {
		admission.WriteRefusal(w, &admission.Refusal{Status: http.StatusServiceUnavailable, RetryAfter: time.Second,
			Reasons: []admission.Reason{{Code: string(ReasonShutdown), Message: "the gateway is shutting down"}}})
		return
	}
	if !isUpgrade(r) {
		// A probe or a browser's plain GET: answered before the rate
		// limit counts it and before the authority is asked who it is.
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		http.Error(w, "this path accepts only a WebSocket upgrade", http.StatusUpgradeRequired)
		return
	}
	// Numbered before the identifier is asked, so that it can tell the
	// backend (Handshake.connection_id); a refused handshake uses one up.
	n := s.nextConn.Add(1)
	connID := "c" + strconv.FormatUint(n, 10)
	id, ref := s.gate.Check(r, n)
	if ref != nil {
		admission.WriteRefusal(w, ref)
		codes := make([]string, len(ref.Reasons))
		for i, x := range ref.Reasons {
			codes[i] = x.Code
		}
		// conn is the id the identifier was told (Handshake.connection_id),
		// so a backend's log of its refusal can be matched to this line.
		s.log.Info("handshake refused", "conn", connID, "status", ref.Status, "reason", strings.Join(codes, ","),
			"addr", admission.PeerAddr(r, s.cfg.Admission.TrustProxy), "path", r.URL.Path,
			"host", r.Host[:min(len(r.Host), 256)])
		return
	}
	opts := &websocket.AcceptOptions{
		// The Origin rule already ran in admission, with the allow-list.
		InsecureSkipVerify: true,
		CompressionMode:    websocket.CompressionDisabled,
	}
	if s.cfg.Compression {
		opts.CompressionMode = websocket.CompressionContextTakeover
		// Frames are small; shared-context compression pays on small
		// messages too, so compress them all.
		opts.CompressionThreshold = 1
	}
	// The guard stops at the frames coder/websocket would close with the
	// wrong code (decision 019); readLoop closes with the right one.
	batch := &batchConn{}
	ws, err := websocket.Accept(smallBuffers{ResponseWriter: w, guard: wsguard.Conn, batch: batch}, r, opts)
	if err != nil {
		return // Accept wrote the HTTP error
	}
	ws.SetReadLimit(s.cfg.MaxMessageBytes)
	// Counting a link in and Shutdown's closing are ordered by connMu: a
	// WaitGroup's Add from zero must not run beside its Wait.
	s.connMu.Lock()
	if s.closing.Load() {
		s.connMu.Unlock()
		ws.Close(websocket.StatusGoingAway, string(ReasonShutdown))
		return
	}
	s.connWG.Add(1)
	s.connMu.Unlock()
	c := s.newConn(ws, connID, id, admission.PeerAddr(r, s.cfg.Admission.TrustProxy))
	c.batch = batch
	s.conns.Store(c, struct{}{})
	s.metrics.Connections.Add(1)
	s.metrics.ConnsTotal.Add(1)
	// The handler returns, so the HTTP server lets go of the request, its
	// connection state and its goroutine's stack for the link's life.
	go func() {
		defer s.connWG.Done()
		c.serve()
	}()
}

func (s *Server) newConn(ws *websocket.Conn, connID string, id admission.Identity, addr string) *conn {
	c := &conn{
		srv:      s,
		ws:       ws,
		id:       connID,
		identity: id,
		addr:     addr,
		frames:   make(chan inbound, 2),
		credits:  make(chan struct{}, s.cfg.MaxFramesInFlight),
		wake:     make(chan struct{}, 1),
		link:     link.New(link.Config{MaxTopics: s.cfg.MaxTopicsPerLink, MaxFrameBytes: int(s.cfg.MaxMessageBytes), ForgetSent: true}),
		topics:   map[string]*topicState{},
		byTopic:  map[uint64]*topicState{},
	}
	if s.cfg.MaxOpensPerSecond > 0 {
		c.opens = rate.NewLimiter(rate.Limit(s.cfg.MaxOpensPerSecond), s.cfg.MaxTopicsPerLink)
	}
	c.origin = Origin{Kind: "link", ID: c.id, Identity: id, RemoteAddr: addr}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	c.ioCtx, c.ioCancel = context.WithCancel(context.Background())
	send := func(b []byte) error {
		ctx, cancel := context.WithTimeout(c.ioCtx, s.cfg.WriteTimeout)
		defer cancel()
		return ws.Write(ctx, websocket.MessageText, b)
	}
	c.calls = requests.NewChannel(s.cfg.Calls, requests.Caller{Identity: id, Link: c.id, RemoteAddr: addr}, send)
	return c
}

// endLinks ends every link with shutdown, spread evenly over DrainSpread
// (as nats-server's lame-duck mode does) so that their clients do not all
// reconnect in the same instant; when ctx ends first, the rest go at once.
func (s *Server) endLinks(ctx context.Context) {
	var conns []*conn
	s.conns.Range(func(k, _ any) bool {
		conns = append(conns, k.(*conn))
		return true
	})
	start := time.Now()
	var t *time.Timer
	for i, c := range conns {
		if s.cfg.DrainSpread > 0 && i > 0 && ctx.Err() == nil {
			at := start.Add(s.cfg.DrainSpread * time.Duration(i) / time.Duration(len(conns)))
			if d := time.Until(at); d > 0 {
				if t == nil {
					t = time.NewTimer(d)
				} else {
					t.Reset(d)
				}
				select {
				case <-t.C:
				case <-ctx.Done():
				}
			}
		}
		c.end(&endReason{fault: ReasonShutdown, message: "the gateway is going away", status: websocket.StatusGoingAway})
	}
	if t != nil {
		t.Stop()
	}
}

// Shutdown stops accepting, ends every link with 1001 (going away), lets
// every hub settle what is in flight and store a snapshot, and returns when
// every goroutine has finished or ctx ends. The store, when it was given in
// Config, stays open for the caller to close.
func (s *Server) Shutdown(ctx context.Context) error {
	s.connMu.Lock()
	first := s.closing.CompareAndSwap(false, true)
	s.connMu.Unlock()
	if !first {
		return ErrClosed
	}
	s.endLinks(ctx)
	if err := waitCtx(ctx, &s.connWG); err != nil {
		return err
	}
	s.reg.mu.Lock()
	s.reg.closing = true
	s.reg.mu.Unlock()
	close(s.stopHubs)
	err := waitCtx(ctx, &s.wg)
	s.cancel()
	if s.ownStore {
		s.store.Close()
	}
	return err
}

func waitCtx(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// isUpgrade reports whether r asks for a WebSocket (RFC 6455 section 4.1:
// both tokens, in any case, among comma-separated values).
func isUpgrade(r *http.Request) bool {
	return httpguts.HeaderValuesContainsToken(r.Header["Connection"], "upgrade") &&
		httpguts.HeaderValuesContainsToken(r.Header["Upgrade"], "websocket")
}
