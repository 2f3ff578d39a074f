package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/netutil"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway"
	"github.com/weftgate/weftgate/gateway/store"
)

// Limits of the HTTP listeners (the WebSocket upgrade and the operator
// endpoints); a WebSocket, once upgraded, has the gateway's own bounds.
const (
	httpReadHeaderTimeout = 10 * time.Second
	httpIdleTimeout       = 2 * time.Minute
	httpMaxHeaderBytes    = 64 << 10
)

// app is one running gateway process.
type app struct {
	p        *parsed
	cfg      *settings
	res      *resolved
	log      *slog.Logger
	store    store.Store // the store itself, for Healthy and Close
	gw       *gateway.Server
	bridge   *bridge.Server
	rpc      *grpcprom.ServerMetrics // gRPC calls, by service, method and code
	reg      *prometheus.Registry
	health   *storeHealth
	draining atomic.Bool
	// commitStreams holds a token per open /inspect/commits stream.
	commitStreams chan struct{}
	started       time.Time
	addrs         boundAddrs
}

// boundAddrs are the addresses actually listened on, as the ready file,
// the log and the status page give them.
type boundAddrs struct {
	WS    string `json:"ws"`
	GRPC  string `json:"grpc"`
	Admin string `json:"admin,omitempty"` // empty: on the WebSocket listener
	TLS   bool   `json:"tls"`
}

// serve runs the gateway until ctx ends, then drains. stopSignals is called
// when the drain starts, so a second signal ends the process at once.
func serve(ctx context.Context, p *parsed, res *resolved, log *slog.Logger, stopSignals func()) error {
	a, err := newApp(p, res, log)
	if err != nil {
		return err
	}
	ls, err := a.listen()
	if err != nil {
		a.gw.Shutdown(context.Background())
		a.store.Close()
		return err
	}
	return a.run(ctx, ls, stopSignals)
}

