package main

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/client"
)

// authorityInFlight is the SDK's bound on verdicts judged at once on the
// one stream (Hello.max_in_flight): enough to keep tens of thousands of
// verdicts a second moving over loopback.
const authorityInFlight = 1024

// authority is an SDK backend in the loop: it claims every load document
// and accepts each commit, so each one pays a gRPC verdict.
type authority struct {
	c        *client.Client
	verdicts atomic.Int64
}

// startAuthority dials the gateway's gRPC address and claims the documents.
func startAuthority(ctx context.Context, addr, token string, inline bool) (*authority, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, client.Options{Backend: "weftload", Token: token, MaxInFlight: authorityInFlight})
	if err != nil {
		return nil, fmt.Errorf("authority: %w", err)
	}
	a := &authority{c: c}
	_, err = c.Claim(ctx, client.Prefix(docPrefix), client.Handlers{
		Accept: func(context.Context, client.AcceptQuestion) ([]client.Reason, error) {
			a.verdicts.Add(1)
			return nil, nil
		},
		InlineAccept: inline,
	})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("authority claim: %w", err)
	}
	return a, nil
}

func (a *authority) close() { a.c.Close() }

// serveBridge serves the in-process gateway's bridge on 127.0.0.1:0.
func serveBridge(b *bridge.Server) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	g := b.NewGRPCServer()
	served := make(chan struct{})
	go func() {
		defer close(served)
		g.Serve(ln)
	}()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Close(ctx)
		g.Stop()
		<-served
	}, nil
}
