package gcfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// With a small live heap the target rises far above Go's 100 once a
// collection has run; with GOGC set, or a floor of 0, nothing changes.
func TestSetRaisesTheTargetOfASmallHeap(t *testing.T) {
	if Set(0, env(nil)) || Set(DefaultFloor, env(map[string]string{"GOGC": "200"})) {
		t.Fatal("Set tuned with a floor of 0 or GOGC set")
	}
	if p := gcPercent(); p != 100 {
		t.Fatalf("GOGC %d before tuning, want 100", p)
	}
	if !Set(DefaultFloor, env(nil)) {
		t.Fatal("Set did not tune")
	}
	// The tuner runs after a collection, on the finalizer goroutine.
	deadline := time.Now().Add(10 * time.Second)
	for gcPercent() <= 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC still %d after collections with a small heap", gcPercent())
		}
		runtime.GC()
		runtime.Gosched()
	}
	if p := gcPercent(); p > maxPercent {
		t.Fatalf("GOGC %d, over the bound %d", p, maxPercent)
	}
	// A live heap past the floor brings it back to Go's rule.
	hold := make([]byte, DefaultFloor)
	deadline = time.Now().Add(10 * time.Second)
	for gcPercent() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d with %d MiB live, want 100", gcPercent(), len(hold)>>20)
		}
		runtime.GC()
		runtime.Gosched()
	}
	runtime.KeepAlive(hold)
}
