package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/weftgate/weftgate/gateway/docsm"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/gateway/tail"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// hub is the one goroutine that owns a document: its replica, its cursor,
// its members and its subscribers. Everything reaches it through inbox as a
// function run on the hub goroutine. It never blocks on a socket or the
// authority, and its appends run off it; it calls the store itself only to
// load the document (at start, and to learn what a failed append left), to
// take a backend's loaded document and for its final snapshot. Those stall
// this document alone: whatever answers it meanwhile (the authority, an
// append) queues without blocking the answerer.
type hub struct {
	name    string
	srv     *Server
	inbox   chan func()
	replies replyQueue
	done    chan struct{}
	evict   chan struct{} // closed by the registry to drop an idle hub at its bound
	refs    int           // guarded by srv.reg.mu
	// idle says the hub had nothing in flight when its last reference
	// went, so the registry may drop it at once; guarded by srv.reg.mu.
	idle bool
	quit bool // unloaded: run returns

	loadErr error
	doc     *document.Document
	// log holds the cursors (last applied, last durable) and the applied
	// commits on their way to the store (docsm.Log: pure, by transcript).
	log    docsm.Log[applied]
	snapAt uint64 // cursor of the last stored snapshot
	// stored says the store holds the document. A peer's new document is
	// stored with its first landed commit, so a creation that is refused,
	// or never gets its state, writes nothing.
	stored   bool
	creating bool // an empty creation's snapshot is being stored
	// size bounds the document's encoded state from above: exact when
	// measured, plus the bytes of every commit since (a commit grows a
	// state by at most its own size). Past MaxDocumentBytes it is measured.
	size int

	members map[*conn]*member
	subs    map[*subscriber]struct{}
	// tail holds the durable commits for members and subscribers to read
	// from their own cursors: the hub appends each once and wakes idle
	// readers (decision 031). Nobody reading, it is emptied at the durable
	// cursor (when the last reader goes and the first comes).
	tail *tail.Tail[tailItem]

	// creator is the member whose state will become this new document; state
	// requests wait until it has arrived (notes section 12).
	creator      *member
	creatorTimer *time.Timer

	// pipe holds the commits waiting for their verdicts and their turn
	// (docsm.Pipeline: pure, tested by transcript). One timer, for the
	// earliest unanswered question, bounds them all (a timer per commit was
	// two allocations each); judgeAt is when it is set for (zero: unset).
	pipe       *docsm.Pipeline[*pendingCommit]
	judgeTimer *time.Timer
	judgeAt    time.Time

	waiting []waiter // run once everything applied is durable

	idleTimer *time.Timer
	idleArmed bool

	loadAsked bool          // a backend Loader's answer was taken for this document
	loadWait  []func(error) // opens and calls waiting for its answer

	storeCalls int       // appendWait calls in flight: a delete waits for them
	deleting   *deletion // an operator's delete under way (admin.go)
}

type member struct {
	c  *conn
	ts *topicState // the link's side of it, for the topic number
	// owed is the state it asked for and the commits that state covers
	// (docsm.Owed: taken when wanted, sent once durable; decision 025).
	owed docsm.Owed
	// stateIn: a creator's state arrived (it is judged or applied).
	stateIn bool
}

// tailItem is what the tail keeps with a commit: its origin as stored (a
// link's id when link is set: that link does not get it back), and each
// delta's path at apply (what the authority was shown), for subscribers.
// An id, not the conn: the tail must not keep ended connections alive.
type tailItem struct {
	link   bool
	origin string
	paths  [][]string
}

type pendingCommit struct {
	origin Origin
	from   *conn // nil for a backend write
	seq    uint64
	c      commit.Commit
	bytes  []byte
	credit *frameCredit
	result func(cursor uint64, err error) // backend writes: once durable or refused
	expect *uint64                        // compare-and-swap cursor for backend writes
	// state marks a commit that moves the document to a state (a creator's,
	// or a backend's ReplaceState): a write, judged like a commit and asked
	// as a state (issue 19). creator is set for a creator's state.
	state   bool
	creator *member
	// paths and askedAt are what the authority was shown and the cursor
	// it was shown at.
	paths   [][]string
	askedAt uint64
}

type applied struct {
	rec    store.Record
	paths  [][]string // each delta's path at apply
	from   *conn
	seq    uint64
	result func(uint64, error)
	credit *frameCredit
}

func newHub(s *Server, name string) *hub {
	h := &hub{
		name:    name,
		srv:     s,
		inbox:   make(chan func(), 1024),
		replies: replyQueue{wake: make(chan struct{}, 1)},
		done:    make(chan struct{}),
		evict:   make(chan struct{}),
		members: make(map[*conn]*member),
		pipe: docsm.NewPipeline[*pendingCommit](docsm.PipelineConfig{
			MaxInFlight: s.cfg.MaxInFlightVerdicts,
			Timeout:     s.cfg.JudgeTimeout,
			TimedOut:    Refuse(ReasonAuthorityTimeout, "the authority did not answer in time"),
		}),
		subs: make(map[*subscriber]struct{}),
		tail: tail.New[tailItem](tail.Config{MaxCommits: s.cfg.TailCommits, MaxBytes: s.cfg.TailBytes}),
	}
	s.track(h.run)
	return h
}

