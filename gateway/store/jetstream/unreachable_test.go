package jsstore

import (
	"context"
	"testing"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/store/storetest"
	"github.com/weftgate/weftgate/internal/natstest"
)

// TestUnreachable: with the server gone every call is refused at once with
// store-unavailable; once the server is back writes resume, and a Follow
// that ran across the outage either rode it out or ended with
// store-unavailable, and following again from the last record it saw
// gives the rest with no gap.
func TestUnreachable(t *testing.T) {
	ns := natstest.Start(t)
	s, c := openOn(t, ns, Options{})
	ctx := context.Background()
	storetest.Create(t, s, "d", 0)
	storetest.AppendRange(t, s, "d", 1, 3, 1)
	recs, done := follow(s, "d", 0, 6)

	ns.Stop()
	wait(t, c.disconnected, "the client to see the server go")
	storetest.WantReason(t, s.Append(ctx, "d", storetest.Recs("d", 4, 1)), store.Unavailable)
	storetest.WantReason(t, s.PutSnapshot(ctx, "e", store.Snapshot{Root: storetest.RootOf("e")}), store.Unavailable)
	storetest.WantReason(t, s.Delete(ctx, "d"), store.Unavailable)
	_, err := s.Read(ctx, "d", 1, 0)
	storetest.WantReason(t, err, store.Unavailable)
	_, _, err = s.Load(ctx, "d")
	storetest.WantReason(t, err, store.Unavailable)
	_, err = s.Info(ctx, "d")
	storetest.WantReason(t, err, store.Unavailable)
	_, err = s.Documents(ctx)
	storetest.WantReason(t, err, store.Unavailable)
	storetest.WantReason(t, s.Healthy(ctx), store.Unavailable)
	storetest.WantReason(t, s.Follow(ctx, "d", 0, func(store.Record) error { return nil }), store.Unavailable)

	ns.Restart(t)
	wait(t, c.reconnected, "the client to reconnect")
	waitJetStream(t, c.Conn)
	if err := s.Healthy(ctx); err != nil {
		t.Fatalf("healthy after the server came back: %v", err)
	}
	storetest.AppendRange(t, s, "d", 4, 6, 2)
	err = <-done
	got := <-recs
	if err != nil {
		storetest.WantReason(t, err, store.Unavailable)
		storetest.WantRecords(t, "d", got, 1, uint64(len(got)))
		more, done := follow(s, "d", uint64(len(got)), 6-len(got))
		if err := <-done; err != nil {
			t.Fatalf("follow again after the outage: %v", err)
		}
		got = append(got, <-more...)
	}
	storetest.WantRecords(t, "d", got, 1, 6)
}
