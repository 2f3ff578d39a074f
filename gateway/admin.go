package gateway

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/protocol"
)

// An operator's calls: delete a document for good, and end links with a
// reason of the operator's choosing. The bridge serves them over gRPC,
// behind its token.

// ReasonDeleted ends every topic and subscription of a document an operator
// deleted, and refuses the commits that were in flight for it. Opening the
// name again starts a new document.
const ReasonDeleted protocol.Reason = "deleted"

var (
	errDeleted  = protocol.Errorf(ReasonDeleted, "an operator deleted the document")
	errDeleting = protocol.Errorf(ReasonDeleted, "an operator is deleting the document; open it again")
	// errTopicEnded refuses a commit from a link whose topic the hub ended.
	errTopicEnded = protocol.Errorf(protocol.NoTopic, "the link's topic on the document has ended")

	// ErrNoLink is EndLink's answer for a connection id no open link has.
	ErrNoLink = errors.New("gateway: no open link has that id")
	// ErrBadReason is an operator's reason that is not a short token, or a
	// message too long for a fault.
	ErrBadReason = errors.New("gateway: bad operator reason")
)

// Bounds of an operator's reason.
const (
	MaxOperatorReasonBytes  = 64
	MaxOperatorMessageBytes = 256
)

// checkOperatorReason accepts a code of lowercase letters, digits and
// hyphens that starts with a letter (the shape of every aweft reason), and
// a UTF-8 message; both go on the wire to the peer.
func checkOperatorReason(code, message string) error {
	if code == "" || len(code) > MaxOperatorReasonBytes {
		return fmt.Errorf("%w: a reason is 1 to %d bytes", ErrBadReason, MaxOperatorReasonBytes)
	}
	for i, r := range code {
		if !(r >= 'a' && r <= 'z' || i > 0 && (r >= '0' && r <= '9' || r == '-')) {
			return fmt.Errorf("%w: a reason is lowercase letters, digits and hyphens, starting with a letter", ErrBadReason)
		}
	}
	if len(message) > MaxOperatorMessageBytes || !utf8.ValidString(message) {
		return fmt.Errorf("%w: a message is UTF-8 of at most %d bytes", ErrBadReason, MaxOperatorMessageBytes)
	}
	return nil
}

// Deleted is what a delete ended.
type Deleted struct {
	Links       int // topics ended with ReasonDeleted
	Subscribers int // subscriptions ended with ReasonDeleted
}

// DeleteDocument removes a document for good: every link's topic on it ends
// with a ReasonDeleted fault, its subscriptions end with ReasonDeleted,
// commits in flight are refused with it, the replica is dropped, and the
// store deletes every record and snapshot of it (after any write of the
// document already on its way there). A document neither in memory nor in
// the store is ErrNoDocument. A backend Loader that still holds the
// document may hand it back on the next open: deleting it there is the
// backend's part.
func (s *Server) DeleteDocument(ctx context.Context, name string) (Deleted, error) {
	if name == "" || len(name) > store.MaxNameBytes {
		return Deleted{}, protocol.Errorf(ReasonBadName, fmt.Sprintf("a document name is 1 to %d bytes", store.MaxNameBytes))
	}
	h := s.reg.acquire(name)
	if h == nil {
		return Deleted{}, errTooMany(s)
	}
	defer s.reg.release(h)
	type result struct {
		d   Deleted
		err error
	}
	res := make(chan result, 1)
	if !h.postCtx(ctx, deleteMsg{func(d Deleted, err error) { res <- result{d, err} }}) {
		if ctx.Err() != nil {
			return Deleted{}, ctx.Err()
		}
		return Deleted{}, ErrClosed
	}
	// Once begun, the delete goes on whatever ctx does: the caller only
	// stops waiting for it.
	select {
	case r := <-res:
		return r.d, r.err
	case <-h.done:
		return Deleted{}, ErrClosed
	case <-ctx.Done():
		return Deleted{}, ctx.Err()
	}
}

// deletion is a delete under way on a hub.
type deletion struct {
	held    bool // the hub held the document when it began
	started bool // the store's delete is running
	ended   Deleted
	waiters []func(Deleted, error)
}

// beginDelete ends everything that holds the document, refuses what is in
// flight, drops the replica, and deletes it from the store once no write
// of it is on its way there. A second delete meanwhile shares the outcome.
func (h *hub) beginDelete(done func(Deleted, error)) {
	if d := h.deleting; d != nil {
		d.waiters = append(d.waiters, done)
		return
	}
	d := &deletion{held: h.doc != nil, waiters: []func(Deleted, error){done}}
	h.deleting = d
	h.stopFollowing()
	h.creation.Done()
	h.stopCreatorTimer()
	for c := range h.members {
		c.post(connMsg{kind: msgEnd, name: h.name, reason: ReasonDeleted, text: errDeleted.Message})
		delete(h.members, c)
		d.ended.Links++
	}
	for sub := range h.subs {
		sub.stop(errDeleted)
		delete(h.subs, sub)
		d.ended.Subscribers++
	}
	for _, p := range h.pipe.DrainAll() { // a verdict that still comes is dropped
		h.settle(p, errDeleted)
	}
	for _, e := range h.log.Unflushed() {
		h.refuseApplied(e.Item, errDeleted)
	}
	h.doc = nil
	h.continueDelete()
}