// post runs fn on the hub goroutine. It blocks while the inbox is full and
// gives up when the hub has stopped.
func (h *hub) post(fn func()) bool {
	select {
	case h.inbox <- fn:
		return true
	case <-h.done:
		return false
	}
}

// postCtx is post that also gives up when ctx ends.
func (h *hub) postCtx(ctx context.Context, fn func()) bool {
	select {
	case h.inbox <- fn:
		return true
	case <-h.done:
		return false
	case <-ctx.Done():
		return false
	}
}

func (h *hub) run() {
	defer close(h.done)
	h.load()
	idle := time.NewTimer(time.Hour)
	idle.Stop()
	h.idleTimer = idle
	defer idle.Stop()
	for {
		select {
		case fn := <-h.inbox:
			fn()
		case <-h.replies.wake:
			h.replies.run()
		case <-idle.C:
			h.idleArmed = false
			if h.unloadable() && h.srv.reg.tryUnload(h) {
				h.unload()
				return
			}
		case <-h.evict:
			// The registry dropped us for a new document: nothing is in
			// flight (see registry.evictIdle), and the store has every
			// commit; a final snapshot would race the name's next hub.
			h.stopCreatorTimer()
			return
		case <-h.srv.stopHubs:
			h.drain()
			return
		}
		if h.quit {
			h.stopCreatorTimer()
			return
		}
	}
}

// load reads the document from the store: its snapshot plus every record
// after it.
func (h *hub) load() {
	h.loadErr = h.loadFrom(h.srv.ctx)
	if h.loadErr != nil {
		h.doc = nil
		h.srv.log.Error("load document", "document", h.name, "err", h.loadErr)
	}
}

// storeLoaded says whether the store load stands, retrying a failed one
// when nobody holds the old replica (the store may be back).
func (h *hub) storeLoaded() bool {
	if h.loadErr != nil && len(h.members) == 0 {
		h.load()
	}
	return h.loadErr == nil
}

func (h *hub) loadFrom(ctx context.Context) error {
	snap, tail, err := h.srv.store.Load(ctx, h.name)
	if errors.Is(err, store.ErrUnknownDocument) {
		return nil
	}
	if err != nil {
		return err
	}
	d := document.New(commit.ID(snap.Root), commit.Kind(snap.RootKind), h.srv.cfg.DocumentLimits)
	if len(snap.State) > 0 {
		st, err := commit.Decode(snap.State)
		if err == nil {
			_, err = d.Reconcile(st)
		}
		if err != nil {
			return fmt.Errorf("snapshot of %q at %d: %w", h.name, snap.Cursor, err)
		}
	}
	cursor := snap.Cursor
	for len(tail) > 0 {
		for _, r := range tail {
			c, err := commit.Decode(r.Commit)
			if err == nil {
				err = d.Update(c)
			}
			if err != nil {
				return fmt.Errorf("record %d of %q: %w", r.Cursor, h.name, err)
			}
			cursor = r.Cursor
		}
		if tail, err = h.srv.store.Read(ctx, h.name, cursor+1, 0); err != nil {
			return err
		}
	}
	h.doc = d
	h.log.Restart(cursor)
	h.snapAt = snap.Cursor
	h.stored = true
	h.size = len(h.snapshotBytes())
	return nil
}

func (h *hub) unloadable() bool {
	return len(h.members) == 0 && len(h.subs) == 0 && !h.pipe.Undecided() && len(h.loadWait) == 0 && !h.creating &&
		h.log.Settled() && h.storeCalls == 0 && h.deleting == nil
}

// maybeIdle arms the idle timer once; a brief reference in between (a
// status read) does not push the unload back. A hub that holds nothing the
// store has (a name that was never there, a creation that never landed)
// goes at once: a flood of such names must not fill MaxDocuments.
func (h *hub) maybeIdle() {
	if !h.unloadable() {
		return
	}
	if (h.doc == nil || !h.stored) && h.srv.reg.tryUnload(h) {
		h.quit = true
		return
	}
	h.srv.reg.markIdle(h)
	if !h.idleArmed {
		h.idleArmed = true
		h.idleTimer.Reset(h.srv.cfg.IdleUnload)
	}
}

// unload stores a final snapshot when commits passed since the last one.
func (h *hub) unload() {
	h.stopCreatorTimer()
	if h.doc != nil && h.stored && h.log.Durable() > h.snapAt {
		h.writeSnapshot(true)
	}
}

// drain runs at shutdown: finish what is in flight, then store a snapshot.
func (h *hub) drain() {
	deadline := time.After(h.srv.cfg.JudgeTimeout)
	for h.pipe.Undecided() || !h.log.Settled() {
		select {
		case fn := <-h.inbox:
			fn()
		case <-h.replies.wake:
			h.replies.run()
		case <-deadline:
			h.srv.log.Warn("shutdown left commits unsettled", "document", h.name, "pending", h.pipe.Len())
			return
		}
	}
	h.unload()
}

// --- opening ---------------------------------------------------------------

