package gateway

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
// its members and its subscribers. Everything reaches it through inbox as one
// of the closed set of inputs in hubmsg.go. It never blocks on a socket, the
// authority or the store: every store call runs off it and its completion
// comes back as an input. A call whose outcome decides the document (a load,
// the reload after a failed append, a Create's snapshot) pauses it: inputs
// wait, in order, until the completion. A quiet document's final snapshot
// is one more such call: the hub leaves once it is stored, and stays if
// anyone came meanwhile.
type hub struct {
	name    string
	srv     *Server
	inbox   chan hubMsg
	replies replyQueue
	done    chan struct{}
	evict   chan struct{} // closed by the registry to drop an idle hub at its bound
	refs    int           // guarded by srv.reg.mu
	// idle says the hub had nothing in flight when its last reference
	// went, so the registry may drop it at once; guarded by srv.reg.mu.
	idle bool
	quit bool // unloaded: run returns

	loadErr error
	// paused: a store call that decides the document (a load, a reload,
	// a Create's snapshot) is running off the hub; every input but its
	// completion waits in held, in order, and the authority's answers in
	// replies. Past cap(inbox) held inputs the hub stops reading its inbox.
	paused    bool
	held      []hubMsg
	replaying bool                    // held inputs replay after a load: none retries it
	storeDone chan hubMsg             // the completion of the paused call
	failed    []docsm.Landed[applied] // a failed append's batch, while reloading
	failedAft []docsm.Landed[applied] // and what landed after it
	doc       *docsm.Replica          // the document, bounded in size
	// On a shared log (follow.go): the follow under way, the records
	// that wait for this node's append, the commits a lost race took
	// back, and a reload owed once the append in flight ends.
	followGen uint64
	unfollow  context.CancelFunc
	ahead     []store.Record
	aheadLost bool // more came than ahead holds: read the log again
	requeue   []*pendingCommit
	reloadDue bool
	// race is a lost race's wait for its follow to bring the winner
	// (docsm.Race: pure, by transcript); decisions are held meanwhile.
	race docsm.Race
	// wakeDue: a delayed pass over the members is armed (deliver).
	wakeDue bool
	// A pass wakes its members Config.FanoutChunk at a time (wakeSome):
	// wakeLeft are still due, the next from order[wakeAt] on; wakeHop
	// says the next step's wakeMoreMsg is on its way.
	wakeAt   int
	wakeLeft int
	wakeHop  bool
	// A failed follow waits followBackoff before the next (followWaiting).
	followWaiting bool
	followBackoff time.Duration
	// log holds the cursors (last applied, last durable) and the applied
	// commits on their way to the store (docsm.Log: pure, by transcript).
	log    docsm.Log[applied]
	snapAt uint64 // cursor of the last stored snapshot
	// stored says the store holds the document. A peer's new document is
	// stored with its first landed commit, so a creation that is refused,
	// or never gets its state, writes nothing.
	stored   bool
	creating bool // an empty creation's snapshot is being stored

	members map[*conn]*member
	// order is the members as they joined, for the pass that wakes them
	// (wakeMembers): in the same order every pass, each link's turn comes
	// once a pass, where a map's order, new each pass, could leave one
	// waiting nearly two. Members gone are dropped at the next pass.
	order []*member
	subs  map[*subscriber]struct{}
	// tail holds the durable commits for members and subscribers to read
	// from their own cursors: the hub appends each once and wakes idle
	// readers (decision 031). Each pass lets go of what every reader has
	// read; nobody reading, it is emptied at the durable cursor (when the
	// last reader goes and the first comes).
	tail *tail.Tail[tailItem]

	// creator is the member whose state will become this new document; state
	// requests wait until it has arrived (notes section 12).
	// (docsm.Creation: pure, by transcript; the timer is the driver's).
	creation     docsm.Creation[*member]
	creatorTimer *time.Timer

	// pipe holds the commits waiting for their verdicts and their turn
	// (docsm.Pipeline: pure, tested by transcript). One timer, for the
	// earliest unanswered question, bounds them all (a timer per commit was
	// two allocations each); judgeAt is when it is set for (zero: unset).
	pipe       *docsm.Pipeline[*pendingCommit]
	judgeTimer *time.Timer
	judgeAt    time.Time

	waiting docsm.Waiters[func()] // API work that waits for the durable state

	// rest says when a quiet document leaves memory (docsm.Idle); the
	// timer is the driver's.
	rest      docsm.Idle
	idleTimer *time.Timer
	leaving   bool // idle: its final snapshot is being stored, then it goes

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
	// ordered: it is in hub.order (which keeps a member that left until
	// the next pass), so joining again does not add it twice.
	ordered bool
	// due: a pass found it to wake, and its chunk has not come yet.
	due bool
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
	// On a shared log, what undoes it and the commit it came from, so a
	// lost race can take it back and decide it again (follow.go).
	undo commit.Commit
	p    *pendingCommit
}

