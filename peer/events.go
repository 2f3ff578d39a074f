package peer

import (
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Event is something that happened to a Doc. The types in this file are the
// only ones; switch on them with a type switch.
type Event interface{ event() }

// Applied is a commit from the other end that was accepted and applied to
// the replica before this event was sent.
type Applied struct {
	Seq    uint64 // the other end's number for it
	Commit commit.Commit
}

// Refused is a refusal in either direction.
//
// Mine true: the other end refused our commit Seq; Commit and Undo are its
// bytes and its inverse's while it is inside the link's window (nil
// outside). Nothing is rolled back: commit the undo's deltas to yield.
//
// Mine false: this end refused the other end's commit Seq (it did not
// decode, Accept refused it, or the replica did); Commit is its bytes.
type Refused struct {
	Mine    bool
	Seq     uint64
	Reasons []frame.Reason
	Commit  []byte
	Undo    []byte
}

// StateApplied is the other end's state, moved onto the replica in place.
// Diff is what changed; it has no deltas when nothing did.
type StateApplied struct {
	Diff commit.Commit
}

// Ended is the last event of a Doc; the channel closes after it. Err on the
// Doc says the same.
type Ended struct {
	Reason  protocol.Reason
	Message string
	ByPeer  bool
}

func (Applied) event()      {}
func (Refused) event()      {}
func (StateApplied) event() {}
func (Ended) event()        {}
