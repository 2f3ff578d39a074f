package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/weftgate/weftgate/gateway/docsm"
	"github.com/weftgate/weftgate/gateway/store"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
)

// Follower is a store whose document logs other gateway nodes append to as
// well (a log shared through NATS JetStream, issue 17). A hub that holds a
// document follows its log: records another node appended are one more
// input, commits that arrive decided and durable (decision 028).
type Follower interface {
	store.Store
	// Follow calls fn with every record of doc after cursor after, in
	// order, with no gap and no duplicate, then with each new one as it
	// is appended, until ctx ends or fn returns an error (which Follow
	// returns). A cursor older than the log retains is ErrCompacted.
	Follow(ctx context.Context, doc string, after uint64, fn func(store.Record) error) error
}

// shared says the document's log is shared with other nodes.
func (h *hub) shared() bool {
	_, ok := h.srv.store.(Follower)
	return ok
}

// maxAhead bounds the records another node appended that wait while this
// node's own append is in flight (past it, the rest are read again once the
// append ends), and maxCatchUp those one catch-up read holds (a longer
// catch-up reads again).
const (
	maxAhead   = 1024
	maxCatchUp = 4096
)

// foreignMsg is a record of the shared log, or why following it stopped.
type foreignMsg struct {
	gen uint64 // the follow it came from: an older one's are dropped
	rec store.Record
	err error
}

// caughtUpMsg is what a catch-up read found after the durable cursor;
// more says it stopped at its bound.
type caughtUpMsg struct {
	recs []store.Record
	more bool
	err  error
}

// followRetryMsg: the wait after a failed follow is over.
type followRetryMsg struct{}

// raceWaitMsg: a lost race's wait for the follow may be over.
type raceWaitMsg struct{}

// wakeMsg: the delayed pass over many members is due (hub.deliver).
type wakeMsg struct{}

// wakeMoreMsg: the next chunk of a pass is due (hub.wakeSome).
type wakeMoreMsg struct{}

func (foreignMsg) hubMsg()     {}
func (caughtUpMsg) hubMsg()    {}
func (followRetryMsg) hubMsg() {}
func (raceWaitMsg) hubMsg()    {}
func (wakeMsg) hubMsg()        {}
func (wakeMoreMsg) hubMsg()    {}

// The wait before following again after the log failed (NATS away), from
// the first to the longest; a record that arrives resets it.
const (
	followRetryFirst = 100 * time.Millisecond
	followRetryMax   = 5 * time.Second
)

// follow starts following the document's log once the hub holds a stored
// document and nothing pauses it. The driver calls it after every input.
func (h *hub) follow() {
	f, ok := h.srv.store.(Follower)
	if !ok || h.unfollow != nil || h.followWaiting || h.paused || h.doc == nil || !h.stored || h.deleting != nil || h.quit {
		return
	}
	h.followGen++
	gen, name, after := h.followGen, h.name, h.log.Durable()
	ctx, cancel := context.WithCancel(h.srv.ctx)
	h.unfollow = cancel
	h.srv.track(func() {
		err := f.Follow(ctx, name, after, func(r store.Record) error {
			if !h.postCtx(ctx, foreignMsg{gen: gen, rec: r}) {
				return context.Canceled
			}
			return nil
		})
		if ctx.Err() == nil {
			h.postCtx(ctx, foreignMsg{gen: gen, err: err})
		}
	})
}

// stopFollowing ends the follow under way; records of it still queued are
// dropped by their generation.
func (h *hub) stopFollowing() {
	if h.unfollow != nil {
		h.unfollow()
		h.unfollow = nil
	}
	h.followGen++
	h.ahead, h.aheadLost = nil, false // the next follow starts at the durable cursor
}

// foreign takes a record of the shared log. The node's own records come
// back too: whatever the hub already holds is skipped.
func (h *hub) foreign(m foreignMsg) {
	if m.gen != h.followGen {
		return
	}
	if m.err != nil {
		h.srv.log.Warn("following the shared log stopped", "document", h.name, "err", m.err)
		h.stopFollowing()
		if errors.Is(m.err, store.ErrCompacted) {
			h.resync("the document's log moved past what this node holds; open it again")
			return
		}
		// Follow again after a wait, so a log that is away is not asked
		// in a loop; the next input after it starts the follow.
		h.followBackoff = min(max(2*h.followBackoff, followRetryFirst), followRetryMax)
		h.followWaiting = true
		h.postAfter(h.followBackoff, followRetryMsg{})
		return
	}
	h.followBackoff = 0
	r := m.rec
	if r.Cursor <= h.log.Durable() {
		return
	}
	if !h.log.Settled() {
		// This node's own append decides first: a success covers these
		// cursors, a lost race reads them again.
		if len(h.ahead) < maxAhead {
			h.ahead = append(h.ahead, r)
		} else {
			h.aheadLost = true // read again from the log once it ends
		}
		return
	}
	h.applyForeign(r)
}

// applyForeign applies a record another node made durable: it was decided
// and stored there, so it is delivered at once to every member here.
func (h *hub) applyForeign(r store.Record) bool {
	if r.Cursor <= h.log.Durable() {
		return true
	}
	if r.Cursor != h.log.Durable()+1 || h.doc == nil {
		h.catchUp()
		return false
	}
	c, err := commit.Decode(r.Commit)
	var paths [][]string // for subscribers, as the writing node's were
	if err == nil {
		paths = h.doc.Paths(c)
		err = h.doc.Follow(c, len(r.Commit))
	}
	if err != nil {
		// Another node applied it to the same document: ours differs.
		h.srv.log.Error("a shared log's record does not apply", "document", h.name, "cursor", r.Cursor, "err", err)
		h.resync("the document diverged from its log; open it again")
		return false
	}
	h.log.Restart(r.Cursor)
	h.srv.metrics.Foreign.Add(1)
	h.madeDurable([]docsm.Landed[applied]{{Cursor: r.Cursor, Item: applied{rec: r, paths: paths}}})
	return true
}