func newHub(s *Server, name string) *hub {
	h := &hub{
		name:      name,
		srv:       s,
		inbox:     make(chan hubMsg, 1024),
		storeDone: make(chan hubMsg, 1),
		replies:   replyQueue{wake: make(chan struct{}, 1)},
		done:      make(chan struct{}),
		evict:     make(chan struct{}),
		members:   make(map[*conn]*member),
		pipe: docsm.NewPipeline[*pendingCommit](docsm.PipelineConfig{
			MaxInFlight: s.cfg.MaxInFlightVerdicts,
			Timeout:     s.cfg.JudgeTimeout,
			TimedOut:    Refuse(ReasonAuthorityTimeout, "the authority did not answer in time"),
		}),
		subs: make(map[*subscriber]struct{}),
		rest: docsm.Idle{After: s.cfg.IdleUnload},
		tail: tail.New[tailItem](tail.Config{MaxCommits: s.cfg.TailCommits, MaxBytes: s.cfg.TailBytes}),
	}
	s.track(h.run)
	return h
}

// post hands m to the hub goroutine. It blocks while the inbox is full and
// gives up when the hub has stopped.
func (h *hub) post(m hubMsg) bool {
	select {
	case h.inbox <- m:
		return true
	case <-h.done:
		return false
	}
}

// postAfter posts m once d has passed: a timer is an input like any other.
func (h *hub) postAfter(d time.Duration, m hubMsg) *time.Timer {
	return time.AfterFunc(d, func() { h.post(m) })
}

// postCtx is post that also gives up when ctx ends.
func (h *hub) postCtx(ctx context.Context, m hubMsg) bool {
	select {
	case h.inbox <- m:
		return true
	case <-h.done:
		return false
	case <-ctx.Done():
		return false
	}
}

