// Package natstest starts an embedded nats-server with JetStream on
// 127.0.0.1, on a port the system picks, for tests that need a shared log
// (issue 17). It stops the server when the test ends. It is for tests
// only: no configuration beyond what they need, no TLS, no accounts.
package natstest

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
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
	return s
}

func (s *Server) start(t testing.TB) {
	t.Helper()
	s.launch(t)
	s.ready(t)
}

// launch starts the server without waiting for it.
func (s *Server) launch(t testing.TB) {
	t.Helper()
	srv, err := server.NewServer(s.opts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	s.Server = srv
}

// ready waits until the server takes clients; a restart takes the port it
// was first given.
func (s *Server) ready(t testing.TB) {
	t.Helper()
	// A clustered server takes clients once its JetStream group has a
	// quorum: slow on a loaded host, so the bound is generous.
	if !s.ReadyForConnections(60 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	s.opts.Port = s.Addr().(*net.TCPAddr).Port
	s.URL = fmt.Sprintf("nats://127.0.0.1:%d", s.opts.Port)
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
func (s *Server) Connect(t testing.TB) *nats.Conn { return Connect(t, s.URL) }

// Connect opens a client connection to the servers at urls (comma
// separated), closed when the test ends.
func Connect(t testing.TB, urls string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// StartCluster starts n JetStream servers clustered on loopback, each
// routing to all, and returns once each takes clients. Streams may ask
// for up to n replicas.
func StartCluster(t testing.TB, n int) []*Server {
	t.Helper()
	var routes []*url.URL
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		routes = append(routes, &url.URL{Scheme: "nats", Host: l.Addr().String()})
		l.Close()
	}
	var out []*Server
	for i := range n {
		o := &server.Options{
			ServerName: fmt.Sprint("natstest-", i),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			MaxPayload: MaxPayload,
			NoLog:      true,
			NoSigs:     true,
			Cluster:    server.ClusterOpts{Name: "natstest", Host: "127.0.0.1"},
			Routes:     routes,
		}
		o.Cluster.Port, _ = strconv.Atoi(routes[i].Port())
		out = append(out, &Server{opts: o})
	}
	// Launched together: each waits for the others' routes to settle its
	// JetStream meta group.
	for _, s := range out {
		s.launch(t)
		t.Cleanup(s.Stop)
	}
	for _, s := range out {
		s.ready(t)
	}
	return out
}

// URLs joins the servers' URLs as a client's server list.
func URLs(ss []*Server) string {
	var urls []string
	for _, s := range ss {
		urls = append(urls, s.URL)
	}
	return strings.Join(urls, ",")
}
