package gateway

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"

	"github.com/weftgate/weftgate/gateway/admission"
	"github.com/weftgate/weftgate/gateway/docsm"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/tail"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// The in-process API a backend bridge builds on: read a document, write into
// it, and follow its commit stream from a cursor.

// Event is one entry of a document's commit stream. A snapshot event
// (Snapshot true) carries the document's whole state at Cursor instead of a
// commit: it is what a subscriber gets when it asked to resume from a cursor
// older than the store retains.
type Event struct {
	Document string
	Cursor   uint64
	Origin   string
	Commit   []byte
	Snapshot bool
	Root     frame.Root
	State    []byte // nil for an empty document
	// Paths holds each delta's attach path from the root as the commit
	// was applied (what the authority was shown); nil when the commit was
	// read back from the store, whose records keep no paths, or when no
	// authority was asked.
	Paths [][]string
}

// ErrNoDocument is returned for a document the gateway does not hold.
var ErrNoDocument = protocol.Errorf(protocol.NoDocument, "the gateway holds no such document")

func errTooMany(s *Server) error {
	if s.closing.Load() {
		return ErrClosed
	}
	return protocol.Errorf(ReasonTooManyDocuments, "the gateway holds as many documents as it may")
}

var errStoreFailed = protocol.Errorf(ReasonStoreUnavailable, "the document could not be loaded from the store; retry later")

// call runs op on name's hub, once the store has the document loaded and a
// backend Loader has been asked for one the gateway does not hold, and
// waits for its outcome.
func (s *Server) call(ctx context.Context, name string, op callOp) error {
	h := s.reg.acquire(name)
	if h == nil {
		return errTooMany(s)
	}
	defer s.reg.release(h)
	res := make(chan error, 1)
	if !h.postCtx(ctx, callMsg{op: op, done: func(err error) { res <- err }}) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ErrClosed
	}
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// State returns a document's root, its state as one commit (nil when
// empty) and the cursor it is at. Everything it reflects is durable.
func (s *Server) State(ctx context.Context, name string) (root frame.Root, state []byte, cursor uint64, err error) {
	var a stateAnswer
	err = s.call(ctx, name, stateCall{out: &a})
	return a.root, a.state, a.cursor, err
}

// stateAnswer is a document's durable state as State returns it.
type stateAnswer struct {
	root   frame.Root
	state  []byte
	cursor uint64
}

// stateCall answers once the replica equals what is durable.
func (h *hub) stateCall(op stateCall, done func(error)) {
	h.whenSettled(func() {
		if h.doc == nil {
			done(ErrNoDocument)
			return
		}
		id, kind := h.doc.Root()
		*op.out = stateAnswer{frame.Root{ID: id, Kind: kind}, h.snapshotBytes(), h.log.Durable()}
		done(nil)
	})
}

// Write applies a commit as a backend (origin), exactly like a browser's:
// judged by the authority, applied, made durable, delivered to every link.
// With expect set, it lands only if the document is still at that cursor.
// It returns the commit's cursor.
func (s *Server) Write(ctx context.Context, name string, origin Origin, b []byte, expect *uint64) (uint64, error) {
	c, err := commit.DecodeWithLimits(b, s.cfg.CommitLimits)
	if err != nil {
		return 0, err
	}
	var cur uint64
	p := &pendingCommit{origin: origin, c: c, bytes: b, expect: expect}
	err = s.call(ctx, name, writeCall{p: p, cur: &cur})
	return cur, err
}

// Create makes an empty document with the given root, for a backend that
// writes before any peer opened it. Creating one that exists with the same
// root is not an error.
func (s *Server) Create(ctx context.Context, name string, root frame.Root) error {
	return s.call(ctx, name, createCall{root})
}

func (h *hub) createCall(op createCall, done func(error)) {
	root := op.root
	switch {
	case h.doc == nil:
		// The empty snapshot creates it in the store before its first
		// append can run; what comes meanwhile waits.
		snap := store.Snapshot{Cursor: h.log.Cursor(), Root: root.ID, RootKind: uint8(root.Kind)}
		st, ctx, name := h.srv.store, h.srv.ctx, h.name
		h.pause(func() hubMsg {
			return createdDocMsg{root: root, err: st.PutSnapshot(ctx, name, snap), done: done}
		})
	default:
		if id, kind := h.doc.Root(); id != root.ID || kind != root.Kind {
			done(protocol.Errorf(protocol.RootMismatch, "the document exists with another root"))
			return
		}
		done(nil)
	}
}

// createdDoc takes the outcome of a Create's snapshot.
func (h *hub) createdDoc(m createdDocMsg) {
	h.paused = false
	if m.err != nil {
		h.srv.log.Error("create document", "document", h.name, "err", m.err)
		m.done(protocol.Errorf(ReasonStoreUnavailable, "the document could not be created"))
		return
	}
	h.doc = docsm.NewReplica(document.New(m.root.ID, m.root.Kind, h.srv.cfg.DocumentLimits), 0, h.srv.cfg.MaxDocumentBytes)
	h.stored = true
	m.done(nil)
}