// newApp opens the store and builds the gateway and its metrics; nothing
// listens yet.
func newApp(p *parsed, res *resolved, log *slog.Logger) (*app, error) {
	a := &app{p: p, cfg: &p.s, res: res, log: log, started: time.Now(), commitStreams: make(chan struct{}, maxCommitStreams)}
	for flag, pair := range res.certs {
		pair.Report = func(leaf *x509.Certificate, err error) {
			if err != nil {
				log.Warn("tls certificate not reloaded; the old one is still served", "flag", flag, "err", err)
				return
			}
			log.Info("tls certificate reloaded", "flag", flag, "subject", leaf.Subject.String(), "not_after", leaf.NotAfter)
		}
	}
	if err := p.prepareDataDir(); err != nil {
		return nil, err
	}
	if err := a.openStore(); err != nil {
		return nil, err
	}
	obs := newObservers()
	// The bridge is the authority: backends that claim a document answer
	// for it, and its fallback policy for the rest. A read-only gateway
	// refuses every write whatever a backend would say, but still lets the
	// bridge decide who may open what.
	a.bridge = a.cfg.bridge(a.store, log)
	var inner gateway.Authority = a.bridge
	if a.cfg.ReadOnly {
		inner = readOnly{a.bridge}
	}
	auth := timedAuthority{inner: inner, hist: obs.authority}
	gcfg := a.cfg.gateway(timed(a.store, obs.storeSync), auth, log)
	gcfg.Calls = a.bridge
	gcfg.Admission.Identifier = a.bridge
	gw, err := gateway.New(gcfg)
	if err != nil {
		a.store.Close()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	a.bridge.Attach(gw)
	if ns, ok := a.store.(natsStore); ok {
		if err := ns.relay.Serve(a.bridge); err != nil {
			a.store.Close()
			return nil, fmt.Errorf("answer other nodes' questions: %w", err)
		}
	}
	a.gw = gw
	a.reg = newRegistry(gw, a.health, obs, res.certs)
	a.rpc = grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	a.reg.MustRegister(a.rpc)
	return a, nil
}

// handlers are the WebSocket listener's routes and, when -admin-addr is
// set, the admin listener's (nil otherwise).
func (a *app) handlers() (ws, admin *http.ServeMux) {
	ws = http.NewServeMux()
	ws.Handle("/", a.gw)
	if a.cfg.AdminAddr == "" {
		a.operatorRoutes(ws, a.hostRule(a.cfg.WSAddr), a.cfg.statusServed())
		a.pageRoutes(ws, nil)
		return ws, nil
	}
	admin = http.NewServeMux()
	guard := a.hostRule(a.cfg.AdminAddr)
	a.operatorRoutes(admin, guard, true)
	// A document's contents: only ever on the admin listener.
	admin.Handle("GET /documents/{name...}", guard(http.HandlerFunc(a.documentView)))
	if a.cfg.Pprof {
		profileRoutes(admin, guard)
	}
	a.pageRoutes(ws, admin)
	return ws, admin
}

func (a *app) openStore() error {
	a.health = &storeHealth{log: a.log}
	opts := a.cfg.storeOptions(a.health.changed)
	switch a.cfg.Store {
	case storeMemory:
		a.store = store.NewMemoryOptions(opts)
		return nil
	case storeNats:
		st, err := a.openNats(a.health.changed)
		if err != nil {
			return a.p.invalid("nats-url", err)
		}
		a.store = st
		return nil
	}
	st, err := store.Open(filepath.Clean(a.cfg.DataDir), opts)
	if err != nil {
		return a.p.invalid("data-dir", fmt.Errorf("open the store: %w", err))
	}
	a.store = st
	return nil
}

type listeners struct{ ws, grpc, admin net.Listener }

func (l *listeners) close() {
	for _, x := range []net.Listener{l.ws, l.grpc, l.admin} {
		if x != nil {
			x.Close()
		}
	}
}

// listen binds every listener before anything is served, so a bad or busy
// address fails the start, named.
func (a *app) listen() (*listeners, error) {
	ls := &listeners{}
	bind := func(name, addr string, dst *net.Listener) error {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			ls.close()
			return a.p.invalid(name, err)
		}
		*dst = l
		return nil
	}
	if err := bind("ws-addr", a.cfg.WSAddr, &ls.ws); err != nil {
		return nil, err
	}
	if err := bind("grpc-addr", a.cfg.GRPCAddr, &ls.grpc); err != nil {
		return nil, err
	}
	// Past the bound a connection waits in the backlog, unread, so callers
	// without a token cannot hold more than this many.
	ls.grpc = netutil.LimitListener(ls.grpc, a.cfg.GRPCMaxConnections)
	if a.cfg.AdminAddr != "" {
		if err := bind("admin-addr", a.cfg.AdminAddr, &ls.admin); err != nil {
			return nil, err
		}
	}
	a.addrs = boundAddrs{WS: ls.ws.Addr().String(), GRPC: ls.grpc.Addr().String(), TLS: a.res.wsTLS != nil}
	if ls.admin != nil {
		a.addrs.Admin = ls.admin.Addr().String()
	}
	return ls, nil
}

func (a *app) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: httpReadHeaderTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    httpMaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
}

// tlsListener wraps l when TLS is on. WebSocket upgrades need HTTP/1.1, so
// only it is offered.
func (a *app) tlsListener(l net.Listener) net.Listener {
	if a.res.wsTLS == nil {
		return l
	}
	c := a.res.wsTLS.Clone()
	c.NextProtos = []string{"http/1.1"}
	return tls.NewListener(l, c)
}

