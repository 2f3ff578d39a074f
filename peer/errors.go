package peer

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/weftgate/weftgate/protocol"
)

// Reasons this end gives for ending a link, besides the link's own.
const (
	// SlowConsumer: the socket did not take frames as fast as the link made
	// them, and the backlog passed Options.MaxBacklogBytes.
	SlowConsumer = protocol.SlowConsumer
	// Internal: a frame the link produced did not encode, a defect.
	Internal = protocol.Internal
)

// ErrClosed is returned by calls on a Peer, or a Doc of one, after the link
// ended because this end called Close.
var ErrClosed = errors.New("peer: closed")

// EndedError says why a Doc or the whole link ended. It unwraps to a
// *protocol.Error, so protocol.ReasonOf gives its reason.
type EndedError struct {
	Name    string // the document's name; empty for the link
	Reason  protocol.Reason
	Message string
	ByPeer  bool // the other end ended it (leave, fault, closing the socket)
}

func (e *EndedError) Error() string {
	what := "link"
	if e.Name != "" {
		what = fmt.Sprintf("document %q", e.Name)
	}
	by := "here"
	if e.ByPeer {
		by = "by the peer"
	}
	s := fmt.Sprintf("peer: %s ended %s: %s", what, by, e.Reason)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *EndedError) Unwrap() error {
	return &protocol.Error{Reason: e.Reason, Message: e.Message, Offset: -1}
}

// HandshakeError is a WebSocket handshake the server refused or that failed
// before the upgrade. StatusCode is 0 when no HTTP response came back.
type HandshakeError struct {
	StatusCode int
	Header     http.Header
	Body       []byte // at most the first 1 KiB, what the WebSocket client keeps
	Err        error
}

func (e *HandshakeError) Error() string {
	if e.StatusCode == 0 {
		return "peer: handshake: " + e.Err.Error()
	}
	return fmt.Sprintf("peer: handshake refused with %d: %s", e.StatusCode, e.Body)
}

func (e *HandshakeError) Unwrap() error { return e.Err }
