package main

import (
	"context"
	"crypto/tls"
	"errors"
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"log/slog"
	"math"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/protocol/commit"
)

// bridge builds the gRPC bridge from the settings; cmd/gateway attaches it
// to the gateway once that exists (each needs the other).
func (s *settings) bridge(st store.Store, log *slog.Logger) *bridge.Server {
	var tokens []string
	if s.GRPCToken != "" {
		tokens = []string{s.GRPCToken}
	}
	var relay bridge.Relay
	if ns, ok := st.(natsStore); ok {
		relay = ns.relay // several nodes: questions go where a backend claims them
	}
	return bridge.New(bridge.Config{
		Relay:                relay,
		Store:                st,
		Logger:               log,
		Tokens:               tokens,
		MaxConcurrentStreams: uint32(min(s.GRPCMaxStreams, math.MaxUint32)),
		Policy:               bridge.Policy(s.AuthorityFallback),
		QuestionTimeout:      s.QuestionTimeout,
		CommitLimits:         commit.Limits{MaxCommitBytes: s.MaxCommitBytes, MaxDeltas: s.MaxDeltas},
	})
}

// serveBridge serves the bridge's gRPC API on l until ctx ends, then closes
// the authority streams and stops gracefully, forcing the stop after a
// second.
func serveBridge(ctx context.Context, l net.Listener, b *bridge.Server, tlsCfg *tls.Config, rpc *grpcprom.ServerMetrics) error {
	opts := []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(rpc.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(rpc.StreamServerInterceptor()),
	}
	if tlsCfg != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	// No rpc.InitializeMetrics: seeding every method and code at 0 made
	// most of /metrics grpc_* lines nobody reads. A series appears with its
	// first call.
	g := b.NewGRPCServer(opts...)
	done := make(chan error, 1)
	go func() { done <- g.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	cctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	b.Close(cctx)
	stopped := make(chan struct{})
	go func() {
		g.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-cctx.Done():
		g.Stop()
		<-stopped
	}
	if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}
