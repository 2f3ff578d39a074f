// Package natstest starts an embedded nats-server with JetStream on
// 127.0.0.1, on a port the system picks, for tests that need a shared log
// (issue 17). It stops the server when the test ends. It is for tests
// only: no configuration beyond what they need, no TLS, no accounts.
package natstest

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// MaxPayload lets a gateway's largest record through, as an operator sets
// max_payload for it.
const MaxPayload = 8 << 20

// Server is one embedded JetStream server.
type Server struct {
	*server.Server
	URL  string
	opts *server.Options
}

// Start starts a JetStream server storing under t.TempDir().
func Start(t testing.TB) *Server {
	t.Helper()
	o := &server.Options{
		ServerName: "natstest",
		Host:       "127.0.0.1",
		Port:       -1,
		JetStream:  true,
		StoreDir:   t.TempDir(),
		MaxPayload: MaxPayload,
		NoLog:      true,
		NoSigs:     true,
	}
	s := &Server{opts: o}
	s.start(t)
	t.Cleanup(s.Stop)
	o.Port = s.Addr().(*net.TCPAddr).Port // a restart takes the same port
	s.URL = fmt.Sprintf("nats://127.0.0.1:%d", o.Port)
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	srv, err := server.NewServer(s.opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(20 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	s.Server = srv
}

// Stop shuts the server down, as a lost server would be to its clients.
func (s *Server) Stop() {
	if s.Server != nil {
		s.Shutdown()
		s.WaitForShutdown()
		s.Server = nil
	}
}

// Restart starts a stopped server again on its port and its data.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.start(t)
}

// Connect opens a client connection to s, closed when the test ends.
func (s *Server) Connect(t testing.TB) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}