func (a *app) run(ctx context.Context, ls *listeners, stopSignals func()) error {
	// Connections wait in the listeners' backlogs until Serve below, so
	// the addresses may be announced first.
	if err := a.writeReadyFile(); err != nil {
		ls.close()
		a.gw.Shutdown(context.Background())
		a.store.Close()
		return a.p.invalid("ready-file", err)
	}
	wsMux, adminMux := a.handlers()
	servers := []*http.Server{a.httpServer(wsMux)}
	serveOn := []net.Listener{a.tlsListener(ls.ws)}
	if adminMux != nil {
		servers = append(servers, a.httpServer(adminMux))
		serveOn = append(serveOn, a.tlsListener(ls.admin))
	}

	errs := make(chan error, len(servers)+1)
	for i, srv := range servers {
		go func() {
			if err := srv.Serve(serveOn[i]); !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("http: %w", err)
				return
			}
			errs <- nil
		}()
	}
	grpcCtx, grpcStop := context.WithCancel(context.Background())
	defer grpcStop()
	grpcDone := make(chan error, 1)
	go func() { grpcDone <- a.serveGRPC(grpcCtx, ls.grpc) }()

	a.log.Info("listening", append([]any{"version", buildVersion(), "ws", a.addrs.WS, "grpc", a.addrs.GRPC,
		"admin", a.addrs.Admin, "tls", a.addrs.TLS, "grpc_tls", a.res.grpcTLS != nil, "store", a.cfg.Store}, a.surfaces()...)...)

	var failed error
	select {
	case <-ctx.Done():
		a.log.Info("signal received; draining (a second signal exits at once)", "deadline", a.cfg.DrainTimeout.String())
	case failed = <-errs:
		a.log.Error("listener failed; draining", "err", failed)
	case failed = <-grpcDone:
		if failed == nil {
			failed = errors.New("grpc: stopped serving")
		}
		a.log.Error("gRPC listener failed; draining", "err", failed)
		grpcDone <- nil
	}
	stopSignals()
	err := a.drain(servers, grpcStop, grpcDone)
	return errors.Join(failed, err)
}

func (a *app) serveGRPC(ctx context.Context, l net.Listener) error {
	return serveBridge(ctx, l, a.bridge, a.res.grpcTLS, a.rpc)
}

// drain follows the gateway's shutdown order within -drain-timeout: stop
// being ready, end every link with 1001 and settle the documents, stop the
// HTTP listeners, close gRPC last, then close the store.
func (a *app) drain(servers []*http.Server, grpcStop func(), grpcDone <-chan error) error {
	start := time.Now()
	a.draining.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.DrainTimeout)
	defer cancel()
	var errs []error
	if err := a.gw.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("gateway shutdown: %w", err))
	}
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
			errs = append(errs, fmt.Errorf("http shutdown: %w", err))
		}
	}
	grpcStop()
	select {
	case err := <-grpcDone:
		if err != nil {
			errs = append(errs, fmt.Errorf("grpc: %w", err))
		}
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("grpc shutdown: %w", ctx.Err()))
	}
	if err := a.store.Close(); err != nil {
		errs = append(errs, fmt.Errorf("store close: %w", err))
	}
	if a.cfg.ReadyFile != "" {
		os.Remove(a.cfg.ReadyFile) // the addresses it names are gone
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	a.log.Info("drained", "took", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// writeReadyFile records the bound addresses, atomically (write, then
// rename), so a reader never sees half a file.
func (a *app) writeReadyFile() error {
	if a.cfg.ReadyFile == "" {
		return nil
	}
	b, err := json.Marshal(a.addrs)
	if err != nil {
		return err
	}
	tmp := a.cfg.ReadyFile + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, a.cfg.ReadyFile)
}

// readOnly refuses every write and leaves opening to the authority it wraps.
type readOnly struct{ gateway.Authority }

func (readOnly) Judge(req *gateway.AcceptRequest, reply func(gateway.Verdict)) {
	gateway.Policy{ReadOnly: true}.Judge(req, reply)
}

// surfaces says, for the start-up log, what is served where and who may
// use it.
func (a *app) surfaces() []any {
	ws := a.addrs.WS + " " + strings.Join(a.cfg.WSPaths, ",")
	health, status := a.addrs.WS, a.addrs.WS
	if a.addrs.Admin != "" {
		health, status = a.addrs.Admin, a.addrs.Admin
	} else if !a.cfg.statusServed() {
		status = "off (the WebSocket listener is not on loopback; set -admin-addr)"
	}
	pprof := "off"
	if a.cfg.Pprof {
		pprof = a.addrs.Admin
	}
	var auth []string
	if a.cfg.GRPCToken != "" {
		auth = append(auth, "token")
	}
	if a.cfg.GRPCClientCA != "" {
		auth = append(auth, "client-certificate")
	}
	if len(auth) == 0 {
		auth = append(auth, "none")
	}
	return []any{
		"surface_websocket", ws,
		"surface_health", health + " /healthz,/readyz",
		"surface_status_metrics", status,
		"surface_pprof", pprof,
		"surface_grpc_auth", strings.Join(auth, "+"),
	}
}