// open handles a peer's open for this document on connection c.
func (h *hub) open(c *conn, ts *topicState, peerRoot *frame.Root, want bool) {
	if !h.storeLoaded() {
		c.post(connMsg{kind: msgDecline, name: h.name, reason: ReasonStoreUnavailable, text: "the document could not be loaded"})
		return
	}
	req := OpenRequest{Document: h.name, Identity: c.identity, Exists: h.doc != nil, Root: peerRoot, Want: want, Link: c.id, RemoteAddr: c.addr}
	h.ask(func(reply func(func())) {
		h.srv.cfg.Authority.MayOpen(req, func(err error) {
			reply(func() { h.openDecided(c, ts, peerRoot, want, err) })
		})
	})
}

// ask calls an authority method that answers through a callback. An answer
// given during the call runs at once; a later one comes back through
// replies, so the authority never runs on, or blocks, the hub goroutine
// after the call returns.
func (h *hub) ask(call func(reply func(func()))) {
	g := &replyGate{h: h, inCall: true}
	call(g.reply)
	g.mu.Lock()
	g.inCall = false
	fn := g.now
	g.mu.Unlock()
	if fn != nil {
		fn()
	}
}

// replyGate is one question's way back to the hub: a reply made during the
// call runs when the call returns, any later one goes through h.replies.
// One struct rather than three captured variables, since every judged
// commit makes one.
type replyGate struct {
	h      *hub
	mu     sync.Mutex
	inCall bool
	now    func()
}

