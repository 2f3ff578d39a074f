package bridge

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/health"

	"github.com/weftgate/weftgate/gateway"
	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// Server is the gRPC bridge. It serves weftgatev1.GatewayService, and is the
// gateway's Authority, Loader, Identifier and Calls, so cmd/gateway plugs it
// in as gateway.Config{Authority: b, Calls: b, Admission: {Identifier: b}}.
type Server struct {
	v1.UnimplementedGatewayServiceServer

	cfg    Config
	log    *slog.Logger
	router *router
	stats  Stats
	notes  notes
	subs   watchers

	gw        atomic.Pointer[gateway.Server]
	streamIDs atomic.Uint64
	writeIDs  atomic.Uint64 // unary writes' numbers (stream 0)
	closing   atomic.Bool
	wg        sync.WaitGroup
	health    atomic.Pointer[health.Server]
}

var errNotAttached = errors.New("bridge: no gateway attached")

// New returns a bridge for cfg.
func New(cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, log: cfg.Logger}
	s.router = newRouter(&s.cfg, &s.stats)
	s.notes.m = map[string]*writeNote{}
	s.subs.init()
	if cfg.Gateway != nil {
		s.gw.Store(cfg.Gateway)
	}
	return s
}

// Attach gives the bridge its gateway, for a gateway built with the bridge
// as its Authority after New. Call it before serving.
func (s *Server) Attach(gw *gateway.Server) { s.gw.Store(gw) }

func (s *Server) gateway() *gateway.Server { return s.gw.Load() }

// Stats returns the bridge's counters.
func (s *Server) Stats() *Stats { return &s.stats }

// track runs fn in a goroutine that Close waits for.
func (s *Server) track(fn func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn()
	}()
}

// Close ends every authority stream with UNAVAILABLE (their questions fall
// to the policy), marks the health service not serving, and waits for the
// bridge's goroutines, or for ctx. Call it after gateway.Shutdown, so the
// gateway's last verdicts are still answered, and before stopping the
// gRPC server.
func (s *Server) Close(ctx context.Context) error {
	if !s.closing.CompareAndSwap(false, true) {
		return nil
	}
	if h := s.health.Load(); h != nil {
		h.Shutdown()
	}
	for _, st := range s.router.close() {
		st.kill(errUnavailable("the gateway is shutting down"))
	}
	s.subs.closeAll()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
