package bridge

import (
	"sync"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
)

// outbox is one stream's bounded send queue, drained by its one sender
// goroutine. Questions pushed back to back share one Questions message,
// up to a count and a byte bound, and nothing is reordered.
type outbox struct {
	mu       sync.Mutex
	items    []*v1.AuthorityResponse
	open     *v1.Questions // the last item, still taking questions
	openSize int
	closed   bool
	wake     chan struct{}

	limit    int // items
	maxBatch int // questions per message
	maxBytes int // bytes per Questions message
	overflow func()
}

func newOutbox(limit, maxBatch, maxBytes int, overflow func()) *outbox {
	return &outbox{wake: make(chan struct{}, 1), limit: limit, maxBatch: maxBatch, maxBytes: maxBytes, overflow: overflow}
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// push queues m; a full queue ends the stream (the backend is not reading).
func (o *outbox) push(m *v1.AuthorityResponse) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	if len(o.items) >= o.limit {
		o.mu.Unlock()
		o.overflow()
		return
	}
	o.items = append(o.items, m)
	o.open = nil
	o.mu.Unlock()
	o.signal()
}

// pushQuestion queues q, whose encoded size is at most size.
func (o *outbox) pushQuestion(q *v1.Question, size int) {
	size += 8
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	if o.open != nil && len(o.open.Questions) < o.maxBatch && o.openSize+size <= o.maxBytes {
		o.open.Questions = append(o.open.Questions, q)
		o.openSize += size
		o.mu.Unlock()
		return
	}
	if len(o.items) >= o.limit {
		o.mu.Unlock()
		o.overflow()
		return
	}
	qs := &v1.Questions{Questions: []*v1.Question{q}}
	o.items = append(o.items, &v1.AuthorityResponse{Message: &v1.AuthorityResponse_Questions{Questions: qs}})
	o.open, o.openSize = qs, size
	o.mu.Unlock()
	o.signal()
}

// take returns everything queued; closed is true once close was called
// and nothing is left.
func (o *outbox) take() (items []*v1.AuthorityResponse, closed bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	items, o.items, o.open = o.items, nil, nil
	return items, o.closed && len(items) == 0
}

// close lets the sender finish what is queued and stop.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.signal()
}
