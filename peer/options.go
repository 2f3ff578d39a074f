package peer

import (
	"net/http"
	"time"

	"github.com/weftgate/weftgate/protocol/commit"
	"github.com/weftgate/weftgate/protocol/document"
	"github.com/weftgate/weftgate/protocol/frame"
	"github.com/weftgate/weftgate/protocol/link"
)

// Defaults for a zero Options field.
const (
	// DefaultEventBuffer is the room in each Doc's event channel. Events that
	// find it full are dropped and counted (Doc.Missed); the replica itself
	// is never behind, because the loop applies before it reports.
	DefaultEventBuffer = 256
	// DefaultMaxMessageBytes is the largest message read, the JS peer's
	// limit; a larger one ends the link (close 1009).
	DefaultMaxMessageBytes = 1 << 20
	// DefaultMaxBacklogBytes bounds the encoded frames waiting for the socket.
	DefaultMaxBacklogBytes = 8 << 20
	// DefaultWriteTimeout bounds one socket write; a write that takes longer
	// ends the link.
	DefaultWriteTimeout = 10 * time.Second
)

// inputQueue is how many decoded frames the reader may hand ahead of the
// loop; past it the reader waits, and TCP pushes back on the sender.
const inputQueue = 16

// Options configure a Peer. The zero value works.
type Options struct {
	// Header is sent with the handshake (a session cookie, an Origin).
	Header http.Header
	// HTTPClient dials the handshake; nil is http.DefaultClient.
	HTTPClient *http.Client
	// Link bounds the link (window, topics, frame bytes).
	Link link.Config
	// Limits bound every replica this peer builds for Join.
	Limits document.Limits
	// CommitLimits bound every commit received.
	CommitLimits commit.Limits
	// Accept, when set, judges each received commit before it is applied,
	// with the replica as it still is. It runs on the loop goroutine, so it
	// must not block, keep or change doc, or call the Peer or its Docs. A
	// non-empty result refuses the commit with those reasons.
	Accept func(name string, doc *document.Document, c commit.Commit) []frame.Reason

	EventBuffer     int           // default DefaultEventBuffer
	MaxMessageBytes int64         // default DefaultMaxMessageBytes
	MaxBacklogBytes int           // default DefaultMaxBacklogBytes; keep it above Link.MaxFrameBytes
	WriteTimeout    time.Duration // default DefaultWriteTimeout
}

func (o Options) withDefaults() Options {
	if o.EventBuffer <= 0 {
		o.EventBuffer = DefaultEventBuffer
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.MaxBacklogBytes <= 0 {
		o.MaxBacklogBytes = DefaultMaxBacklogBytes
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	return o
}