// deleteAppended refuses a batch whose append ended during a delete: landed
// or not, the delete that follows removes it.
func (h *hub) deleteAppended() {
	batch, later := h.log.Failed()
	for _, e := range append(batch, later...) {
		h.refuseApplied(e.Item, errDeleted)
	}
	h.continueDelete()
}

// storeCallDone counts an appendWait call out. A hub does not unload while
// one runs: a snapshot landing after the name's next hub deleted the
// document would bring it back.
func (h *hub) storeCallDone() {
	h.storeCalls--
	h.continueDelete()
	if h.leaving {
		h.leaving = false
		if h.unloadable() && h.srv.reg.tryUnload(h) {
			h.stopCreatorTimer()
			h.quit = true
			return
		}
	}
	h.maybeIdle()
}

// continueDelete starts the store's delete once nothing of the hub's is on
// its way to the store, so nothing lands after it.
func (h *hub) continueDelete() {
	d := h.deleting
	if d == nil || d.started || h.log.Appending() || h.storeCalls > 0 {
		return
	}
	d.started = true
	st, ctx, name := h.srv.store, h.srv.ctx, h.name
	h.srv.track(func() {
		err := st.Delete(ctx, name)
		h.post(deletedMsg{err})
	})
}

// deleted finishes a delete with the store's answer. The hub is then as a
// new hub for the name would be; when the store failed, it reloads what the
// store still holds.
func (h *hub) deleted(err error) {
	d := h.deleting
	h.deleting = nil
	h.doc, h.snapAt = nil, 0
	h.log.Restart(0)
	h.tail.Reset(0)
	h.stored, h.loadErr, h.loadAsked = false, nil, false
	for sub := range h.subs { // came during the delete
		sub.stop(errDeleted)
		delete(h.subs, sub)
		d.ended.Subscribers++
	}
	reload := false
	switch {
	case err == nil:
	case errors.Is(err, store.ErrUnknownDocument) && d.held:
		err = nil // a new document that never reached the store
	case errors.Is(err, store.ErrUnknownDocument):
		err = ErrNoDocument
	default:
		h.srv.log.Error("store delete", "document", h.name, "err", err)
		err = protocol.Errorf(ReasonStoreUnavailable, "the store could not delete the document; it is still there, retry")
		reload = true
	}
	if err == nil {
		h.srv.log.Info("document deleted", "document", h.name, "links", d.ended.Links, "subscribers", d.ended.Subscribers)
	}
	for _, w := range d.waiters {
		w(d.ended, err)
	}
	if reload {
		// The store still holds it: load what it holds (loaded then
		// runs the waiters).
		h.load(loadAfterDelete)
		return
	}
	h.runWaiting()
	h.maybeIdle()
}

// EndLink ends the open link with connection id (as Status gives it, "c7")
// with the operator's reason: a fault on topic 0, then WebSocket close 1008
// (policy violation) with the reason as its text.
func (s *Server) EndLink(id string, reason protocol.Reason, message string) error {
	if err := checkOperatorReason(string(reason), message); err != nil {
		return err
	}
	var found *conn
	s.conns.Range(func(k, _ any) bool {
		if c := k.(*conn); c.id == id {
			found = c
			return false
		}
		return true
	})
	if found != nil {
		found.mu.Lock()
		closing := found.ended // no longer open
		found.mu.Unlock()
		if closing {
			found = nil
		}
	}
	if found == nil {
		return ErrNoLink
	}
	s.log.Info("link ended by an operator", "conn", id, "reason", reason)
	found.end(&endReason{fault: reason, message: message, status: websocket.StatusPolicyViolation, announce: true})
	return nil
}

// EndDocumentLinks ends every link's topic on the document name with a fault
// carrying the operator's reason; the links stay open for their other
// documents. It returns how many topics it ended (0 when the document is
// not in memory: then nobody has it open).
func (s *Server) EndDocumentLinks(ctx context.Context, name string, reason protocol.Reason, message string) (int, error) {
	if err := checkOperatorReason(string(reason), message); err != nil {
		return 0, err
	}
	h := s.reg.existing(name)
	if h == nil {
		return 0, nil
	}
	defer s.reg.release(h)
	res := make(chan int, 1)
	if !h.postCtx(ctx, endMembersMsg{reason: reason, text: message, res: res}) {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, ErrClosed
	}
	select {
	case n := <-res:
		if n > 0 {
			s.log.Info("document's links ended by an operator", "document", name, "links", n, "reason", reason)
		}
		return n, nil
	case <-h.done:
		return 0, ErrClosed
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// endMembers ends every member's topic with reason. A creation under way
// is abandoned as a late state would be.
func (h *hub) endMembers(reason protocol.Reason, message string) int {
	n := len(h.members)
	if h.creation.Holding() {
		h.abandonCreation(reason, message)
	}
	for c := range h.members {
		c.post(connMsg{kind: msgEnd, name: h.name, reason: reason, text: message})
		delete(h.members, c)
	}
	h.runWaiting()
	return n
}

// existing returns name's hub with one more reference when it is in
// memory, else nil; it never starts one.
func (r *registry) existing(name string) *hub {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.hubs[name]
	if h != nil && !r.closing {
		h.refs++
		r.clearIdle(h)
		return h
	}
	return nil
}
