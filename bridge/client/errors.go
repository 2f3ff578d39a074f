package client

import (
	"errors"
	"fmt"
	"strings"
)

// Errors a caller can test for with errors.Is.
var (
	// ErrClosed is returned by every method once Close has begun.
	ErrClosed = errors.New("client: closed")
	// ErrNotFound is GetState's answer for a document nobody has.
	ErrNotFound = errors.New("client: no such document")
	// ErrOutcomeUnknown is a stream write whose stream ended, or whose
	// context ended, after it was sent and before its WriteAck came: it may
	// or may not have been applied. Read the document to find out.
	ErrOutcomeUnknown = errors.New("client: the write's outcome is unknown")
	// ErrCursorGap is a subscription event that skipped cursors; the
	// subscription resumes from the last cursor applied.
	ErrCursorGap = errors.New("client: the gateway skipped a cursor")
	// ErrBadEvent is a subscription event the SDK could not read (an
	// undecodable commit, an unknown event); Subscribe returns it.
	ErrBadEvent = errors.New("client: unreadable subscription event")
	// ErrProtocol is a gateway message out of the authority stream's
	// order (no Welcome first, say); the stream is re-opened.
	ErrProtocol = errors.New("client: gateway broke the stream's protocol")
	// ErrTooManyResumed is a pattern subscription following more documents
	// than one resume request can name (MaxResumeDocuments).
	ErrTooManyResumed = errors.New("client: too many documents to resume")
)

// ClaimError is a claim the gateway refused.
type ClaimError struct {
	Pattern Pattern
	Reasons []Reason
}

func (e *ClaimError) Error() string {
	return fmt.Sprintf("client: claim %s refused: %s", e.Pattern, joinReasons(e.Reasons))
}

// CallError is a call's failure as the peer sees it, {reason, message,
// reasons}. A Call handler returns one (or wraps one) to choose the reason;
// any other error answers with a Failure, which the peer sees as `failed`.
type CallError struct {
	// Reason is required, for example "refused" or "failed".
	Reason  string
	Message string
	Reasons []Reason
}

func (e *CallError) Error() string {
	s := "call " + e.Reason
	if e.Message != "" {
		s += ": " + e.Message
	}
	if len(e.Reasons) > 0 {
		s += " (" + joinReasons(e.Reasons) + ")"
	}
	return s
}

func joinReasons(rs []Reason) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, "; ")
}