// afterInput is what the driver does after every input on a shared log:
// follow the log, reload when a resync waited for an append, and apply the
// records that waited for one.
func (h *hub) afterInput() {
	if !h.shared() || h.paused {
		return
	}
	if h.reloadDue && h.log.Settled() {
		h.reloadDue = false
		h.reload(nil, nil)
		return
	}
	if (len(h.ahead) > 0 || h.aheadLost) && h.log.Settled() {
		h.settledAhead()
	}
	if h.race.Progress(h.log.Durable(), len(h.ahead) > 0 || h.aheadLost || h.paused) == docsm.RaceDecide {
		// The follow brought the winner: decide the taken-back commits
		// after it, with no read of the log.
		h.redecide()
	}
	h.follow()
}

// settledAhead applies what waited while this node's append was in
// flight, once it has settled.
func (h *hub) settledAhead() {
	ahead, lost := h.ahead, h.aheadLost
	h.ahead, h.aheadLost = nil, false
	if lost {
		// Some did not fit: read them all from the log instead.
		h.catchUp()
		return
	}
	for _, r := range ahead {
		if !h.log.Settled() || h.paused || !h.applyForeign(r) {
			return
		}
	}
}

// lostRace takes back the applied commits whose append found another
// node's records at their cursors (a conditional append lost), takes those
// records (from the follow, or a read of the log), delivers them, and
// decides the taken-back commits again after them: a commit valid on one
// node is not refused because of the cluster.
// It reports false when the store is not shared.
func (h *hub) lostRace() bool {
	if !h.shared() || h.doc == nil {
		return false
	}
	batch, later := h.log.Failed()
	all := append(batch, later...)
	var again []*pendingCommit
	for i := len(all) - 1; i >= 0; i-- {
		h.doc.Undo(all[i].Item.undo, len(all[i].Item.rec.Commit))
	}
	for _, e := range all {
		again = append(again, e.Item.p)
	}
	h.log.Restart(h.log.Durable())
	h.srv.metrics.Conflicts.Add(1)
	h.requeue = append(again, h.requeue...)
	if h.unfollow == nil {
		h.catchUp()
		return true
	}
	// The winner's records are on their way through the follow, and most
	// often already in ahead: wait for them rather than read the log (a
	// read stops the follow, and starting it again costs a consumer). The
	// wait is bounded: a follow that brings nothing (a lost server) ends
	// in the read after all. Until then decide holds every commit, so
	// none overtakes those taken back.
	h.race.Lost(h.log.Durable(), time.Now(), h.srv.cfg.LostRaceWait)
	h.postAfter(h.srv.cfg.LostRaceWait, raceWaitMsg{})
	return true
}

// raceWaited reads the log when the follow did not bring a lost race's
// winner in time.
func (h *hub) raceWaited() {
	if h.race.Tick(time.Now()) == docsm.RaceRead {
		h.catchUp()
	}
}

// redecide decides again, after what the log holds before them, the
// commits a lost race took back.
func (h *hub) redecide() {
	if len(h.requeue) > 0 {
		h.pipe.Requeue(h.requeue, Verdict{})
		h.requeue = nil
	}
	h.decide()
}

// catchUp reads what the log holds after the durable cursor, off the hub;
// caughtUp delivers it.
func (h *hub) catchUp() {
	h.race.End() // the read ends any wait for the follow: caughtUp decides
	h.stopFollowing()
	h.srv.metrics.CatchUps.Add(1)
	name, st, ctx, from := h.name, h.srv.store, h.srv.ctx, h.log.Durable()+1
	h.pause(func() hubMsg {
		var out []store.Record
		for len(out) < maxCatchUp {
			recs, err := st.Read(ctx, name, from, 0)
			if err != nil || len(recs) == 0 {
				return caughtUpMsg{recs: out, err: err}
			}
			out = append(out, recs...)
			from = recs[len(recs)-1].Cursor + 1
		}
		return caughtUpMsg{recs: out, more: true}
	})
}

// caughtUp applies what a catch-up read, then decides again the commits a
// lost race took back.
func (h *hub) caughtUp(m caughtUpMsg) {
	h.paused = false
	if m.err != nil {
		h.srv.log.Warn("catch up with the shared log", "document", h.name, "err", m.err)
		h.resync("this node fell behind the document's log; open it again")
		return
	}
	for _, r := range m.recs {
		if !h.applyForeign(r) {
			return
		}
	}
	if m.more {
		h.catchUp() // the rest, a bounded read at a time
		return
	}
	h.redecide()
}

// resync gives up on the replica: every member's topic ends (each resyncs
// when it opens again), the commits in flight are refused, and the
// document is loaded again from the log.
func (h *hub) resync(text string) {
	h.race.End()
	h.stopFollowing()
	e := protocol.Errorf(ReasonStoreUnavailable, text)
	for _, p := range h.requeue {
		h.settle(p, e)
	}
	h.requeue = nil
	for c := range h.members {
		c.post(connMsg{kind: msgEnd, name: h.name, reason: ReasonStoreUnavailable, text: text})
		delete(h.members, c)
	}
	if !h.log.Settled() {
		h.reloadDue = true // once the append in flight has ended
		return
	}
	h.reload(nil, nil)
}