// ReplaceState moves a document in place to state (a snapshot commit; nil
// empties it), reconciled into one ordinary commit delivered to every link.
// It returns the cursor after it and that commit's bytes (the cursor
// unchanged and no commit when nothing differed). With expect set, the
// document's cursor must equal *expect when the state is reconciled, else
// *CursorMismatch and nothing changes.
func (s *Server) ReplaceState(ctx context.Context, name string, origin Origin, state []byte, expect *uint64) (uint64, []byte, error) {
	var st commit.Commit
	if state != nil {
		var err error
		if st, err = commit.DecodeWithLimits(state, s.cfg.CommitLimits); err != nil {
			return 0, nil, err
		}
	}
	var r replaced
	err := s.call(ctx, name, replaceCall{origin: origin, st: st, expect: expect, out: &r})
	return r.cursor, r.commit, err
}

// replaced is what ReplaceState answers: the cursor after it, and the
// commit that moved the document (nil when nothing differed).
type replaced struct {
	cursor uint64
	commit []byte
}

func (h *hub) replaceCall(op replaceCall, done func(error)) {
	if h.doc == nil {
		done(ErrNoDocument)
		return
	}
	// Reconcile against the replica as it will be once everything in
	// flight has landed, so the diff is computed at the right place; the
	// cursor check is made there too, so nothing lands between.
	h.whenIdle(func() {
		if h.doc == nil {
			done(protocol.Errorf(ReasonStoreUnavailable, "the document could not be loaded; retry later"))
			return
		}
		if op.expect != nil && *op.expect != h.log.Cursor() {
			done(&CursorMismatch{Expected: *op.expect, Actual: h.log.Cursor()})
			return
		}
		diff, err := h.doc.Clone().Reconcile(op.st)
		if err != nil || len(diff.Deltas) == 0 {
			op.out.cursor = h.log.Cursor()
			done(err)
			return
		}
		b, err := commit.Encode(diff)
		if err != nil {
			done(err)
			return
		}
		// A state that replaces content is a write: judged (as a state)
		// and applied like a commit, and only at this cursor, so that
		// nothing lands between the diff and its apply.
		at := h.log.Cursor()
		h.commit(&pendingCommit{origin: op.origin, c: diff, bytes: b, expect: &at, state: true, result: func(c uint64, err error) {
			op.out.cursor = c
			if err == nil {
				op.out.commit = b
			}
			done(err)
		}})
	})
}

// DocumentInfo describes one document the gateway has in memory.
type DocumentInfo struct {
	Name        string
	Root        frame.Root
	Cursor      uint64
	Durable     uint64
	Links       int
	Subscribers int
	Pending     int
	// Peers are up to MaxListedPeers of the links that have it open, in
	// connection order.
	Peers []Peer
}

// MaxListedPeers bounds DocumentInfo.Peers.
const MaxListedPeers = 100

// Peer is one link as a backend may see it.
type Peer struct {
	ID       string // "c" and the connection number
	Remote   string
	Identity admission.Identity
}

