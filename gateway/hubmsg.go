package gateway

import (
	"github.com/weftgate/weftgate/gateway/docsm"
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
)

// hubMsg is one input to a hub. The set is closed: every type below, and
// nothing else, reaches a hub's goroutine, and handle lists what each does.
// Inputs are of three kinds: from a link (open, want, state, commit,
// leave), from a caller on another goroutine (API and operator calls,
// reads for the status), and completions of work the hub started (an
// authority's answer, a store call, a timer).
type hubMsg interface{ hubMsg() }

// From links.
type (
	openMsg struct {
		c    *conn
		ts   *topicState
		root *frame.Root // the peer's, nil when it has none
		want bool
	}
	wantMsg  struct{ c *conn }
	stateMsg struct {
		c  *conn
		st commit.Commit
	}
	commitMsg struct{ p *pendingCommit }
	leaveMsg  struct{ c *conn }
)

// From callers: the API, the operator, the registry and the status.
type (
	// callMsg runs op once the document is loaded (from the store, and
	// from a backend Loader when there is one to ask); done gets the
	// outcome of the load, or op's.
	callMsg struct {
		op   callOp
		done func(error)
	}
	subscribeMsg struct {
		sub *subscriber
		add bool
	}
	heldMsg       struct{ res chan<- bool }
	snapshotMsg   struct{ res chan<- snapshotAnswer }
	infoMsg       struct{ res chan<- DocumentInfo }
	statusMsg     struct{ res chan<- statusAnswer }
	deleteMsg     struct{ done func(Deleted, error) }
	endMembersMsg struct {
		reason protocol.Reason
		text   string
		res    chan<- int
	}
	// releasedMsg: the registry dropped the last reference.
	releasedMsg struct{}
)

// callOp is what a callMsg does once the document is loaded: one of the
// API's calls.
type callOp interface{ callOp() }

type (
	stateCall struct{ out *stateAnswer }
	// writeCall's done comes once the commit is durable (cur set) or
	// refused.
	writeCall struct {
		p   *pendingCommit
		cur *uint64
	}
	createCall  struct{ root frame.Root }
	replaceCall struct {
		origin Origin
		st     commit.Commit
		expect *uint64
		out    *replaced
	}
)

// Completions of what the hub started.
type (
	mayOpenMsg struct {
		open openMsg
		err  error
	}
	verdictMsg struct {
		t docsm.Ticket[*pendingCommit]
		v Verdict
	}
	judgeTickMsg   struct{}
	creatorLateMsg struct{ m *member }
	appendedMsg    struct{ err error }
	createdMsg     struct{ err error }
	backendLoadMsg struct {
		doc   Loaded
		found bool
		err   error
		// adopted is doc made a document and stored, or why not.
		adopted  *document.Document
		adoptErr error
	}
	// createdDocMsg: a Create's empty snapshot is stored, or failed.
	createdDocMsg struct {
		root frame.Root
		err  error
		done func(error)
	}
	storeCallDoneMsg struct{}
	deletedMsg       struct{ err error }
)

func (openMsg) hubMsg()          {}
func (wantMsg) hubMsg()          {}
func (stateMsg) hubMsg()         {}
func (commitMsg) hubMsg()        {}
func (leaveMsg) hubMsg()         {}
func (callMsg) hubMsg()          {}
func (subscribeMsg) hubMsg()     {}
func (heldMsg) hubMsg()          {}
func (snapshotMsg) hubMsg()      {}
func (infoMsg) hubMsg()          {}
func (statusMsg) hubMsg()        {}
func (deleteMsg) hubMsg()        {}
func (endMembersMsg) hubMsg()    {}
func (releasedMsg) hubMsg()      {}
func (mayOpenMsg) hubMsg()       {}
func (verdictMsg) hubMsg()       {}
func (judgeTickMsg) hubMsg()     {}
func (creatorLateMsg) hubMsg()   {}
func (appendedMsg) hubMsg()      {}
func (createdMsg) hubMsg()       {}
func (backendLoadMsg) hubMsg()   {}
func (storeCallDoneMsg) hubMsg() {}
func (deletedMsg) hubMsg()       {}
func (createdDocMsg) hubMsg()    {}

func (stateCall) callOp()   {}
func (writeCall) callOp()   {}
func (createCall) callOp()  {}
func (replaceCall) callOp() {}

// handle carries out one input on the hub goroutine.
func (h *hub) handle(m hubMsg) {
	switch m := m.(type) {
	case openMsg:
		h.open(m)
	case wantMsg:
		h.stateWanted(m.c)
	case stateMsg:
		h.stateArrived(m.c, m.st)
	case commitMsg:
		h.commit(m.p)
	case leaveMsg:
		h.leave(m.c)
	case callMsg:
		h.call(m)
	case subscribeMsg:
		if m.add {
			h.resetUnread()
			h.subs[m.sub] = struct{}{}
			// Read once more now that it is counted: on a shared log,
			// records may have come between its first read and the
			// hub's load, and no wake would tell it of them.
			m.sub.notify()
		} else {
			delete(h.subs, m.sub)
			h.resetUnread()
		}
	case heldMsg:
		m.res <- h.doc != nil
	case snapshotMsg:
		h.whenSettled(func() { m.res <- h.snapshotAnswer() })
	case infoMsg:
		m.res <- h.info()
	case statusMsg:
		m.res <- h.status()
	case deleteMsg:
		h.beginDelete(m.done)
	case endMembersMsg:
		m.res <- h.endMembers(m.reason, m.text)
	case releasedMsg:
		h.maybeIdle()
	case mayOpenMsg:
		h.openDecided(m.open, m.err)
	case verdictMsg:
		h.verdict(m.t, m.v)
	case judgeTickMsg:
		h.judgeExpired()
	case creatorLateMsg:
		h.creatorLate(m.m)
	case appendedMsg:
		h.appended(m.err)
	case createdMsg:
		h.created(m.err)
	case backendLoadMsg:
		h.backendLoaded(m)
	case storeCallDoneMsg:
		h.storeCallDone()
	case deletedMsg:
		h.deleted(m.err)
	case loadedMsg:
		h.loaded(m)
	case createdDocMsg:
		h.createdDoc(m)
	case foreignMsg:
		h.foreign(m)
	case caughtUpMsg:
		h.caughtUp(m)
	case followRetryMsg:
		h.followWaiting = false
	case raceWaitMsg:
		h.raceWaited()
	case wakeMsg:
		h.wakeDue = false
		h.wakeMembers(0, nil)
	case wakeMoreMsg:
		h.wakeHop = false
		h.wakeSome()
	default:
		panic("gateway: a hub got an input outside its set")
	}
	h.afterInput()
}

// call runs an API call once the document is loaded.
func (h *hub) call(m callMsg) {
	if ok, retrying := h.storeLoaded(m); retrying {
		return
	} else if !ok {
		m.done(errStoreFailed)
		return
	}
	h.withLoaded(nil, func(err error) {
		if err == nil && h.deleting != nil {
			err = errDeleting
		}
		if err != nil {
			m.done(err)
			return
		}
		switch op := m.op.(type) {
		case stateCall:
			h.stateCall(op, m.done)
		case writeCall:
			op.p.result = func(c uint64, err error) {
				*op.cur = c
				m.done(err)
			}
			h.commit(op.p)
		case createCall:
			h.createCall(op, m.done)
		case replaceCall:
			h.replaceCall(op, m.done)
		}
	})
}
