package gateway

import (
	"sort"
	"sync"
	"sync/atomic"

	"github.com/weftgate/weftgate/protocol"
)

// Metrics counts what the gateway does. All methods are safe for
// concurrent use; cmd/gateway exports them to Prometheus.
type Metrics struct {
	Connections   atomic.Int64 // open now
	ConnsTotal    atomic.Int64
	Received      atomic.Int64 // commits received from links
	Applied       atomic.Int64 // commits applied and made durable
	Delivered     atomic.Int64 // commit deliveries to links
	PeerRefusals  atomic.Int64 // our commits a peer refused
	SlowConsumers atomic.Int64
	// On a shared log (issue 17): appends that lost a race with another
	// node, catch-up reads, and records other nodes appended.
	Conflicts atomic.Int64
	CatchUps  atomic.Int64
	Foreign   atomic.Int64

	mu       sync.Mutex
	refusals map[string]int64
	faults   map[string]int64
	closes   map[string]int64
}

func newMetrics() *Metrics {
	return &Metrics{refusals: map[string]int64{}, faults: map[string]int64{}, closes: map[string]int64{}}
}

func (m *Metrics) applied(n int)   { m.Applied.Add(int64(n)) }
func (m *Metrics) delivered(n int) { m.Delivered.Add(int64(n)) }
func (m *Metrics) received()       { m.Received.Add(1) }
func (m *Metrics) peerRefused()    { m.PeerRefusals.Add(1) }
func (m *Metrics) slowConsumer()   { m.SlowConsumers.Add(1) }

func (m *Metrics) refused(err error) {
	code := string(ReasonInternal)
	if rs := reasonsOf(err); len(rs) > 0 {
		code = rs[0].Code
	}
	m.mu.Lock()
	m.refusals[code]++
	m.mu.Unlock()
}

func (m *Metrics) fault(reason string) {
	m.mu.Lock()
	m.faults[reason]++
	m.mu.Unlock()
}

func (m *Metrics) connClosed(r *endReason) {
	m.Connections.Add(-1)
	if r.fault != "" {
		m.fault(string(r.fault))
	}
}

// Count is one labelled counter value.
type Count struct {
	Reason string
	N      int64
}

func snapshotCounts(mu *sync.Mutex, src map[string]int64) []Count {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Count, 0, len(src))
	for k, v := range src {
		out = append(out, Count{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reason < out[j].Reason })
	return out
}

// Refusals returns commits refused, by reason.
func (m *Metrics) Refusals() []Count { return snapshotCounts(&m.mu, m.refusals) }

// Faults returns links and topics ended, by reason.
func (m *Metrics) Faults() []Count { return snapshotCounts(&m.mu, m.faults) }

var _ = protocol.BadFrame
