package link

import (
	"github.com/weftgate/weftgate/protocol"
	"github.com/weftgate/weftgate/protocol/frame"
)

// Event is something the application must hear about. The types in this
// file are the only ones; switch on them with a type switch.
type Event interface{ event() }

// PeerOpened is a peer's open for a name we have not shared. Answer it with
// Share or Decline. Want is what the first open said; a second open before
// the answer is merged in silently.
type PeerOpened struct {
	Name      string
	PeerTopic uint64
	Root      *frame.Root // nil: the peer holds nothing
	Want      bool
}

// Live says a topic is paired at both ends; commits may flow.
type Live struct {
	Topic uint64
	Name  string
}

// StateWanted asks the application for the document's state, to be given
// to SendState.
type StateWanted struct{ Topic uint64 }

// CommitsArrived is one commit from the peer, in order. Answer it with
// Refuse if it is not accepted; otherwise nothing is sent.
type CommitsArrived struct {
	Topic  uint64
	Seq    uint64 // the peer's number for it
	Commit []byte
}

// StateArrived is the peer's state, which we asked for. nil is an empty
// document.
type StateArrived struct {
	Topic uint64
	State []byte
}

// PeerRefused is the peer refusing one of our commits. Commit and Undo are
// nil when Seq is outside the window.
type PeerRefused struct {
	Topic   uint64
	Seq     uint64
	Reasons []frame.Reason
	Commit  []byte
	Undo    []byte
}

// Ended says a topic ended. Topic is 0 for a PeerOpened that ended before it
// was answered. Reason is Left for a leave, Closed when the link ended, or
// the fault's reason (sent or received).
type Ended struct {
	Topic   uint64
	Name    string
	Reason  protocol.Reason
	Message string
	ByPeer  bool // the peer ended it (leave, fault), not this end
}

// LinkEnded says the link ended; it comes after the Ended of every topic,
// and nothing follows it.
type LinkEnded struct {
	Reason  protocol.Reason
	Message string
	ByPeer  bool
}

func (PeerOpened) event()     {}
func (Live) event()           {}
func (StateWanted) event()    {}
func (CommitsArrived) event() {}
func (StateArrived) event()   {}
func (PeerRefused) event()    {}
func (Ended) event()          {}
func (LinkEnded) event()      {}
