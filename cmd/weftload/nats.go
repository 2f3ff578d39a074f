package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	jsstore "github.com/weftgate/weftgate/gateway/store/jetstream"
)

const (
	// natsMaxPayload carries the largest record a gateway writes, as an
	// operator sets max_payload for it (decision 030).
	natsMaxPayload = 8 << 20
	// natsStartTimeout bounds the embedded server's start and each node's
	// connection and store opening.
	natsStartTimeout = 20 * time.Second
)

// startNats starts an embedded nats-server with JetStream on 127.0.0.1,
// on a port the system picks, storing in a temporary directory that stop
// removes.
func startNats() (url string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "weftload-nats-")
	if err != nil {
		return "", nil, err
	}
	srv, err := server.NewServer(&server.Options{
		ServerName: "weftload",
		Host:       "127.0.0.1",
		Port:       -1,
		JetStream:  true,
		StoreDir:   dir,
		MaxPayload: natsMaxPayload,
		NoLog:      true,
		NoSigs:     true,
	})
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	srv.Start()
	stop = func() {
		srv.Shutdown()
		srv.WaitForShutdown()
		os.RemoveAll(dir)
	}
	if !srv.ReadyForConnections(natsStartTimeout) {
		stop()
		return "", nil, errors.New("the embedded nats-server did not start")
	}
	return fmt.Sprintf("nats://%s", srv.Addr().(*net.TCPAddr)), stop, nil
}

// openJetStream connects to url and opens a JetStream store on the
// connection; closeStore closes both.
func openJetStream(ctx context.Context, url string) (*jsstore.Store, *nats.Conn, func(), error) {
	nc, err := nats.Connect(url, nats.Name("weftload"), nats.Timeout(natsStartTimeout))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("connect to the embedded nats-server: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, natsStartTimeout)
	defer cancel()
	st, err := jsstore.Open(ctx, nc, jsstore.Options{})
	if err != nil {
		nc.Close()
		return nil, nil, nil, err
	}
	return st, nc, func() { st.Close(); nc.Close() }, nil
}
