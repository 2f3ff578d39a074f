package store_test

import (
	"testing"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, storetest.Suite{Open: func(t *testing.T, o store.Options) store.Store {
		s := store.NewMemoryOptions(o)
		t.Cleanup(func() { s.Close() })
		return s
	}})
}

func boltSuite(base store.Options) storetest.Suite {
	return storetest.Suite{Open: func(t *testing.T, o store.Options) store.Store {
		o.CheckpointRecords = base.CheckpointRecords
		o.CheckpointBytes = base.CheckpointBytes
		s, err := store.Open(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}}
}

func TestBoltConformance(t *testing.T) {
	t.Run("wal", func(t *testing.T) { storetest.Run(t, boltSuite(store.Options{})) })
	t.Run("fold-often", func(t *testing.T) { storetest.Run(t, boltSuite(store.Options{CheckpointRecords: 3})) })
	t.Run("fold-always", func(t *testing.T) { storetest.Run(t, boltSuite(store.Options{CheckpointRecords: 1})) })
}
