package bridge

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"strings"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/internal/protocodec"
)

func errUnavailable(msg string) error { return status.Error(codes.Unavailable, msg) }

// ServerOptions are the options the bridge's gRPC server needs: message
// bounds, the bearer token checked before a call's body is read, and the
// interceptor chains (logging, then panic recovery innermost so a panic is
// logged as INTERNAL).
func (s *Server) ServerOptions() []grpc.ServerOption {
	logger := logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		s.log.Log(ctx, slog.Level(lvl), msg, fields...)
	})
	logOpts := []logging.Option{logging.WithLogOnEvents(logging.FinishCall), logging.WithLevels(callLevel)}
	rec := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		s.log.Error("panic in an RPC", "panic", fmt.Sprint(p))
		return status.Error(codes.Internal, "internal error")
	})
	return []grpc.ServerOption{
		grpc.ForceServerCodecV2(protocodec.Codec{MaxBytes: requestLimit}),
		grpc.MaxRecvMsgSize(s.cfg.MaxRecvMessageBytes),
		grpc.MaxSendMsgSize(s.cfg.MaxSendMessageBytes),
		grpc.MaxConcurrentStreams(s.cfg.MaxConcurrentStreams),
		grpc.InTapHandle(s.tap),
		grpc.ChainUnaryInterceptor(
			logging.UnaryServerInterceptor(logger, logOpts...),
			recovery.UnaryServerInterceptor(rec),
		),
		grpc.ChainStreamInterceptor(
			logging.StreamServerInterceptor(logger, logOpts...),
			recovery.StreamServerInterceptor(rec),
		),
	}
}

// MaxSmallRequestBytes bounds the requests that carry a name, a pattern
// or a page token and nothing larger (GetState, ListDocuments, the operator
// calls): only
// writes and the authority stream need MaxRecvMessageBytes.
const MaxSmallRequestBytes = 64 << 10

// requestLimit is the codec's per-message bound; 0 leaves gRPC's.
func requestLimit(v any) int {
	switch v.(type) {
	case *v1.GetStateRequest, *v1.ListDocumentsRequest, *v1.DeleteDocumentRequest, *v1.EndLinksRequest:
		return MaxSmallRequestBytes
	}
	return 0
}

// healthPrefix starts the health service's methods: probes carry no token
// and learn only SERVING or not.
var healthPrefix = "/" + healthpb.Health_ServiceDesc.ServiceName + "/"

// tap checks the bearer token when a call's headers arrive, before gRPC
// creates the stream and reads its body: an interceptor runs only after
// the request message (up to MaxRecvMessageBytes) is in memory, so a
// caller without the token could make the gateway hold that much per
// call. A client certificate (-grpc-client-ca) was already checked in the
// TLS handshake, before any call.
func (s *Server) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if strings.HasPrefix(info.FullMethodName, healthPrefix) {
		return ctx, nil
	}
	ctx, err := s.authenticate(ctx)
	if err != nil {
		// Never reaches the logging interceptor: logged here, at INFO as
		// a refused WebSocket handshake is.
		s.stats.Unauthenticated.Add(1)
		s.log.Info("call refused", "grpc.method", info.FullMethodName, "grpc.code", codes.Unauthenticated.String())
	}
	return ctx, err
}

// callLevel is the level a finished call is logged at. Calls are routine
// (and a drain ends every stream with UNAVAILABLE), so they log at DEBUG; a
// caller turned away logs at INFO, as a refused WebSocket handshake does;
// only the server's own faults log above that.
func callLevel(c codes.Code) logging.Level {
	switch c {
	case codes.Unauthenticated, codes.PermissionDenied:
		return logging.LevelInfo
	case codes.Internal, codes.Unknown, codes.DataLoss:
		return logging.LevelError
	}
	return logging.LevelDebug
}

// errUnauthenticated says nothing about why: a caller without the token
// learns only that it has none.
var errUnauthenticated = status.Error(codes.Unauthenticated, "unauthenticated")

// authenticate checks the bearer token in ctx's incoming metadata against
// Config.Tokens.
func (s *Server) authenticate(ctx context.Context) (context.Context, error) {
	if len(s.cfg.Tokens) == 0 {
		return ctx, nil
	}
	tok, err := auth.AuthFromMD(ctx, "bearer")
	if err != nil {
		return nil, errUnauthenticated
	}
	ok := 0
	for _, t := range s.cfg.Tokens {
		ok |= subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(t))
	}
	if ok != 1 {
		return nil, errUnauthenticated
	}
	return ctx, nil
}

// Register adds GatewayService, the standard health service (serving until
// Close) and server reflection to g, which should be built with
// ServerOptions.
func (s *Server) Register(g *grpc.Server) {
	v1.RegisterGatewayServiceServer(g, s)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(v1.GatewayService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(g, hs)
	s.health.Store(hs)
	reflection.Register(g)
}

// NewGRPCServer is a gRPC server with ServerOptions (then opts, such as TLS
// credentials) and everything Register adds.
func (s *Server) NewGRPCServer(opts ...grpc.ServerOption) *grpc.Server {
	g := grpc.NewServer(append(s.ServerOptions(), opts...)...)
	s.Register(g)
	return g
}
