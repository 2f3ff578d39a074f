package jsstore

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

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
