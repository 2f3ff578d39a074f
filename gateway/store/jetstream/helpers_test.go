package jsstore

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testMaxPayload lets a record of store.MaxRecordBytes through, as an
// operator sets max_payload for the gateway's largest commit.
const testMaxPayload = 8 << 20

// natsServer is one embedded nats-server with JetStream on loopback.
type natsServer struct {
	t    testing.TB
	opts *server.Options
	srv  *server.Server
}

// startServer starts a JetStream server storing in dir; port -1 picks one.
func startServer(t testing.TB, dir string, port int) *natsServer {
	t.Helper()
	o := &server.Options{
		ServerName: fmt.Sprintf("n-%d", port),
		Host:       "127.0.0.1",
		Port:       port,
		JetStream:  true,
		StoreDir:   dir,
		MaxPayload: testMaxPayload,
		NoLog:      true,
		NoSigs:     true,
	}
	ns := &natsServer{t: t, opts: o}
	ns.start()
	t.Cleanup(ns.stop)
	return ns
}

func (ns *natsServer) start() {
	ns.t.Helper()
	ns.launch()
	ns.ready()
}

// launch starts the server without waiting for it.
func (ns *natsServer) launch() {
	ns.t.Helper()
	srv, err := server.NewServer(ns.opts)
	if err != nil {
		ns.t.Fatal(err)
	}
	srv.Start()
	ns.srv = srv
}

// ready waits until the server takes clients.
func (ns *natsServer) ready() {
	ns.t.Helper()
	if !ns.srv.ReadyForConnections(20 * time.Second) {
		ns.t.Fatal("nats-server did not start")
	}
	// Restarts reuse the port the first start was given.
	ns.opts.Port = ns.srv.Addr().(*net.TCPAddr).Port
}

func (ns *natsServer) stop() {
	if ns.srv != nil {
		ns.srv.Shutdown()
		ns.srv.WaitForShutdown()
		ns.srv = nil
	}
}

func (ns *natsServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", ns.opts.Port) }

// conn is a client connection as the gateway would open it, plus
// channels that hear each disconnection and reconnection.
type conn struct {
	*nats.Conn
	disconnected, reconnected chan struct{}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// wait waits for a signal on c, within a bound.
func wait(t testing.TB, c chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting: %s", what)
	}
}

func connect(t testing.TB, urls string) *conn {
	t.Helper()
	c := &conn{disconnected: make(chan struct{}, 1), reconnected: make(chan struct{}, 1)}
	nc, err := nats.Connect(urls,
		nats.ReconnectBufSize(-1),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectJitter(0, 0),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { signal(c.disconnected) }),
		nats.ReconnectHandler(func(*nats.Conn) { signal(c.reconnected) }))
	if err != nil {
		t.Fatal(err)
	}
	c.Conn = nc
	t.Cleanup(nc.Close)
	return c
}

// waitJetStream polls until JetStream answers on nc, within a bound.
func waitJetStream(t testing.TB, nc *nats.Conn) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("JetStream did not answer: %v", err)
		}
	}
}