func (g *replyGate) reply(fn func()) {
	g.mu.Lock()
	if g.inCall {
		g.now = fn
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	g.h.replies.push(fn)
}

// replyQueue carries the authority's answers to the hub without ever
// blocking the answerer: a bridge stream's receive loop answers for every
// document it judges, so one document busy in a store call must not hold it
// (and with it every other document on that stream). It is bounded by what
// may be outstanding: MaxInFlightVerdicts verdicts, and one answer per open
// or load under way.
type replyQueue struct {
	mu   sync.Mutex
	q    []func()
	wake chan struct{}
}

func (r *replyQueue) push(fn func()) {
	r.mu.Lock()
	r.q = append(r.q, fn)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run runs every answer queued so far, in order.
func (r *replyQueue) run() {
	r.mu.Lock()
	q := r.q
	r.q = nil
	r.mu.Unlock()
	for i, fn := range q {
		q[i] = nil
		fn()
	}
}

func (h *hub) openDecided(c *conn, ts *topicState, peerRoot *frame.Root, want bool, err error) {
	if err == nil && h.deleting != nil {
		err = errDeleting
	}
	if err != nil {
		// The authority's own reason when it gave one, else forbidden.
		reason := protocol.ReasonOf(err)
		if reason == "" {
			reason = ReasonForbidden
		}
		c.post(connMsg{kind: msgDecline, name: h.name, reason: reason, text: err.Error()})
		return
	}
	if h.doc != nil {
		root, kind := h.doc.Root()
		// A peer that asked for state is owed it from now: nothing is
		// delivered to it until the state, which covers it, is sent.
		m := &member{c: c, ts: ts}
		if want {
			m.owed.Want()
		}
		h.join(m)
		c.post(connMsg{kind: msgShare, name: h.name, root: &frame.Root{ID: root, Kind: kind}, cursor: h.log.Durable(), owed: want})
		return
	}
	if h.mayLoad() {
		// Ask a backend for the document before minting one; a failed
		// load declines the open rather than let the peer mint a second
		// document under the name.
		h.withLoaded(func(err error) { h.openDecided(c, ts, peerRoot, want, err) })
		return
	}
	if peerRoot == nil {
		c.post(connMsg{kind: msgDecline, name: h.name, reason: protocol.NoDocument})
		return
	}
	// Mint the document from the peer's root and ask for its state. It is
	// stored with its first landed commit (the state, once judged), so
	// nothing is written for a creation that is refused or abandoned.
	h.doc = document.New(peerRoot.ID, peerRoot.Kind, h.srv.cfg.DocumentLimits)
	h.size = 0
	m := &member{c: c, ts: ts}
	h.join(m)
	h.creator = m
	h.creatorTimer = time.AfterFunc(h.srv.cfg.StateTimeout, func() { h.post(func() { h.creatorLate(m) }) })
	c.post(connMsg{kind: msgShare, name: h.name, root: peerRoot, want: true, cursor: h.log.Durable()})
}

// join makes m a member. It reads the tail from the durable cursor (the
// commits made durable from now on), or, when it asked for the state,
// from that state's cursor once the state is sent.
func (h *hub) join(m *member) {
	h.resetUnread()
	h.members[m.c] = m
	m.ts.read.Store(h.log.Durable())
}

// storeEmpty stores a new empty document, which no commit will store. An
// append that overtakes it stores the same creation first; the later of the
// two is harmless (the same root at cursor 0).
func (h *hub) storeEmpty() {
	if h.stored || h.creating || h.doc == nil {
		return
	}
	h.creating = true
	root, kind := h.doc.Root()
	snap := store.Snapshot{Cursor: h.log.Cursor(), Root: root, RootKind: uint8(kind)}
	name, st, ctx, log := h.name, h.srv.store, h.srv.ctx, h.srv.log
	h.srv.track(func() {
		err := st.PutSnapshot(ctx, name, snap)
		h.post(func() {
			h.creating = false
			if err != nil {
				log.Error("create document", "document", name, "err", err)
			} else if h.doc != nil && h.log.Cursor() == 0 {
				h.stored = true
			}
			h.maybeIdle()
		})
	})
}

// creatorLate ends a creation whose state did not come within StateTimeout:
// a peer must not hold a name, and every joiner of it, by never answering.
func (h *hub) creatorLate(m *member) {
	if h.creator != m || m.stateIn {
		return
	}
	h.srv.metrics.fault(string(ReasonStateTimeout))
	h.abandonCreation(ReasonStateTimeout, "the document's state did not arrive in time")
}

func (h *hub) stopCreatorTimer() {
	if h.creatorTimer != nil {
		h.creatorTimer.Stop()
		h.creatorTimer = nil
	}
}

// abandonCreation ends the creator's topic with reason. A document the
// store does not hold yet is dropped, and its other members' topics end
// with no-document (each may create or join it again).
func (h *hub) abandonCreation(reason protocol.Reason, text string) {
	m := h.creator
	h.creator = nil
	h.stopCreatorTimer()
	if m != nil && h.members[m.c] == m {
		delete(h.members, m.c)
		m.c.post(connMsg{kind: msgEnd, name: h.name, reason: reason, text: text})
	}
	if !h.stored {
		h.doc = nil
		for c := range h.members {
			c.post(connMsg{kind: msgEnd, name: h.name, reason: protocol.NoDocument, text: "the document's creation did not complete"})
			delete(h.members, c)
		}
	} else {
		h.retakeStates(false)
	}
	h.runWaiting()
}

// mayLoad says whether a backend Loader should be asked for the document
// before anything reads, writes or mints it: none is held, the store did
// not fail, and no answer for it has been taken yet.
func (h *hub) mayLoad() bool {
	_, ok := h.srv.cfg.Authority.(Loader)
	return ok && h.doc == nil && h.loadErr == nil && !h.loadAsked
}

// withLoaded runs fn once a backend Loader, when there is one to ask, has
// answered for the document, with the load's error (nil when the document
// was loaded or the backend does not have it either); work that arrives
// meanwhile waits for the same answer.
func (h *hub) withLoaded(fn func(error)) {
	if !h.mayLoad() {
		fn(nil)
		return
	}
	h.loadWait = append(h.loadWait, fn)
	if len(h.loadWait) > 1 {
		return
	}
	l := h.srv.cfg.Authority.(Loader)
	name, ctx := h.name, h.srv.ctx
	h.srv.track(func() {
		doc, found, err := l.Load(ctx, name)
		h.post(func() { h.backendLoaded(doc, found, err) })
	})
}

// backendLoaded takes a backend's answer to a load: a document to hold, or
// nothing (the waiting work then goes on as if there were no loader). When
// it brought no document, the next open or call asks again: the backend may
// have been away or have made the document since.
func (h *hub) backendLoaded(doc Loaded, found bool, err error) {
	h.loadAsked = true
	if found && err == nil && h.doc == nil && h.deleting == nil {
		if aerr := h.adopt(doc); aerr != nil {
			h.srv.log.Warn("backend load refused", "document", h.name, "err", aerr)
			err = protocol.Errorf(ReasonStoreUnavailable, "the backend's document could not be taken; retry later")
		}
	} else if err != nil {
		h.srv.log.Warn("backend load", "document", h.name, "err", err)
		if protocol.ReasonOf(err) == "" {
			err = protocol.Errorf(ReasonStoreUnavailable, "the backend could not load the document; retry later")
		}
	}
	w := h.loadWait
	h.loadWait = nil
	for _, fn := range w {
		fn(err)
	}
	if h.doc == nil {
		h.loadAsked = false
	}
}

// adopt makes a loaded state the document at the loader's cursor, durable
// before anyone sees it.
func (h *hub) adopt(doc Loaded) error {
	root, state := doc.Root, doc.State
	d := document.New(root.ID, root.Kind, h.srv.cfg.DocumentLimits)
	if state != nil {
		st, err := commit.DecodeWithLimits(state, h.srv.cfg.CommitLimits)
		if err != nil {
			return err
		}
		if _, err := d.Reconcile(st); err != nil {
			return err
		}
	}
	if len(state) > h.srv.cfg.MaxDocumentBytes {
		return protocol.Errorf(ReasonDocumentTooLarge, fmt.Sprintf("the backend's %d-byte document is over the %d-byte bound", len(state), h.srv.cfg.MaxDocumentBytes))
	}
	snap := store.Snapshot{Cursor: doc.Cursor, State: state, Root: root.ID, RootKind: uint8(root.Kind)}
	if err := h.srv.store.PutSnapshot(h.srv.ctx, h.name, snap); err != nil {
		return err
	}
	h.doc = d
	h.log.Restart(doc.Cursor)
	h.snapAt = doc.Cursor
	h.stored, h.size = true, len(state)
	return nil
}

// persistCreation stores an empty snapshot, which creates the document in
// the store, before its first append can run. It blocks the hub for one
// write; documents are created rarely.
func (h *hub) persistCreation(root frame.Root) error {
	snap := store.Snapshot{Cursor: h.log.Cursor(), Root: root.ID, RootKind: uint8(root.Kind)}
	return h.srv.store.PutSnapshot(h.srv.ctx, h.name, snap)
}

// leave removes c from the members.
func (h *hub) leave(c *conn) {
	m := h.members[c]
	if m == nil {
		return
	}
	delete(h.members, c)
	h.resetUnread()
	if h.creator == m && !m.stateIn {
		h.abandonCreation(ReasonClosed, "")
	}
}

// resetUnread empties the tail at the durable cursor when nobody reads it:
// its commits are let go, and whoever comes next starts from a tail that
// agrees with the document's cursor (which a delete moves back).
func (h *hub) resetUnread() {
	if len(h.members) == 0 && len(h.subs) == 0 {
		h.tail.Reset(h.log.Durable())
	}
}

// stateWanted answers a peer's want once everything applied is durable and
// no initial state is outstanding. Until it is sent the member is owed it
// and hears no commits: the state covers them (replication.md section 2).
func (h *hub) stateWanted(c *conn) {
	m := h.members[c]
	if m == nil {
		return
	}
	if m.owed.Want() && h.creator == nil {
		h.takeState(m)
	}
}

// takeState takes m's owed state at the current cursor and sends it once
// that cursor is durable. While a creator's state is outstanding it is not
// taken: an empty state would wipe a client that holds the document (notes
// section 12); creatorDone takes it once the creator's state has landed.
func (h *hub) takeState(m *member) {
	m.owed.Take(h.snapshotBytes(), h.log.Cursor())
	h.sendDueStates(h.log.Durable())
}

// sendDueStates sends every taken state whose cursor is durable.
func (h *hub) sendDueStates(durable uint64) {
	for c, m := range h.members {
		h.sendDue(c, m, durable)
	}
}

// sendDue sends m its taken state when durable has reached it. m then
// reads the tail after the state's cursor: it never gets a commit the
// state covers, and the state goes before every commit after it.
func (h *hub) sendDue(c *conn, m *member, durable uint64) {
	if st, ok := m.owed.Due(durable); ok {
		m.ts.read.Store(m.owed.After())
		c.post(connMsg{kind: msgState, name: h.name, data: st, cursor: m.owed.After()})
	}
}

// creatorDone lets the wants that waited for the creator's state go.
func (h *hub) creatorDone() {
	h.creator = nil
	h.stopCreatorTimer()
	h.retakeStates(false)
}

// retakeStates takes the owed states not yet taken, or all of them (after
// a store failure moved the cursor back under a taken one).
func (h *hub) retakeStates(all bool) {
	if h.doc == nil {
		return
	}
	for _, m := range h.members {
		if m.owed.Wanted() && (all || !m.owed.Taken()) {
			m.owed.Take(h.snapshotBytes(), h.log.Cursor())
		}
	}
	h.sendDueStates(h.log.Durable())
}

// waiter is work that must see the replica equal to what is durable (and,
// with idle, with no commit waiting for a verdict either).
type waiter struct {
	idle bool
	fn   func()
}

func (h *hub) settled() bool {
	return h.creator == nil && h.log.Settled()
}

func (h *hub) whenSettled(fn func()) { h.wait(waiter{fn: fn}) }
func (h *hub) whenIdle(fn func())    { h.wait(waiter{idle: true, fn: fn}) }

func (h *hub) wait(w waiter) {
	if h.settled() && (!w.idle || !h.pipe.Undecided()) && len(h.waiting) == 0 {
		w.fn()
		return
	}
	h.waiting = append(h.waiting, w)
}

// runWaiting runs waiters in order while their condition holds.
func (h *hub) runWaiting() {
	for len(h.waiting) > 0 && h.settled() {
		w := h.waiting[0]
		if w.idle && h.pipe.Undecided() {
			return
		}
		h.waiting = h.waiting[1:]
		w.fn()
	}
}

func (h *hub) snapshotBytes() []byte {
	if h.doc == nil {
		return nil
	}
	s := h.doc.Snapshot()
	if len(s.Deltas) == 0 {
		return nil
	}
	b, err := commit.Encode(s)
	if err != nil {
		// A document that applied only valid commits always encodes.
		panic(fmt.Sprintf("gateway: snapshot of %q does not encode: %v", h.name, err))
	}
	return b
}

// stateArrived takes the state the creator sent. It makes the document's
// content, so it is a write: the commit that moves the new document to it
// is judged like any commit (marked as a state) and applied in order; the
// creator's hold on joiners lasts until it has landed or was refused.
func (h *hub) stateArrived(c *conn, st commit.Commit) {
	m := h.members[c]
	if m == nil || h.creator != m || m.stateIn {
		return
	}
	m.stateIn = true
	h.stopCreatorTimer()
	diff, err := h.doc.Clone().Reconcile(st)
	if err != nil {
		h.abandonCreation(protocol.ReasonOf(err), err.Error())
		return
	}
	if len(diff.Deltas) == 0 {
		// An empty document carries no content to judge (MayOpen, told the
		// open creates, already allowed the creation): store it as such.
		h.creatorDone()
		h.storeEmpty()
		h.runWaiting()
		return
	}
	b, err := commit.Encode(diff)
	if err != nil {
		panic(fmt.Sprintf("gateway: reconcile diff does not encode: %v", err))
	}
	h.commit(&pendingCommit{origin: c.origin, from: c, c: diff, bytes: b, state: true, creator: m})
}

// --- commits ---------------------------------------------------------------

// commit queues a commit from a link or a backend for its verdict.
func (h *hub) commit(p *pendingCommit) {
	switch {
	case h.deleting != nil:
		h.settle(p, errDeleted)
		return
	case p.from != nil && h.members[p.from] == nil:
		// Sent before the link heard its topic end (a delete, an
		// operator's end): it must not land in whatever holds the name now.
		h.settle(p, errTopicEnded)
		return
	case h.loadErr != nil:
		h.settle(p, protocol.Errorf(ReasonStoreUnavailable, "the document could not be loaded; retry later"))
		return
	case h.doc == nil:
		h.settle(p, protocol.Errorf(protocol.NoDocument, "the document does not exist"))
		return
	case h.pipe.Len()+h.log.InFlight() >= h.srv.cfg.MaxPendingPerDocument:
		h.settle(p, protocol.Errorf(protocol.TooManyPendingCommit, "the document has too many commits waiting; retry later"))
		return
	}
	h.pipe.Add(p)
	h.askMore()
}

// askMore asks the authority about pending commits up to the in-flight
// bound, and sets the timer for the earliest unanswered question.
func (h *hub) askMore() {
	for _, q := range h.pipe.Ask(time.Now()) {
		h.judge(q.Item, q.Ticket)
	}
	h.armJudge()
}

// judge asks the authority about p; its answer comes back with t.
func (h *hub) judge(p *pendingCommit, t docsm.Ticket[*pendingCommit]) {
	p.paths, p.askedAt = h.doc.Paths(p.c), h.log.Cursor()
	req := &AcceptRequest{Document: h.name, Cursor: h.log.Cursor(), Origin: p.origin, Commit: p.c, Bytes: p.bytes, Paths: p.paths, State: p.state}
	h.ask(func(reply func(func())) {
		h.srv.cfg.Authority.Judge(req, func(v Verdict) {
			reply(func() { h.verdict(t, v) })
		})
	})
}

// armJudge sets the one timer for the earliest unanswered question.
func (h *hub) armJudge() {
	at, ok := h.pipe.Deadline()
	if !ok || !h.judgeAt.IsZero() && !at.Before(h.judgeAt) {
		return
	}
	h.judgeAt = at
	if h.judgeTimer == nil {
		h.judgeTimer = time.AfterFunc(time.Until(at), func() { h.post(h.judgeExpired) })
		return
	}
	h.judgeTimer.Reset(time.Until(at))
}

// judgeExpired refuses every question past its deadline with
// authority-timeout.
func (h *hub) judgeExpired() {
	h.judgeAt = time.Time{}
	h.pipe.Expire(time.Now())
	h.decide()
}

// verdict takes the authority's answer (a late one is dropped) and applies
// what is now decided, in order.
func (h *hub) verdict(t docsm.Ticket[*pendingCommit], v Verdict) {
	if h.pipe.Answer(t, v) {
		h.decide()
	}
}

func (h *hub) decide() {
	for {
		d, ok := h.pipe.Next(h.staleAsk)
		if !ok {
			break
		}
		h.apply(d.Item, d.Verdict)
	}
	h.askMore()
	h.runWaiting()
}

// staleAsk says whether an accepted commit's paths, asked while commits
// before it were in flight, are no longer its paths. The same paths go to
// the authority and, from the subscription's replica, to subscribers; a
// backend that judges by path must never be shown a stale one (a commit
// writing into an observable that an earlier commit moved under a
// protected key would otherwise pass as written where it was).
func (h *hub) staleAsk(p *pendingCommit) bool {
	if h.doc == nil || p.askedAt == h.log.Cursor() {
		return false
	}
	now := h.doc.Paths(p.c)
	for i := range now {
		if !slices.Equal(now[i], p.paths[i]) || (now[i] == nil) != (p.paths[i] == nil) {
			return true
		}
	}
	return false
}

func (h *hub) apply(p *pendingCommit, v Verdict) {
	if !v.Accepted() {
		h.settle(p, &refusal{reasons: v.Reasons})
		return
	}
	if h.doc == nil { // a store failure unloaded it while the verdict was out
		h.settle(p, protocol.Errorf(ReasonStoreUnavailable, "the document could not be loaded; retry later"))
		return
	}
	if p.expect != nil && *p.expect != h.log.Cursor() {
		h.settle(p, &CursorMismatch{Expected: *p.expect, Actual: h.log.Cursor()})
		return
	}
	if err := h.update(p.c, len(p.bytes)); err != nil {
		h.settle(p, err)
		return
	}
	h.landed(applied{rec: store.Record{Commit: p.bytes, Origin: p.origin.ID}, paths: p.paths, from: p.from, seq: p.seq, result: p.result, credit: p.credit})
	if p.creator != nil && h.creator == p.creator {
		h.creatorDone() // its state landed: joiners' states may be taken
	}
}

// update applies c (n encoded bytes) unless the document's state would pass
// MaxDocumentBytes: a state a joiner cannot receive in one message would
// leave it with an open and then silence (issue 19).
func (h *hub) update(c commit.Commit, n int) error {
	max := h.srv.cfg.MaxDocumentBytes
	if h.size+n <= max {
		if err := h.doc.Update(c); err != nil {
			return err
		}
		h.size += n
		return nil
	}
	inv, err := h.doc.Apply(c)
	if err != nil {
		return err
	}
	size := len(h.snapshotBytes())
	if size > max {
		if err := h.doc.Update(inv); err != nil {
			panic(fmt.Sprintf("gateway: the inverse of a commit does not apply to %q: %v", h.name, err))
		}
		return protocol.Errorf(ReasonDocumentTooLarge, fmt.Sprintf("the commit would make the document %d bytes, over the %d-byte bound", size, max))
	}
	h.size = size
	return nil
}

// landed gives an applied commit its cursor and queues it for the store.
func (h *hub) landed(a applied) {
	a.rec.Cursor = h.log.Cursor() + 1
	h.log.Land(a)
	h.flush()
}

// flush starts one store append for everything unflushed, unless one is
// already running: the store's group commit gathers appends across
// documents, and each hub keeps one in flight.
func (h *hub) flush() {
	batch := h.log.Flush()
	if batch == nil {
		return
	}
	recs := make([]store.Record, len(batch))
	for i, e := range batch {
		recs[i] = e.Item.rec
	}
	name, st, ctx := h.name, h.srv.store, h.srv.ctx
	var create *store.Snapshot
	if !h.stored {
		root, kind := h.doc.Root()
		create = &store.Snapshot{Cursor: batch[0].Cursor - 1, Root: root, RootKind: uint8(kind)}
	}
	h.srv.track(func() {
		var err error
		if create != nil {
			// The new document's first landed commit stores it.
			err = st.PutSnapshot(ctx, name, *create)
		}
		if err == nil {
			err = st.Append(ctx, name, recs)
		}
		h.post(func() { h.appended(err) })
	})
}

// appended fans out a batch the store made durable, or refuses it.
func (h *hub) appended(err error) {
	if h.deleting != nil {
		h.deleteAppended()
		return
	}
	if err != nil {
		h.storeFailed(err)
		return
	}
	h.stored = true
	h.madeDurable(h.log.Appended())
	if h.log.Durable()-h.snapAt >= uint64(h.srv.cfg.SnapshotEvery) && h.log.Settled() {
		h.writeSnapshot(false)
	}
	h.flush()
	h.runWaiting()
	h.maybeIdle()
}

// madeDurable delivers commits the store holds and settles them.
func (h *hub) madeDurable(batch []docsm.Landed[applied]) {
	es := make([]tail.Entry[tailItem], len(batch))
	for i, e := range batch {
		a := &e.Item
		es[i] = tail.Entry[tailItem]{Cursor: e.Cursor, Bytes: a.rec.Commit, Item: tailItem{link: a.from != nil, origin: a.rec.Origin, paths: a.paths}}
	}
	h.tail.Append(es...)
	h.deliver()
	for _, e := range batch {
		a := e.Item
		if a.result != nil {
			a.result(e.Cursor, nil)
		}
		if a.credit != nil {
			a.credit.done()
		}
	}
	for s := range h.subs {
		s.notify()
	}
	h.srv.metrics.applied(len(batch))
}

// storeFailed settles a batch whose append failed. A failed append may still
// have landed (a timeout after the write, an fsync error), so the hub reloads
// and asks the store: what it holds was applied and is delivered; the rest,
// and everything after it, is refused. When the store cannot even say, no
// answer would be true, so every member's topic ends with store-unavailable
// and each resyncs when it opens again.
func (h *hub) storeFailed(err error) {
	h.srv.log.Error("store append failed", "document", h.name, "err", err)
	e := protocol.Errorf(ReasonStoreUnavailable, "the gateway could not store the commit; retry later")
	batch, later := h.log.Failed()
	h.doc, h.loadErr = nil, nil
	h.load()
	if h.loadErr == nil && h.doc == nil {
		// A new document whose creation did not reach the store: nobody
		// saw anything of it applied, so each member starts again.
		h.creator = nil
		h.stopCreatorTimer()
		h.log.Restart(0)
		h.tail.Reset(0)
		h.snapAt = 0
		for _, b := range batch {
			h.refuseApplied(b.Item, e)
		}
		for _, b := range later {
			h.refuseApplied(b.Item, e)
		}
		for c := range h.members {
			c.post(connMsg{kind: msgEnd, name: h.name, reason: ReasonStoreUnavailable, text: "the document could not be stored; open it again"})
			delete(h.members, c)
		}
		h.runWaiting()
		return
	}
	if h.loadErr != nil {
		h.srv.log.Error("reload after store failure", "document", h.name, "err", h.loadErr)
		unknown := protocol.Errorf(ReasonStoreUnavailable, "the gateway could not tell whether the commit was stored; open the document again")
		for _, b := range batch {
			// No refusal to a link: it may have landed. The topic's end
			// below makes the link resync, which settles it either way.
			a := b.Item
			a.seq = 0
			h.refuseApplied(a, unknown)
		}
		for _, b := range later {
			h.refuseApplied(b.Item, e)
		}
		for c := range h.members {
			c.post(connMsg{kind: msgEnd, name: h.name, reason: ReasonStoreUnavailable, text: "the document's store failed; open it again"})
		}
		h.runWaiting()
		return
	}
	var landed []docsm.Landed[applied]
	for _, b := range batch {
		if b.Cursor <= h.log.Cursor() {
			landed = append(landed, b)
		} else {
			h.refuseApplied(b.Item, e)
		}
	}
	for _, b := range later {
		h.refuseApplied(b.Item, e)
	}
	h.retakeStates(true) // a taken state may hold commits the store refused
	if len(landed) > 0 {
		h.srv.log.Warn("a failed append had landed", "document", h.name, "commits", len(landed))
		h.madeDurable(landed)
	}
	h.runWaiting()
}

func (h *hub) refuseApplied(a applied, err error) {
	if a.from != nil && a.seq != 0 {
		a.from.post(connMsg{kind: msgRefuse, name: h.name, seq: a.seq, reasons: reasonsOf(err)})
	}
	if a.result != nil {
		a.result(0, err)
	}
	if a.credit != nil {
		a.credit.done()
	}
}

// deliver sends the states now due, and wakes every member that reads
// the tail; one that fell off it, or whose lag passed MaxPendingBytes, is
// ended as a slow consumer. This pass over the members is per append, not
// per commit: each member takes every commit from its cursor itself.
func (h *hub) deliver() {
	durable := h.log.Durable()
	for c, m := range h.members {
		h.sendDue(c, m, durable)
		if m.owed.Wanted() {
			continue // not reading: its state will cover what it misses
		}
		if lag, err := h.tail.Behind(m.ts.read.Load()); err != nil || lag > h.srv.cfg.MaxPendingBytes {
			c.endSlow()
			continue
		}
		c.wakeTopic(m.ts)
	}
}

// settle ends a commit that will not land: the origin link hears refused;
// a refused state ends the creation instead.
func (h *hub) settle(p *pendingCommit, err error) {
	h.srv.metrics.refused(err)
	if p.creator != nil {
		if h.creator == p.creator {
			rs := reasonsOf(err)
			h.abandonCreation(protocol.Reason(rs[0].Code), rs[0].Message)
		}
		return
	}
	if p.from != nil {
		p.from.post(connMsg{kind: msgRefuse, name: h.name, seq: p.seq, reasons: reasonsOf(err)})
	}
	if p.result != nil {
		p.result(0, err)
	}
	if p.credit != nil {
		p.credit.done()
	}
}

func (h *hub) writeSnapshot(wait bool) {
	root, kind := h.doc.Root()
	snap := store.Snapshot{Cursor: h.log.Durable(), State: h.snapshotBytes(), Root: root, RootKind: uint8(kind)}
	h.snapAt = h.log.Durable()
	put := func() error { return h.srv.store.PutSnapshot(h.srv.ctx, h.name, snap) }
	if wait {
		if err := put(); err != nil {
			h.srv.log.Error("store snapshot", "document", h.name, "err", err)
		}
		return
	}
	h.appendWait(put)
}

// appendWait runs a store call off the hub goroutine and logs its failure.
// It is counted until done, so a delete is never overtaken by it.
func (h *hub) appendWait(fn func() error) {
	name, log := h.name, h.srv.log
	h.storeCalls++
	h.srv.track(func() {
		if err := fn(); err != nil {
			log.Error("store", "document", name, "err", err)
		}
		h.post(h.storeCallDone)
	})
}

// CursorMismatch refuses a compare-and-swap write whose expected cursor is
// not the document's.
type CursorMismatch struct{ Expected, Actual uint64 }

func (e *CursorMismatch) Error() string {
	return fmt.Sprintf("cursor-mismatch: expected %d, document is at %d", e.Expected, e.Actual)
}

// refusal is an authority's refusal, kept as the reasons it gave.
type refusal struct{ reasons []frame.Reason }

func (r *refusal) Error() string {
	if len(r.reasons) == 0 {
		return "refused"
	}
	return r.reasons[0].Code + ": " + r.reasons[0].Message
}

// ReasonsOf returns the reasons a refused commit was (or would be) refused
// with, as they go out in a refused frame: the authority's own reasons, the
// document's apply-stage reasons, or the gateway's.
func ReasonsOf(err error) []frame.Reason { return reasonsOf(err) }

// reasonsOf turns a refusal into the reasons of a refused frame.
func reasonsOf(err error) []frame.Reason {
	var r *refusal
	if errors.As(err, &r) {
		return r.reasons
	}
	var many *document.Refusal
	if errors.As(err, &many) {
		out := make([]frame.Reason, 0, len(many.Reasons))
		for _, e := range many.Reasons {
			out = append(out, frame.Reason{Code: string(e.Reason), Message: e.Message, Path: e.Path})
		}
		if len(out) > 0 {
			return out
		}
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return []frame.Reason{{Code: string(pe.Reason), Message: pe.Message, Path: pe.Path}}
	}
	var cm *CursorMismatch
	if errors.As(err, &cm) {
		return []frame.Reason{{Code: string(ReasonCursorMismatch), Message: cm.Error()}}
	}
	return []frame.Reason{{Code: string(ReasonInternal), Message: "the gateway could not apply the commit"}}
}