func (h *hub) run() {
	defer close(h.done)
	defer h.stopFollowing()
	h.load(loadStart)
	idle := time.NewTimer(time.Hour)
	idle.Stop()
	h.idleTimer = idle
	defer idle.Stop()
	for {
		inbox, replies := h.inputs()
		select {
		case m := <-inbox:
			h.input(m)
		case <-replies:
			h.replies.run(h)
		case m := <-h.storeDone:
			h.handle(m)
			h.resume()
		case <-idle.C:
			if !h.rest.Tick(time.Now(), h.unloadable()) {
				break
			}
			if h.finalSnapshot() {
				h.leaving = true // storeCallDone unloads once it is stored
			} else if h.srv.reg.tryUnload(h) {
				h.stopCreatorTimer()
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

// inputs are the channels the hub reads now: while paused, not the
// authority's answers, and not the inbox once held is full.
func (h *hub) inputs() (chan hubMsg, chan struct{}) {
	if !h.paused {
		return h.inbox, h.replies.wake
	}
	if len(h.held) >= cap(h.inbox) {
		return nil, nil
	}
	return h.inbox, nil
}

// input takes one input from the inbox, holding it while paused.
func (h *hub) input(m hubMsg) {
	if _, ask := m.(statusMsg); h.paused && !ask {
		h.held = append(h.held, m)
		return
	}
	h.handle(m)
}

// pause starts a store call that decides the document: call runs off the
// hub and its completion comes back through storeDone.
func (h *hub) pause(call func() hubMsg) {
	h.paused = true
	h.srv.track(func() { h.storeDone <- call() })
}

// resume replays the held inputs, in order, once nothing pauses the hub.
func (h *hub) resume() {
	h.replaying = true
	for !h.paused && len(h.held) > 0 {
		m := h.held[0]
		h.held[0] = nil
		h.held = h.held[1:]
		h.handle(m)
	}
	h.replaying = false
	if len(h.held) == 0 {
		h.held = nil
	}
}

// loadWhy says what a store load is for, and so what follows it.
type loadWhy uint8

const (
	loadStart        loadWhy = iota
	loadRetry                // the last load failed and an open or a call came
	loadAfterFailure         // an append failed: what of it landed?
	loadAfterDelete          // the store's delete failed: the document stays
)

// loadedMsg is a store load's outcome: the document (nil when the store
// does not have it) at cursor, or the error.
type loadedMsg struct {
	why    loadWhy
	doc    *document.Document
	cursor uint64
	snapAt uint64
	size   int
	err    error
}

func (loadedMsg) hubMsg() {}

// load reads the document from the store, off the hub: its snapshot plus
// every record after it.
func (h *hub) load(why loadWhy) {
	name, st, ctx, limits := h.name, h.srv.store, h.srv.ctx, h.srv.cfg.DocumentLimits
	h.pause(func() hubMsg {
		m := loadFrom(ctx, st, name, limits)
		m.why = why
		return m
	})
}

// loaded takes a store load's outcome.
func (h *hub) loaded(m loadedMsg) {
	h.paused = false
	h.loadErr = m.err
	if m.err != nil {
		h.doc = nil
		h.srv.log.Error("load document", "document", h.name, "err", m.err)
	} else if m.doc != nil {
		h.doc = docsm.NewReplica(m.doc, m.size, h.srv.cfg.MaxDocumentBytes)
		h.log.Restart(m.cursor)
		h.snapAt, h.stored = m.snapAt, true
	}
	switch m.why {
	case loadAfterFailure:
		h.reloadedAfterFailure()
	case loadAfterDelete:
		h.runWaiting()
		h.maybeIdle()
	}
}

// storeLoaded says whether the store load stands. A failed one is retried
// when nobody holds the old replica (the store may be back): m waits for
// it, and false is returned with nothing done.
func (h *hub) storeLoaded(m hubMsg) (ok, retrying bool) {
	if h.loadErr != nil && len(h.members) == 0 && !h.replaying {
		h.held = append([]hubMsg{m}, h.held...)
		h.load(loadRetry)
		return false, true
	}
	return h.loadErr == nil, false
}

func loadFrom(ctx context.Context, st store.Store, name string, limits document.Limits) loadedMsg {
	snap, tail, err := st.Load(ctx, name)
	if errors.Is(err, store.ErrUnknownDocument) {
		return loadedMsg{}
	}
	if err != nil {
		return loadedMsg{err: err}
	}
	d := document.New(commit.ID(snap.Root), commit.Kind(snap.RootKind), limits)
	if len(snap.State) > 0 {
		st, err := commit.Decode(snap.State)
		if err == nil {
			_, err = d.Reconcile(st)
		}
		if err != nil {
			return loadedMsg{err: fmt.Errorf("snapshot of %q at %d: %w", name, snap.Cursor, err)}
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
				return loadedMsg{err: fmt.Errorf("record %d of %q: %w", r.Cursor, name, err)}
			}
			cursor = r.Cursor
		}
		if tail, err = st.Read(ctx, name, cursor+1, 0); err != nil {
			return loadedMsg{err: err}
		}
	}
	return loadedMsg{doc: d, cursor: cursor, snapAt: snap.Cursor, size: len(docsm.NewReplica(d, 0, 0).State())}
}

func (h *hub) unloadable() bool {
	return !h.paused && len(h.held) == 0 && len(h.members) == 0 && len(h.subs) == 0 && !h.pipe.Undecided() && len(h.loadWait) == 0 && !h.creating &&
		h.log.Settled() && h.storeCalls == 0 && h.deleting == nil && !h.race.Waiting()
}

// maybeIdle arms the idle timer once; a brief reference in between (a
// status read) does not push the unload back. A hub that holds nothing the
// store has (a name that was never there, a creation that never landed)
// goes at once: a flood of such names must not fill MaxDocuments.
func (h *hub) maybeIdle() {
	if !h.unloadable() {
		return
	}
	if h.rest.Quiet(time.Now(), h.doc != nil && h.stored) == docsm.IdleGoNow {
		if h.srv.reg.tryUnload(h) {
			h.quit = true
		}
		return
	}
	h.srv.reg.markIdle(h)
	if at, ok := h.rest.Deadline(); ok {
		h.idleTimer.Reset(time.Until(at))
	}
}

// finalSnapshot starts storing a snapshot when commits became durable since
// the last one (docsm.FinalSnapshot), and says whether it did; its
// completion is a storeCallDone.
func (h *hub) finalSnapshot() bool {
	if h.doc == nil || !docsm.FinalSnapshot(h.stored, h.log.Durable(), h.snapAt) {
		return false
	}
	h.writeSnapshot()
	return true
}

// drain runs at shutdown: finish what is in flight, then store a snapshot.
func (h *hub) drain() {
	deadline := time.After(h.srv.cfg.JudgeTimeout)
	snapshot := false
	for {
		if !h.paused && !h.pipe.Undecided() && h.log.Settled() && !h.race.Waiting() {
			if !snapshot {
				snapshot = true
				h.stopCreatorTimer()
				h.finalSnapshot()
			}
			if h.storeCalls == 0 {
				return
			}
		}
		inbox, replies := h.inputs()
		select {
		case m := <-inbox:
			h.input(m)
		case <-replies:
			h.replies.run(h)
		case m := <-h.storeDone:
			h.handle(m)
			h.resume()
		case <-deadline:
			h.srv.log.Warn("shutdown left commits unsettled", "document", h.name, "pending", h.pipe.Len())
			return
		}
	}
}

// --- opening ---------------------------------------------------------------

// open handles a peer's open for this document on connection c.
func (h *hub) open(o openMsg) {
	c := o.c
	if ok, retrying := h.storeLoaded(o); retrying {
		return
	} else if !ok {
		c.post(connMsg{kind: msgDecline, name: h.name, reason: ReasonStoreUnavailable, text: "the document could not be loaded"})
		return
	}
	req := OpenRequest{Document: h.name, Identity: c.identity, Exists: h.doc != nil, Root: o.root, Want: o.want, Link: c.id, RemoteAddr: c.addr}
	h.ask(func(reply func(hubMsg)) {
		h.srv.cfg.Authority.MayOpen(req, func(err error) {
			reply(mayOpenMsg{open: o, err: err})
		})
	})
}

// ask calls an authority method that answers through a callback. An answer
// given during the call runs at once; a later one comes back through
// replies, so the authority never runs on, or blocks, the hub goroutine
// after the call returns.
func (h *hub) ask(call func(reply func(hubMsg))) {
	g := &replyGate{h: h, inCall: true}
	call(g.reply)
	g.mu.Lock()
	g.inCall = false
	m := g.now
	g.mu.Unlock()
	if m != nil {
		h.handle(m)
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
	now    hubMsg
}

func (g *replyGate) reply(m hubMsg) {
	g.mu.Lock()
	if g.inCall {
		g.now = m
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	g.h.replies.push(m)
}

// replyQueue carries the authority's answers to the hub without ever
// blocking the answerer: a bridge stream's receive loop answers for every
// document it judges, so one document busy in a store call must not hold it
// (and with it every other document on that stream). It is bounded by what
// may be outstanding: MaxInFlightVerdicts verdicts, and one answer per open
// or load under way.
type replyQueue struct {
	mu   sync.Mutex
	q    []hubMsg
	wake chan struct{}
}

func (r *replyQueue) push(m hubMsg) {
	r.mu.Lock()
	r.q = append(r.q, m)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run runs every answer queued so far, in order.
func (r *replyQueue) run(h *hub) {
	r.mu.Lock()
	q := r.q
	r.q = nil
	r.mu.Unlock()
	for i, m := range q {
		q[i] = nil
		h.handle(m)
	}
}

func (h *hub) openDecided(o openMsg, err error) {
	c, ts, peerRoot, want := o.c, o.ts, o.root, o.want
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
		h.withLoaded(&c.origin, func(err error) { h.openDecided(o, err) })
		return
	}
	if peerRoot == nil {
		c.post(connMsg{kind: msgDecline, name: h.name, reason: protocol.NoDocument})
		return
	}
	// Mint the document from the peer's root and ask for its state. It is
	// stored with its first landed commit (the state, once judged), so
	// nothing is written for a creation that is refused or abandoned.
	h.doc = docsm.NewReplica(document.New(peerRoot.ID, peerRoot.Kind, h.srv.cfg.DocumentLimits), 0, h.srv.cfg.MaxDocumentBytes)
	m := &member{c: c, ts: ts}
	h.join(m)
	h.creation.Begin(m, time.Now(), h.srv.cfg.StateTimeout)
	h.creatorTimer = h.postAfter(h.srv.cfg.StateTimeout, creatorLateMsg{m})
	c.post(connMsg{kind: msgShare, name: h.name, root: peerRoot, want: true, cursor: h.log.Durable()})
}

// join makes m a member. It reads the tail from the durable cursor (the
// commits made durable from now on), or, when it asked for the state,
// from that state's cursor once the state is sent.
func (h *hub) join(m *member) {
	h.resetUnread()
	h.members[m.c] = m
	if !m.ordered {
		m.ordered = true
		h.order = append(h.order, m)
		if len(h.order) > 2*len(h.members)+64 {
			h.pruneOrder() // members come and go, and no pass drops them
		}
	}
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
	name, st, ctx := h.name, h.srv.store, h.srv.ctx
	h.srv.track(func() {
		h.post(createdMsg{st.PutSnapshot(ctx, name, snap)})
	})
}

// created takes the outcome of storeEmpty.
func (h *hub) created(err error) {
	h.creating = false
	if err != nil {
		h.srv.log.Error("create document", "document", h.name, "err", err)
	} else if h.doc != nil && h.log.Cursor() == 0 {
		h.stored = true
	}
	h.maybeIdle()
}

// creatorLate ends a creation whose state did not come within StateTimeout:
// a peer must not hold a name, and every joiner of it, by never answering.
func (h *hub) creatorLate(m *member) {
	if c, ok := h.creation.Creator(); !ok || c != m || !h.creation.Late(time.Now()) {
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
	m, _ := h.creation.Creator()
	h.creation.Done()
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
// meanwhile waits for the same answer. opener is the link whose open asks
// (nil for anything else); the Loader is told the first.
func (h *hub) withLoaded(opener *Origin, fn func(error)) {
	if !h.mayLoad() {
		fn(nil)
		return
	}
	h.loadWait = append(h.loadWait, fn)
	if len(h.loadWait) > 1 {
		return
	}
	l := h.srv.cfg.Authority.(Loader)
	req, ctx := LoadRequest{Document: h.name}, h.srv.ctx
	if opener != nil {
		o := *opener
		req.Opener = &o
	}
	// Counted as a store call: the adopted snapshot is stored off the hub,
	// and a delete meanwhile must come after it.
	h.storeCalls++
	h.srv.track(func() {
		doc, found, err := l.Load(ctx, req)
		m := backendLoadMsg{doc: doc, found: found, err: err}
		if found && err == nil {
			m.adopted, m.adoptErr = h.adopt(ctx, doc)
		}
		h.post(m)
	})
}

// backendLoaded takes a backend's answer to a load: a document to hold, or
// nothing (the waiting work then goes on as if there were no loader). When
// it brought no document, the next open or call asks again: the backend may
// have been away or have made the document since.
func (h *hub) backendLoaded(m backendLoadMsg) {
	h.storeCalls--
	h.loadAsked = true
	doc, found, err := m.doc, m.found, m.err
	if found && err == nil && h.doc == nil && h.deleting == nil {
		if m.adoptErr != nil {
			h.srv.log.Warn("backend load refused", "document", h.name, "err", m.adoptErr)
			err = protocol.Errorf(ReasonStoreUnavailable, "the backend's document could not be taken; retry later")
		} else {
			h.doc = docsm.NewReplica(m.adopted, len(doc.State), h.srv.cfg.MaxDocumentBytes)
			h.log.Restart(doc.Cursor)
			h.snapAt = doc.Cursor
			h.stored = true
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
	h.continueDelete()
	h.maybeIdle()
}

// adopt makes a loaded state a document at the loader's cursor, durable
// before anyone sees it. It runs off the hub and reads only its
// configuration.
func (h *hub) adopt(ctx context.Context, doc Loaded) (*document.Document, error) {
	root, state := doc.Root, doc.State
	d := document.New(root.ID, root.Kind, h.srv.cfg.DocumentLimits)
	if state != nil {
		st, err := commit.DecodeWithLimits(state, h.srv.cfg.CommitLimits)
		if err != nil {
			return nil, err
		}
		if _, err := d.Reconcile(st); err != nil {
			return nil, err
		}
	}
	if len(state) > h.srv.cfg.MaxDocumentBytes {
		return nil, protocol.Errorf(ReasonDocumentTooLarge, fmt.Sprintf("the backend's %d-byte document is over the %d-byte bound", len(state), h.srv.cfg.MaxDocumentBytes))
	}
	snap := store.Snapshot{Cursor: doc.Cursor, State: state, Root: root.ID, RootKind: uint8(root.Kind)}
	if err := h.srv.store.PutSnapshot(ctx, h.name, snap); err != nil {
		return nil, err
	}
	return d, nil
}

// leave removes c from the members.
func (h *hub) leave(c *conn) {
	m := h.members[c]
	if m == nil {
		return
	}
	delete(h.members, c)
	h.resetUnread()
	if h.creation.Left(m) {
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
	if m.owed.Want() && !h.creation.Holding() {
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
	h.creation.Done()
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

func (h *hub) settled() bool {
	return !h.creation.Holding() && h.log.Settled()
}

// whenSettled runs fn once the replica equals what is durable; whenIdle
// once, also, no commit waits for its verdict (docsm.Waiters).
func (h *hub) whenSettled(fn func()) { h.wait(fn, false) }
func (h *hub) whenIdle(fn func())    { h.wait(fn, true) }

func (h *hub) wait(fn func(), idle bool) {
	if h.waiting.Add(fn, idle, h.settled(), h.pipe.Undecided()) {
		fn()
	}
}

// runWaiting runs the waiters whose condition now holds, in order.
func (h *hub) runWaiting() {
	for {
		fn, ok := h.waiting.Next(h.settled(), h.pipe.Undecided())
		if !ok {
			return
		}
		fn()
	}
}

func (h *hub) snapshotBytes() []byte {
	if h.doc == nil {
		return nil
	}
	return h.doc.State()
}

// stateArrived takes the state the creator sent. It makes the document's
// content, so it is a write: the commit that moves the new document to it
// is judged like any commit (marked as a state) and applied in order; the
// creator's hold on joiners lasts until it has landed or was refused.
func (h *hub) stateArrived(c *conn, st commit.Commit) {
	m := h.members[c]
	if m == nil || !h.creation.StateIn(m) {
		return
	}
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
	h.ask(func(reply func(hubMsg)) {
		h.srv.cfg.Authority.Judge(req, func(v Verdict) {
			reply(verdictMsg{t: t, v: v})
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
		h.judgeTimer = h.postAfter(time.Until(at), judgeTickMsg{})
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
	for !h.race.Waiting() { // after a lost race the taken-back commits go first
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
	switch docsm.Admit(v, h.doc != nil, p.expect, h.log.Cursor()) {
	case docsm.Refused:
		h.settle(p, &refusal{reasons: v.Reasons})
		return
	case docsm.Gone: // a store failure unloaded it while the verdict was out
		h.settle(p, protocol.Errorf(ReasonStoreUnavailable, "the document could not be loaded; retry later"))
		return
	case docsm.Mismatch:
		h.settle(p, &CursorMismatch{Expected: *p.expect, Actual: h.log.Cursor()})
		return
	}
	undo, err := h.doc.Land(p.c, len(p.bytes), h.shared())
	if err != nil {
		h.settle(p, err)
		return
	}
	a := applied{rec: store.Record{Commit: p.bytes, Origin: p.origin.ID}, paths: p.paths, from: p.from, seq: p.seq, result: p.result, credit: p.credit}
	if h.shared() {
		a.undo, a.p = undo, p
	}
	h.landed(a)
	if c, ok := h.creation.Creator(); ok && p.creator == c {
		h.creatorDone() // its state landed: joiners' states may be taken
	}
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
		h.post(appendedMsg{err})
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
		h.writeSnapshot()
	}
	h.flush()
	h.runWaiting()
	h.maybeIdle()
}

// madeDurable delivers commits the store holds and settles them.
func (h *hub) madeDurable(batch []docsm.Landed[applied]) {
	es := make([]tail.Entry[tailItem], len(batch))
	own := batch[0].Item.from // the one link the whole batch came from, if any
	for i, e := range batch {
		a := &e.Item
		es[i] = tail.Entry[tailItem]{Cursor: e.Cursor, Bytes: a.rec.Commit, Item: tailItem{link: a.from != nil, origin: a.rec.Origin, paths: a.paths}}
		if a.from != own {
			own = nil
		}
	}
	prev := h.tail.Head()
	h.tail.Append(es...)
	h.deliver(prev, own)
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
	if errors.Is(err, store.ErrCursorMismatch) && h.lostRace() {
		return
	}
	h.srv.log.Error("store append failed", "document", h.name, "err", err)
	h.reload(h.log.Failed())
}

// reload drops the replica and loads the document again from the store;
// batch and later, a failed append's, are settled against what it holds
// (reloadedAfterFailure).
func (h *hub) reload(batch, later []docsm.Landed[applied]) {
	h.failed, h.failedAft = batch, later
	h.doc, h.loadErr = nil, nil
	h.load(loadAfterFailure)
}

// reloadedAfterFailure settles a failed append's batch against what the
// store was found to hold.
func (h *hub) reloadedAfterFailure() {
	e := protocol.Errorf(ReasonStoreUnavailable, "the gateway could not store the commit; retry later")
	known, at := h.loadErr == nil, uint64(0)
	if h.doc != nil {
		at = h.log.Cursor()
	}
	r := docsm.Recover(h.failed, h.failedAft, at, known)
	h.failed, h.failedAft = nil, nil
	for _, b := range r.Refused {
		h.refuseApplied(b.Item, e)
	}
	unknown := protocol.Errorf(ReasonStoreUnavailable, "the gateway could not tell whether the commit was stored; open the document again")
	for _, b := range r.Unknown {
		// No refusal to a link: it may have landed. The topic's end
		// below makes the link resync, which settles it either way.
		a := b.Item
		a.seq = 0
		h.refuseApplied(a, unknown)
	}
	switch {
	case !known:
		h.srv.log.Error("reload after store failure", "document", h.name, "err", h.loadErr)
		for c := range h.members {
			c.post(connMsg{kind: msgEnd, name: h.name, reason: ReasonStoreUnavailable, text: "the document's store failed; open it again"})
		}
	case h.doc == nil:
		// A new document whose creation did not reach the store: nobody
		// saw anything of it applied, so each member starts again.
		h.creation.Done()
		h.stopCreatorTimer()
		h.log.Restart(0)
		h.tail.Reset(0)
		h.snapAt = 0
		for c := range h.members {
			c.post(connMsg{kind: msgEnd, name: h.name, reason: ReasonStoreUnavailable, text: "the document could not be stored; open it again"})
			delete(h.members, c)
		}
	default:
		h.retakeStates(true) // a taken state may hold commits the store refused
		if len(r.Landed) > 0 {
			h.srv.log.Warn("a failed append had landed", "document", h.name, "commits", len(r.Landed))
			h.madeDurable(r.Landed)
		}
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
// ended as a slow consumer. This pass over the members is per append, or
// per Config.passWait for a document of many, never per commit: each
// member takes every commit from its cursor itself.
func (h *hub) deliver(prev uint64, own *conn) {
	if wait := h.srv.cfg.passWait(len(h.members)); wait > 0 {
		// Many links: one pass per wait, so that each link's write carries
		// every commit of that span. A pass per append over hundreds of
		// links wakes each for one commit a frame, a write call apiece; over
		// thousands they fall further behind than batching catches up. (A
		// pass at once for an append after a quiet spell cost a second pass
		// per burst of a windowed writer: decision 036.)
		if !h.wakeDue {
			h.wakeDue = true
			h.postAfter(wait, wakeMsg{})
		}
		return
	}
	h.wakeMembers(prev, own)
}

// wakeMembers is deliver's pass over the members; own, when not nil, is
// the one link the whole batch after prev came from.
func (h *hub) wakeMembers(prev uint64, own *conn) {
	durable := h.log.Durable()
	if len(h.order) != len(h.members) {
		h.pruneOrder() // order holds every member once, so only then has it gone ones
	}
	read := durable // what every reader has read
	for _, m := range h.order {
		c := m.c
		h.sendDue(c, m, durable)
		read = min(read, m.ts.read.Load())
		if m.owed.Wanted() {
			continue // not reading: its state will cover what it misses
		}
		if c == own && m.ts.read.CompareAndSwap(prev, durable) {
			// The batch is all its own, which it never gets back, and it
			// had read everything before it: nothing to wake it for.
			continue
		}
		if lag, err := h.tail.Behind(m.ts.read.Load()); err != nil || lag > h.srv.cfg.MaxPendingBytes {
			c.endSlow()
			continue
		}
		h.markDue(m)
	}
	for sub := range h.subs {
		read = min(read, sub.read.Load())
	}
	// What every reader has read is let go, so a document whose readers
	// keep up holds a pass's commits, not the tail's bounds.
	h.tail.Trim(read)
	if !h.wakeHop {
		h.wakeSome()
	}
}

// markDue puts m in the pass's steps still to come (wakeSome).
func (h *hub) markDue(m *member) {
	if !m.due {
		m.due = true
		h.wakeLeft++
	}
}

// wakeSome wakes the next Config.FanoutChunk due members, in order from
// where the last step stopped, so each gets its turn however often passes
// come. Woken all at once, thousands of links filled the run queues, and
// the goroutines a commit needs on its way in (the writer's reader, this
// hub, the store's writer after its sync) waited behind every one of them
// (decision 041). When more are due, the next step is an input posted once
// the woken links have run: this hub takes what arrived meanwhile first.
func (h *hub) wakeSome() {
	seen := 0
	for n := 0; h.wakeLeft > 0 && n < h.srv.cfg.FanoutChunk && seen < len(h.order); seen++ {
		if h.wakeAt >= len(h.order) {
			h.wakeAt = 0
		}
		m := h.order[h.wakeAt]
		h.wakeAt++
		if !m.due {
			continue
		}
		m.due = false
		h.wakeLeft--
		if h.members[m.c] != m || m.owed.Wanted() {
			continue // left, or now waits for a state, since its pass
		}
		m.c.wakeTopic(m.ts)
		n++
	}
	if seen == len(h.order) {
		h.wakeLeft = 0 // round the whole order: none is due any more
	}
	if h.wakeLeft > 0 {
		h.wakeHop = true
		go func() {
			// Behind the links just woken, on this processor's queue.
			runtime.Gosched()
			h.post(wakeMoreMsg{})
		}()
	}
}

// pruneOrder drops from order the members that left.
func (h *hub) pruneOrder() {
	keep, at := h.order[:0], 0
	for i, m := range h.order {
		if h.members[m.c] == m {
			keep = append(keep, m)
		} else {
			m.ordered = false
			if m.due {
				m.due = false
				h.wakeLeft--
			}
		}
		if i < h.wakeAt {
			at = len(keep)
		}
	}
	h.wakeAt = at
	clear(h.order[len(keep):])
	h.order = keep
}

// settle ends a commit that will not land: the origin link hears refused;
// a refused state ends the creation instead.
func (h *hub) settle(p *pendingCommit, err error) {
	h.srv.metrics.refused(err)
	if p.creator != nil {
		if c, ok := h.creation.Creator(); ok && c == p.creator {
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

func (h *hub) writeSnapshot() {
	root, kind := h.doc.Root()
	snap := store.Snapshot{Cursor: h.log.Durable(), State: h.snapshotBytes(), Root: root, RootKind: uint8(kind)}
	h.snapAt = h.log.Durable()
	h.appendWait(func() error { return h.srv.store.PutSnapshot(h.srv.ctx, h.name, snap) })
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
		h.post(storeCallDoneMsg{})
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
