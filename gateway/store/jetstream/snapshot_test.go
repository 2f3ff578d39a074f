package jsstore

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/store/storetest"
	"github.com/weftgate/weftgate/internal/natstest"
)

// objects lists the names in the snapshot object store.
func objects(t *testing.T, s *Store) []string {
	t.Helper()
	infos, err := s.obj.List(context.Background())
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range infos {
		names = append(names, i.Name)
	}
	return names
}

// TestLargeSnapshot: a state above InlineSnapshotBytes goes to the object
// store and reads back whole, from another connection too; a newer
// snapshot replaces its object, a small one drops it, and Delete removes
// the last.
func TestLargeSnapshot(t *testing.T) {
	ns := natstest.Start(t)
	s, _ := openOn(t, ns, Options{InlineSnapshotBytes: 1 << 10})
	other, _ := openOn(t, ns, Options{})
	ctx := context.Background()
	storetest.Create(t, s, "d", 0)
	storetest.AppendRange(t, s, "d", 1, 10, 5)
	put := func(c uint64, state []byte) {
		t.Helper()
		if err := s.PutSnapshot(ctx, "d", store.Snapshot{Cursor: c, State: state, Root: storetest.RootOf("d"), RootKind: 2}); err != nil {
			t.Fatal(err)
		}
	}
	wantState := func(c uint64, state []byte) {
		t.Helper()
		for _, st := range []*Store{s, other} {
			snap, tail, err := st.Load(ctx, "d")
			if err != nil || snap.Cursor != c || !bytes.Equal(snap.State, state) {
				t.Fatalf("load: cursor %v, %d bytes, %v; want %d, %d bytes", snap, len(snap.State), err, c, len(state))
			}
			storetest.WantRecords(t, "d", tail, c+1, 10)
		}
	}
	big := bytes.Repeat([]byte("0123456789"), 300<<10) // 3 MB, past one message
	put(5, big)
	wantState(5, big)
	if got := objects(t, s); len(got) != 1 {
		t.Fatalf("objects %v, want one", got)
	}
	bigger := append(bytes.Clone(big), "!"...)
	put(8, bigger)
	wantState(8, bigger)
	if got := objects(t, s); len(got) != 1 {
		t.Fatalf("objects %v after a replacing snapshot, want one", got)
	}
	put(9, []byte("small"))
	wantState(9, []byte("small"))
	if got := objects(t, s); len(got) != 0 {
		t.Fatalf("objects %v after an inline snapshot, want none", got)
	}
	put(10, big)
	if err := s.Delete(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	if got := objects(t, s); len(got) != 0 {
		t.Fatalf("objects %v after delete, want none", got)
	}
}
