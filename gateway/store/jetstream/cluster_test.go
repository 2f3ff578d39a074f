package jsstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/store/storetest"
	"github.com/weftgate/weftgate/internal/natstest"
)

// TestClusterLosesServer: with the stream at three replicas, one of the
// servers (the stream's leader) is stopped while two stores append; the
// appends go on after bounded retries and every acknowledged record is in
// the log afterwards, with no gap and no duplicate.
func TestClusterLosesServer(t *testing.T) {
	nodes := natstest.StartCluster(t, 3)
	c1, c2 := connect(t, natstest.URLs(nodes)), connect(t, natstest.URLs(nodes))
	waitJetStream(t, c1.Conn)
	ctx := context.Background()
	open := func(c *conn) *Store {
		var s *Store
		var err error
		// The meta leader may still be settling: retry, bounded.
		for deadline := time.Now().Add(30 * time.Second); ; {
			if s, err = Open(ctx, c.Conn, Options{Replicas: 3}); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(c1), open(c2)
	storetest.Create(t, a, "d", 0)
	storetest.AppendRange(t, a, "d", 1, 50, 5)

	js, _ := jetstream.New(c1.Conn)
	st, err := js.Stream(ctx, DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream not at three replicas: %+v %v", info, err)
	}
	leader := info.Cluster.Leader

	// Writers retry what the lost server leaves unanswered, for a bounded
	// time; the leader goes once the log is well under way.
	deadline := time.Now().Add(60 * time.Second)
	retry := func(err error) bool {
		if time.Now().After(deadline) {
			return false
		}
		return errors.Is(err, store.ErrUnavailable)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for time.Now().Before(deadline) {
			inf, err := a.Info(ctx, "d")
			if err == nil && inf.Last >= 150 {
				break
			}
		}
		for _, n := range nodes {
			if n.Server != nil && n.Name() == leader {
				n.Stop()
			}
		}
	}()
	const n = 400
	won := map[uint64]int{}
	for c, w := range appendRace(t, []*Store{a, b}, "d", n, retry) {
		won[c] = w
	}
	<-stopped
	wantLog(t, a, "d", n, won)
	wantLog(t, b, "d", n, won)
	if info, err := st.Info(ctx); err != nil || info.Cluster.Leader == leader {
		t.Fatalf("leader %v after stopping %s: %v", info.Cluster, leader, err)
	}
}
