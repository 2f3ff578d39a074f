package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weftgate/weftgate/bridge/natsrelay"
	jsstore "github.com/weftgate/weftgate/gateway/store/jetstream"
)

// natsConnectTimeout bounds the start's wait for NATS and JetStream.
const natsConnectTimeout = 10 * time.Second

// natsStore is the JetStream store with the connection it owns, and the
// relay that carries questions between nodes on that connection.
type natsStore struct {
	*jsstore.Store
	nc    *nats.Conn
	relay *natsrelay.Relay
}

// Close leaves the relay, closes the store, then the connection.
func (s natsStore) Close() error {
	s.relay.Close()
	err := s.Store.Close()
	s.nc.Close()
	return err
}

// openNats connects to -nats-url and opens the store on it. Writes made
// while the connection is down fail at once with store-unavailable (no
// reconnect buffer); the client reconnects for ever.
func (a *app) openNats(healthChanged func(error)) (natsStore, error) {
	c := a.cfg
	opts := []nats.Option{
		nats.Name("weftgate"),
		nats.Timeout(natsConnectTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectBufSize(-1),
		nats.RetryOnFailedConnect(false),
	}
	if c.NatsCreds != "" {
		opts = append(opts, nats.UserCredentials(c.NatsCreds))
	}
	if c.NatsTLSCA != "" {
		opts = append(opts, nats.RootCAs(c.NatsTLSCA))
	}
	nc, err := nats.Connect(strings.Join(strings.Fields(strings.ReplaceAll(c.NatsURL, ",", " ")), ","), opts...)
	if err != nil {
		return natsStore{}, fmt.Errorf("connect to NATS: %w", err)
	}
	// A commit the gateway accepts must fit one message: refuse to start
	// rather than refuse commits later (decision 030).
	if need := int64(c.MaxCommitBytes) + jsstore.RecordOverhead; nc.MaxPayload() < need {
		nc.Close()
		return natsStore{}, fmt.Errorf("the NATS servers' max_payload is %d bytes, below -max-commit-bytes (%d) plus %d of headers: raise max_payload to at least %d or lower -max-commit-bytes", nc.MaxPayload(), c.MaxCommitBytes, jsstore.RecordOverhead, need)
	}
	ctx, cancel := context.WithTimeout(context.Background(), natsConnectTimeout)
	defer cancel()
	o := c.storeOptions(healthChanged)
	st, err := jsstore.Open(ctx, nc, jsstore.Options{Retain: o.Retain, Replicas: c.NatsReplicas, HealthChanged: healthChanged})
	if err != nil {
		nc.Close()
		return natsStore{}, err
	}
	r, err := natsrelay.New(ctx, nc, natsrelay.Options{Replicas: c.NatsReplicas, Addr: c.GRPCAddr})
	if err != nil {
		st.Close()
		nc.Close()
		return natsStore{}, fmt.Errorf("join the relay of questions between nodes: %w", err)
	}
	return natsStore{Store: st, nc: nc, relay: r}, nil
}
