package store

import "testing"

func TestMemoryConformance(t *testing.T) {
	runConformance(t, func(t *testing.T, o Options) Store {
		s := NewMemoryOptions(o)
		t.Cleanup(func() { s.Close() })
		return s
	})
}
