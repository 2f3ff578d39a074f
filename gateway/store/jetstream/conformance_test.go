package jsstore

import (
	"context"
	"testing"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/store/storetest"
	"github.com/weftgate/weftgate/internal/natstest"
)

// openOn opens a Store on a fresh connection to ns.
func openOn(t testing.TB, ns *natstest.Server, o Options) (*Store, *conn) {
	t.Helper()
	c := connect(t, ns.URL)
	s, err := Open(context.Background(), c.Conn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, c
}

func TestConformance(t *testing.T) {
	servers := map[store.Store]*natstest.Server{}
	conns := map[store.Store]*conn{}
	storetest.Run(t, storetest.Suite{
		Open: func(t *testing.T, o store.Options) store.Store {
			ns := natstest.Start(t)
			s, c := openOn(t, ns, Options{Retain: o.Retain, HealthChanged: o.HealthChanged})
			servers[s], conns[s] = ns, c
			return s
		},
		// The medium is the NATS server: stop it, and start it again on
		// the same port and directory.
		Break: func(t *testing.T, s store.Store) func() {
			ns, c := servers[s], conns[s]
			ns.Stop()
			wait(t, c.disconnected, "the client to see the server go")
			return func() {
				ns.Restart(t)
				wait(t, c.reconnected, "the client to reconnect")
				waitJetStream(t, c.Conn)
			}
		},
		ReadsFailWhenBroken: true,
	})
}
