package store

import "testing"

func boltOpener(base Options) opener {
	return func(t *testing.T, o Options) Store {
		o.CheckpointRecords = base.CheckpointRecords
		o.CheckpointBytes = base.CheckpointBytes
		s, err := Open(t.TempDir(), o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func TestBoltConformance(t *testing.T) {
	t.Run("wal", func(t *testing.T) { runConformance(t, boltOpener(Options{})) })
	t.Run("fold-often", func(t *testing.T) { runConformance(t, boltOpener(Options{CheckpointRecords: 3})) })
	t.Run("fold-always", func(t *testing.T) { runConformance(t, boltOpener(Options{CheckpointRecords: 1})) })
}
