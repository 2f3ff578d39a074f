package bridge

import (
	"sync"

	v1 "github.com/weftgate/weftgate/gen/weftgate/v1"
	"github.com/weftgate/weftgate/protocol"
)

// writer runs one stream's writes: in the order sent per document (one
// worker goroutine per document with writes queued), at most
// MaxPendingWrites unacknowledged, every ack through the outbox.
type writer struct {
	s  *Server
	st *stream

	mu      sync.Mutex
	stopped bool
	queues  map[string]*docWrites
	ids     map[uint64]struct{} // unacknowledged write ids
	wg      sync.WaitGroup
}

type docWrites struct{ jobs []*v1.Write }

func (w *writer) ack(id uint64, res *v1.WriteResult) {
	w.st.out.push(&v1.AuthorityResponse{Message: &v1.AuthorityResponse_WriteAck{WriteAck: &v1.WriteAck{WriteId: id, Result: res}}})
}

func writeDocument(m *v1.Write) string {
	switch c := m.Change.(type) {
	case *v1.Write_Commit:
		if c.Commit != nil {
			return c.Commit.Document
		}
	case *v1.Write_State:
		if c.State != nil {
			return c.State.Document
		}
	}
	return ""
}

func (w *writer) submit(m *v1.Write) {
	if m == nil || m.WriteId == 0 {
		w.ack(0, refusedResult(ReasonInvalidWrite, "write_id must not be 0"))
		return
	}
	doc := writeDocument(m)
	if doc == "" {
		w.ack(m.WriteId, refusedResult(ReasonInvalidWrite, "a write names its document and sets commit or state"))
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.stopped:
		return
	case hasID(w.ids, m.WriteId):
		w.ack(m.WriteId, refusedResult(ReasonDuplicateWriteID, "a write with this id is not acknowledged yet"))
		return
	case len(w.ids) >= w.s.cfg.MaxPendingWrites:
		w.ack(m.WriteId, refusedResult(ReasonTooManyPendingWrites, "the stream has as many writes pending as it may"))
		return
	}
	w.ids[m.WriteId] = struct{}{}
	q := w.queues[doc]
	if q != nil {
		q.jobs = append(q.jobs, m)
		return
	}
	q = &docWrites{jobs: []*v1.Write{m}}
	w.queues[doc] = q
	w.wg.Add(1)
	go w.run(doc, q)
}

func hasID(m map[uint64]struct{}, id uint64) bool {
	_, ok := m[id]
	return ok
}

func (w *writer) run(doc string, q *docWrites) {
	defer w.wg.Done()
	for {
		w.mu.Lock()
		if len(q.jobs) == 0 {
			delete(w.queues, doc)
			w.mu.Unlock()
			return
		}
		m := q.jobs[0]
		q.jobs[0] = nil
		q.jobs = q.jobs[1:]
		w.mu.Unlock()
		res := w.apply(m)
		w.mu.Lock()
		delete(w.ids, m.WriteId)
		w.mu.Unlock()
		w.ack(m.WriteId, res)
	}
}

func (w *writer) apply(m *v1.Write) *v1.WriteResult {
	origin := backendOrigin{name: w.st.backend, stream: w.st.id, write: m.WriteId}
	var spec writeSpec
	switch c := m.Change.(type) {
	case *v1.Write_Commit:
		origin.label = c.Commit.Label
		spec = writeSpec{doc: c.Commit.Document, commit: c.Commit.Commit, expect: c.Commit.ExpectedCursor, create: c.Commit.CreateRoot}
	case *v1.Write_State:
		origin.label = c.State.Label
		spec = writeSpec{doc: c.State.Document, state: c.State.State, expect: c.State.ExpectedCursor}
		if c.State.State == nil {
			return refusedResult(ReasonInvalidWrite, "a state write carries a state")
		}
	}
	if len(origin.label) > MaxLabelBytes {
		return refusedResult(ReasonInvalidWrite, "a label is at most 128 bytes")
	}
	spec.origin = origin
	res, bad, fatal := w.s.write(w.st.ctx, spec)
	switch {
	case bad != nil:
		// A malformed write is a refusal on the stream, not its end.
		return refusedFromErr(bad)
	case fatal != nil:
		return refusedResult(ReasonUnavailable, "the gateway could not take the write: "+fatal.Error())
	}
	return res
}

// stop refuses further writes and waits for those running.
func (w *writer) stop() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.wg.Wait()
}

func refusedResult(code protocol.Reason, msg string) *v1.WriteResult {
	return &v1.WriteResult{Status: v1.WriteStatus_WRITE_STATUS_REFUSED, Reasons: []*v1.Reason{{Code: string(code), Message: msg}}}
}
