package main

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"

	"github.com/weftgate/weftgate/gateway"
)

// bridgeSetup is what the gRPC bridge gets from the binary.
type bridgeSetup struct {
	Gateway *gateway.Server
	TLS     *tls.Config // nil: plaintext; ClientCAs set: mutual TLS
	Token   string      // bearer token backends must present; "" for none
	Logger  *slog.Logger
}

// grpcServe is the seam for bridge/: it serves gRPC on l until ctx ends,
// then closes its streams and returns. It is nil until the bridge exists;
// the listener is still bound so -grpc-addr is validated, reserved and
// reported.
var grpcServe func(ctx context.Context, l net.Listener, b bridgeSetup) error

// refuseGRPC stands in while grpcServe is nil: it closes every connection
// at once so a backend fails fast rather than hanging on a listener that
// nothing reads. It speaks no gRPC.
func refuseGRPC(ctx context.Context, l net.Listener) error {
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		c.Close()
	}
}
