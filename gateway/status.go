package gateway

import (
	"context"
	"sort"
	"time"

	"github.com/weftgate/weftgate/gateway/admission"
)

// A read-only snapshot of the server for an operator's status page and for
// metrics gauges. Nothing here changes state; hub fields are read on the hub
// goroutine, connection fields under the connection's lock.

// DocumentStatus is one document in memory.
type DocumentStatus struct {
	Name        string
	Cursor      uint64 // last applied
	Durable     uint64 // last made durable
	Links       int
	Subscribers int
	Pending     int // commits waiting for a verdict
	InFlight    int // questions to the authority now
	Unflushed   int // applied, not yet durable
	// Loading: a store call that decides the document (a load, the reload
	// after a failed append) is running; what comes meanwhile waits.
	Loading bool
	// Following: this node follows the document's shared log.
	Following bool
	// Observables and Slots are its size (0 while it loads).
	Observables int
	Slots       int
	// Members are some of the links sharing it (at most MaxStatusMembers,
	// by link id), with the identity each was admitted with.
	Members []MemberStatus
}

// MemberStatus is one link sharing a document.
type MemberStatus struct {
	Link     string
	Addr     string
	Identity admission.Identity
	// Topic is the gateway's topic number for the document on that link
	// (0 until the link has it).
	Topic uint64
}

// MaxStatusMembers bounds the members one DocumentStatus lists; Links is
// always the exact count.
const MaxStatusMembers = 16

// LinkStatus is one open connection (one link).
type LinkStatus struct {
	ID   string
	Addr string // the peer's address, as admission saw it (after a trusted proxy's X-Forwarded-For)
	// Identity is who the identifier said the peer is; the handshake's
	// tokens and cookies are never kept.
	Identity admission.Identity
	// Documents are the names the link has open (shared), in order.
	Documents []string
	// QueueMessages and QueueBytes are what hubs queued toward the socket
	// and the writer has not taken yet (bytes as counted against
	// MaxPendingBytes); QueueBytes adds the commit bytes of its documents'
	// tails it has not read yet (its lag).
	QueueMessages int
	QueueBytes    int
	// LastPong is when the peer last answered a ping; zero when it never did.
	LastPong time.Time
}

// Status is the whole snapshot.
type Status struct {
	Draining  bool
	Documents []DocumentStatus
	Links     []LinkStatus
	// Handshakes is upgrades refused at the door, by reason.
	Handshakes map[string]uint64
}

// Draining reports whether Shutdown has begun.
func (s *Server) Draining() bool { return s.closing.Load() }

// Status returns a snapshot. A hub that does not answer before ctx ends is
// left out, so a stuck document cannot stall the caller.
func (s *Server) Status(ctx context.Context) Status {
	st := Status{Draining: s.closing.Load(), Handshakes: s.gate.Refusals()}
	// Ask every hub first and gather after, so the wait is one round trip,
	// not one per document. The channel holds every answer, so a hub that
	// answers after ctx ended never blocks.
	hubs := s.reg.all()
	defer func() {
		for _, h := range hubs {
			s.reg.release(h)
		}
	}()
	res := make(chan statusAnswer, len(hubs))
	asked := 0
	for _, h := range hubs {
		if h.postCtx(ctx, statusMsg{res}) {
			asked++
		}
	}
	open := map[*conn][]string{}
	lag := map[*conn]int{}
gather:
	for range asked {
		select {
		case a := <-res:
			st.Documents = append(st.Documents, a.d)
			for i, c := range a.links {
				open[c] = append(open[c], a.d.Name)
				lag[c] += a.lags[i]
			}
		case <-ctx.Done():
			break gather
		}
	}
	sort.Slice(st.Documents, func(i, j int) bool { return st.Documents[i].Name < st.Documents[j].Name })
	s.conns.Range(func(k, _ any) bool {
		c := k.(*conn)
		c.mu.Lock()
		ls := LinkStatus{ID: c.id, Addr: c.addr, QueueMessages: len(c.queue), QueueBytes: c.queued}
		c.mu.Unlock()
		ls.QueueBytes += lag[c]
		ls.Identity, ls.Documents = c.identity, open[c]
		sort.Strings(ls.Documents)
		if ns := c.lastPong.Load(); ns != 0 {
			ls.LastPong = time.Unix(0, ns)
		}
		st.Links = append(st.Links, ls)
		return true
	})
	// IDs are "c" and a number: shorter is older.
	sort.Slice(st.Links, func(i, j int) bool {
		a, b := st.Links[i].ID, st.Links[j].ID
		return len(a) < len(b) || len(a) == len(b) && a < b
	})
	return st
}

// membersOf lists a hub's members on its own goroutine; a conn's id,
// address and identity never change once it is served.
func membersOf(h *hub) []MemberStatus {
	ms := make([]MemberStatus, 0, min(len(h.members), MaxStatusMembers+1))
	for c, m := range h.members {
		ms = append(ms, MemberStatus{Link: c.id, Addr: c.addr, Identity: c.identity, Topic: m.ts.number.Load()})
	}
	// IDs are "c" and a number: shorter is older.
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i].Link, ms[j].Link
		return len(a) < len(b) || len(a) == len(b) && a < b
	})
	if len(ms) > MaxStatusMembers {
		ms = ms[:MaxStatusMembers]
	}
	return ms
}

// statusAnswer is one hub's part of the status, and the links that hold it.
type statusAnswer struct {
	d     DocumentStatus
	links []*conn
	lags  []int // each link's bytes behind the tail's head
}

// status answers for Status; on the hub goroutine.
func (h *hub) status() statusAnswer {
	a := statusAnswer{d: DocumentStatus{
		Name: h.name, Cursor: h.log.Cursor(), Durable: h.log.Durable(),
		Links: len(h.members), Subscribers: len(h.subs),
		Pending: h.pipe.Len(), InFlight: h.pipe.InFlight(),
		Unflushed: h.log.InFlight(),
		Members:   membersOf(h),
		Loading:   h.paused,
		Following: h.unfollow != nil,
	}}
	if h.doc != nil {
		a.d.Observables, a.d.Slots = h.doc.Observables(), h.doc.Slots()
	}
	for c, m := range h.members {
		a.links = append(a.links, c)
		lag, _ := h.tail.Behind(m.ts.read.Load())
		a.lags = append(a.lags, lag)
	}
	return a
}
