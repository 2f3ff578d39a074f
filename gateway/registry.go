package gateway

import "sync"

// registry finds or starts the hub of a document. A hub lives while anyone
// holds a reference (a link topic, a subscriber, a backend call) and for
// IdleUnload after the last one lets go; it unloads only with the registry
// lock held and no references, so a lookup never gets a hub that is going.
type registry struct {
	mu      sync.Mutex
	hubs    map[string]*hub
	closing bool
	max     int // documents in memory at once
	idle    int // hubs marked idle, so a full registry scans only when one is
	start   func(name string) *hub
}

// acquire returns the running hub for name with one more reference, or nil
// when the server is shutting down or MaxDocuments are already in memory.
func (r *registry) acquire(name string) *hub {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil
	}
	h := r.hubs[name]
	if h == nil {
		if len(r.hubs) >= r.max && !r.evictIdle() {
			return nil
		}
		h = r.start(name)
		r.hubs[name] = h
	}
	h.refs++
	r.clearIdle(h)
	return h
}

// evictIdle drops one hub that nobody holds and that had nothing in flight
// when its last reference went (markIdle), so that documents nobody holds
// make room at once when the gateway is at its bound. r.mu is held.
func (r *registry) evictIdle() bool {
	if r.idle == 0 {
		return false
	}
	for name, h := range r.hubs {
		if h.refs == 0 && h.idle {
			r.clearIdle(h)
			delete(r.hubs, name)
			close(h.evict)
			return true
		}
	}
	return false
}

func (r *registry) clearIdle(h *hub) {
	if h.idle {
		h.idle = false
		r.idle--
	}
}

// markIdle records, on h's goroutine, that h has nothing in flight; it
// holds only while nobody has taken a reference since (acquire clears it).
func (r *registry) markIdle(h *hub) {
	r.mu.Lock()
	if h.refs == 0 && r.hubs[h.name] == h && !h.idle {
		h.idle = true
		r.idle++
	}
	r.mu.Unlock()
}

// release drops one reference; the hub is told when it reaches zero so it
// can start its idle timer.
func (r *registry) release(h *hub) {
	r.mu.Lock()
	h.refs--
	idle := h.refs == 0
	r.mu.Unlock()
	if idle {
		h.post(releasedMsg{})
	}
}

// tryUnload removes h if nobody holds it. It reports whether h may stop.
func (r *registry) tryUnload(h *hub) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h.refs > 0 || r.hubs[h.name] != h {
		return false
	}
	r.clearIdle(h)
	delete(r.hubs, h.name)
	return true
}

// all returns every hub with one more reference each, so none unloads
// while the caller asks it something; the caller releases each.
func (r *registry) all() []*hub {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*hub, 0, len(r.hubs))
	for _, h := range r.hubs {
		h.refs++
		out = append(out, h)
	}
	return out
}
