package client_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftgate/weftgate/bridge"
	"github.com/weftgate/weftgate/bridge/client"
	"github.com/weftgate/weftgate/gateway"
)

// local is a real gateway with the real bridge as its authority: the
// gateway's WebSocket on an httptest server and the bridge's gRPC on
// 127.0.0.1, reached through a proxy that can cut every connection.
type local struct {
	gw    *gateway.Server
	b     *bridge.Server
	ws    string // the WebSocket URL
	addr  string // the gRPC address (the proxy's)
	proxy *proxy
	stop  func() error
}

// startLocal starts one without a *testing.T.
func startLocal(bc bridge.Config, gc gateway.Config) (*local, error) {
	b := bridge.New(bc)
	gc.Authority, gc.Calls, gc.Admission.Identifier = b, b, b
	if gc.PingInterval == 0 {
		gc.PingInterval = -1
	}
	gw, err := gateway.New(gc)
	if err != nil {
		return nil, err
	}
	b.Attach(gw)
	hs := httptest.NewServer(gw)
	g := b.NewGRPCServer()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		hs.Close()
		return nil, err
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		g.Serve(l)
	}()
	px, err := newProxy(l.Addr().String())
	if err != nil {
		g.Stop()
		<-served
		hs.Close()
		return nil, err
	}
	lc := &local{gw: gw, b: b, ws: "ws" + strings.TrimPrefix(hs.URL, "http"), addr: px.addr(), proxy: px}
	lc.stop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		err := gw.Shutdown(ctx)
		if errors.Is(err, gateway.ErrClosed) {
			err = nil
		}
		err = errors.Join(err, b.Close(ctx))
		px.close()
		g.Stop()
		<-served
		hs.Close()
		return err
	}
	return lc, nil
}

// gatewayConfig is the tests' gateway: in memory, with a judge timeout
// no test reaches.
func gatewayConfig() gateway.Config { return gateway.Config{JudgeTimeout: 20 * time.Second} }

func startLocalT(t *testing.T, bc bridge.Config) *local {
	t.Helper()
	lc, err := startLocal(bc, gatewayConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lc.stop(); err != nil {
			t.Errorf("stopping the gateway: %v", err)
		}
	})
	return lc
}

// dialLocal dials the gateway with a zero backoff: reconnects are at once.
func dialLocal(t *testing.T, lc *local, o client.Options) *client.Client {
	t.Helper()
	if o.Backoff == nil {
		o.Backoff = zeroBackoff{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	c, err := client.Dial(ctx, lc.addr, o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// until waits, without polling, for cond to hold of c's Status.
func until(t *testing.T, c *client.Client, what string, cond func(client.Status) bool) client.Status {
	t.Helper()
	deadline := time.After(guard)
	for {
		ch := c.Changed()
		st := c.Status()
		if cond(st) {
			return st
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; status %+v", what, st)
		}
	}
}

// proxy forwards TCP to an upstream and can cut every connection at once,
// as a network failure would; it keeps listening, so clients reconnect.
type proxy struct {
	l        net.Listener
	upstream string
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

func newProxy(upstream string) (*proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{l: l, upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		down, err := p.l.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			down.Close()
			continue
		}
		p.mu.Lock()
		p.conns[down], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(down, up)
		go p.pipe(up, down)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// cut closes every connection through the proxy.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *proxy) close() {
	p.l.Close()
	p.cut()
	p.wg.Wait()
}