// Documents lists the documents in memory.
func (s *Server) Documents(ctx context.Context) []DocumentInfo {
	var out []DocumentInfo
	hubs := s.reg.all()
	defer func() {
		for _, h := range hubs {
			s.reg.release(h)
		}
	}()
	for _, h := range hubs {
		res := make(chan DocumentInfo, 1)
		if !h.postCtx(ctx, infoMsg{res}) {
			continue
		}
		select {
		case info := <-res:
			if info.Name != "" {
				// IDs are "c" and a number: shorter is older.
				sort.Slice(info.Peers, func(i, j int) bool {
					a, b := info.Peers[i].ID, info.Peers[j].ID
					return len(a) < len(b) || len(a) == len(b) && a < b
				})
				info.Peers = info.Peers[:min(len(info.Peers), MaxListedPeers)]
				out = append(out, info)
			}
		case <-ctx.Done():
			return out
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// subscriber is woken (never blocked) by its hub when new commits are
// durable; it reads them from the document's tail, or from the store when
// the tail no longer holds them (a resume from an old cursor, or a
// subscriber that fell off), so a slow subscriber costs the hub nothing and
// sees every cursor exactly once.
type subscriber struct {
	wake chan struct{}
	// read is the cursor it has handed on through: the hub lets the tail
	// go no further (hub.wakeMembers).
	read atomic.Uint64
	// gone is closed, with why set first, when the hub ends the
	// subscription (the document was deleted).
	gone chan struct{}
	why  error
}

// stop ends the subscription with why; on the hub goroutine, once.
func (s *subscriber) stop(why error) {
	s.why = why
	close(s.gone)
}

// stopped returns why the hub ended the subscription, or nil.
func (s *subscriber) stopped() error {
	select {
	case <-s.gone:
		return s.why
	default:
		return nil
	}
}

func (s *subscriber) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Subscribe calls fn with every commit of the document after cursor after,
// in order, with no gap and no duplicate, then with each new one as it
// becomes durable, until ctx ends or fn returns an error. When after is
// older than the store retains, fn first gets a snapshot event at some
// cursor, then every commit after it.
func (s *Server) Subscribe(ctx context.Context, name string, after uint64, fn func(Event) error) error {
	h := s.reg.acquire(name)
	if h == nil {
		return errTooMany(s)
	}
	defer s.reg.release(h)
	sub := &subscriber{wake: make(chan struct{}, 1), gone: make(chan struct{})}
	sub.read.Store(after)
	if !h.post(subscribeMsg{sub: sub, add: true}) {
		return ErrClosed
	}
	defer h.post(subscribeMsg{sub: sub})
	next := after + 1
	const page = 512
	var buf []tail.Entry[tailItem]
	for {
		if err := sub.stopped(); err != nil {
			return err
		}
		// Live: the tail holds every durable commit after its oldest, so
		// a cursor within it is answered without the store.
		if next-1 <= h.tail.Head() {
			es, err := h.tail.Read(next-1, buf[:0], page<<10)
			if err == nil {
				for i := range es {
					e := &es[i]
					if err := fn(Event{Document: name, Cursor: e.Cursor, Origin: e.Item.origin, Commit: e.Bytes, Paths: e.Item.paths}); err != nil {
						return err
					}
					next = e.Cursor + 1
					sub.read.Store(e.Cursor)
				}
				clear(es) // do not pin what the tail lets go
				buf = es[:0]
				if len(es) > 0 {
					continue
				}
				if err := sub.wait(ctx, h); err != nil {
					return err
				}
				continue
			}
			// Fallen off: the store has what the tail let go.
		}
		recs, err := s.store.Read(ctx, name, next, page)
		if err != nil && sub.stopped() != nil {
			return sub.stopped()
		}
		if errors.Is(err, store.ErrCompacted) {
			ev, err := s.snapshotEvent(ctx, h)
			if err != nil {
				return err
			}
			if err := fn(ev); err != nil {
				return err
			}
			next = ev.Cursor + 1
			sub.read.Store(ev.Cursor)
			continue
		}
		if errors.Is(err, store.ErrUnknownDocument) && s.held(ctx, h) {
			// A new document is stored with its first commit: until then
			// there is nothing to read, and the wake says when there is.
			recs, err = nil, nil
		}
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := fn(Event{Document: name, Cursor: r.Cursor, Origin: r.Origin, Commit: r.Commit}); err != nil {
				return err
			}
			next = r.Cursor + 1
			sub.read.Store(r.Cursor)
		}
		if len(recs) > 0 {
			continue // a read may stop short at its byte bound
		}
		if err := sub.wait(ctx, h); err != nil {
			return err
		}
	}
}

// wait returns when the hub has woken the subscriber, or why it ends.
func (s *subscriber) wait(ctx context.Context, h *hub) error {
	select {
	case <-s.wake:
		return nil
	case <-s.gone:
		return s.why
	case <-h.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// held says whether h holds a document, stored or not yet.
func (s *Server) held(ctx context.Context, h *hub) bool {
	res := make(chan bool, 1)
	if !h.postCtx(ctx, heldMsg{res}) {
		return false
	}
	select {
	case ok := <-res:
		return ok
	case <-ctx.Done():
		return false
	}
}

func (s *Server) snapshotEvent(ctx context.Context, h *hub) (Event, error) {
	res := make(chan snapshotAnswer, 1)
	if !h.postCtx(ctx, snapshotMsg{res}) {
		if ctx.Err() != nil {
			return Event{}, ctx.Err()
		}
		return Event{}, ErrClosed
	}
	select {
	case a := <-res:
		return a.ev, a.err
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// snapshotAnswer is a subscription's snapshot event, or why there is none.
type snapshotAnswer struct {
	ev  Event
	err error
}

// snapshotAnswer is the durable state as a snapshot event; on the hub
// goroutine, once settled.
func (h *hub) snapshotAnswer() snapshotAnswer {
	if h.doc == nil {
		return snapshotAnswer{err: ErrNoDocument}
	}
	id, kind := h.doc.Root()
	return snapshotAnswer{ev: Event{Document: h.name, Cursor: h.log.Durable(), Snapshot: true, Root: frame.Root{ID: id, Kind: kind}, State: h.snapshotBytes()}}
}

// info describes the document for Documents; on the hub goroutine. A hub
// for a name nobody holds answers with no name.
func (h *hub) info() DocumentInfo {
	if h.doc == nil {
		return DocumentInfo{}
	}
	id, kind := h.doc.Root()
	info := DocumentInfo{Name: h.name, Root: frame.Root{ID: id, Kind: kind}, Cursor: h.log.Cursor(), Durable: h.log.Durable(), Links: len(h.members), Subscribers: len(h.subs), Pending: h.pipe.Len()}
	for c := range h.members {
		info.Peers = append(info.Peers, Peer{ID: c.id, Remote: c.addr, Identity: c.identity})
	}
	return info
}
