package link

import (
	"errors"

	"github.com/weftgate/weftgate/protocol"
)

// Reasons an Ended event carries that never cross the wire.
const (
	Left   protocol.Reason = "left"          // the peer sent leave, or we called Leave
	Closed                 = protocol.Closed // the link ended
)

// Errors for calls the application should not have made. Outcomes that have
// a protocol reason (no-topic, too-many-topics, too-many-pending-commits,
// commit-too-large, root-mismatch, no-document) are *protocol.Error values
// instead; read them with protocol.ReasonOf.
var (
	ErrEnded       = errors.New("link: the link has ended")
	ErrShared      = errors.New("link: the name is already shared")
	ErrNoRoot      = errors.New("link: a share with no root must want the peer's state")
	ErrBadRoot     = errors.New("link: unknown root kind")
	ErrNotPending  = errors.New("link: no peer open is waiting under that name")
	ErrNotLive     = errors.New("link: the topic is not live")
	ErrNotWanted   = errors.New("link: the peer has not asked for state")
	ErrEmptyCommit = errors.New("link: a commit is not empty bytes")
	ErrNoReasons   = errors.New("link: a refusal needs at least one reason")
	ErrBadSeq      = errors.New("link: sequence numbers run from 1 to 2^53")
	ErrBadText     = errors.New("link: text is not UTF-8")
	// ErrExhausted is 2^53 topics or commits on one topic: the most a frame
	// can number. A new link starts again from 1.
	ErrExhausted = errors.New("link: sequence or topic numbers are used up")
)
