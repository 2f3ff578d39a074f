package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultFloor is the floor the binaries start with: small beside a
// server's memory, and enough that a gateway with a few MiB live collects a
// few times a second under load rather than dozens (decision 010).
const DefaultFloor = 64 << 20

// maxPercent bounds GOGC while tuning: the floor over the smallest live
// heap a process has.
const maxPercent = 10000

var once sync.Once

// Set tunes the collector toward floor bytes from now on. It does nothing,
// and returns false, for a floor of 0 or when GOGC is set in the
// environment (getenv), which is the operator's choice to keep. GOMEMLIMIT,
// when set, still bounds the heap. Only the first call's floor counts.
func Set(floor uint64, getenv func(string) string) bool {
	if floor == 0 || getenv("GOGC") != "" {
		return false
	}
	once.Do(func() {
		t := &tuner{floor: floor, pct: 100, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
		t.tune()
		t.arm()
	})
	return true
}

type tuner struct {
	floor  uint64
	pct    int
	sample []metrics.Sample
}

// arm has tune run after the next collection: the cleanup of an object
// nothing references runs once a collection has found it unreachable.
func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) {
		t.tune()
		t.arm()
	}, t)
}

// sentinel is large enough not to share a tiny-allocator block, whose
// cleanup would wait for its neighbours.
type sentinel [16]byte

// tune sets GOGC so that the next collection comes when the heap reaches
// the floor, or at Go's own rule once the live heap is half of it. The live
// heap is what the last collection marked, so it does not count garbage
// not yet swept.
func (t *tuner) tune() {
	metrics.Read(t.sample)
	live := t.sample[0].Value.Uint64()
	pct := 100
	if live > 0 && live < t.floor/2 {
		pct = int(min(maxPercent, t.floor*100/live-100))
	}
	if pct != t.pct {
		t.pct = pct
		debug.SetGCPercent(pct)
	}
}
