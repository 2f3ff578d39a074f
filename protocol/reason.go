package protocol

import "strings"

// Reason is a stable refusal or fault code. The strings are the spec's
// vocabulary word for word (format.md section 7, replication.md), so a test
// can compare them against a fixture's "reason" field.
type Reason string

// Decode-stage reasons (format.md section 7, first table).
const (
	MalformedHead       Reason = "malformed-head"
	IndefiniteLength    Reason = "indefinite-length"
	NonCanonicalInteger Reason = "non-canonical-integer"
	Truncated           Reason = "truncated"
	TrailingBytes       Reason = "trailing-bytes"
	NestingTooDeep      Reason = "nesting-too-deep"
	IntegerOutOfRange   Reason = "integer-out-of-range"
	NonCanonicalFloat   Reason = "non-canonical-float"
	NonFiniteFloat      Reason = "non-finite-float"
	InvalidUTF8         Reason = "invalid-utf8"
	UnsupportedMajor    Reason = "unsupported-major"
	UnsupportedSimple   Reason = "unsupported-simple"
	InvalidCommit       Reason = "invalid-commit"
	EmptyCommit         Reason = "empty-commit"
	InvalidTag          Reason = "invalid-tag"
	DuplicateSlot       Reason = "duplicate-slot"
	DeltasOutOfOrder    Reason = "deltas-out-of-order"
	InvalidDelta        Reason = "invalid-delta"
	UnknownDeltaType    Reason = "unknown-delta-type"
	MissingValue        Reason = "missing-value"
	UnexpectedValue     Reason = "unexpected-value"
	InvalidID           Reason = "invalid-id"
	InvalidRef          Reason = "invalid-ref"
	UnknownRefKind      Reason = "unknown-ref-kind"
	InvalidReference    Reason = "invalid-reference"
	UnknownEdgeKind     Reason = "unknown-edge-kind"
	InvalidPosition     Reason = "invalid-position"
)

// Apply-stage reasons (format.md section 7, second table).
const (
	KindConflict   Reason = "kind-conflict"
	MultipleAttach Reason = "multiple-attach"
	SlotExists     Reason = "slot-exists"
	SlotMissing    Reason = "slot-missing"
	Unreachable    Reason = "unreachable"
)

// Link reasons (replication.md sections 2 and 5, and the JS link).
const (
	BadFrame      Reason = "bad-frame"
	NoTopic       Reason = "no-topic"
	NoDocument    Reason = "no-document"
	RootMismatch  Reason = "root-mismatch"
	UnwantedState Reason = "unwanted-state"
	// AcceptThrew is the refusal an end sends when its accept check failed
	// rather than answered (design 054, amended).
	AcceptThrew Reason = "accept-threw"
)

// Limit reasons: weftgate's own, for a bound that was exceeded. Each names
// the bound so a client or operator can act on it.
const (
	CommitTooLarge       Reason = "commit-too-large"
	TooManyDeltas        Reason = "too-many-deltas"
	TooManyObservables   Reason = "too-many-observables"
	TooManySlots         Reason = "too-many-slots"
	TooManyTopics        Reason = "too-many-topics"
	TooManyPendingCommit Reason = "too-many-pending-commits"
)

// Service reasons: weftgate's own outcomes that more than one of its
// packages gives (the gateway, the bridge, the store, the Go peer). They are
// defined here once so that one string means one thing everywhere; each
// package names them under its own constants. README.md says what a client
// or operator should do about each.
const (
	// SlowConsumer ends a link whose bytes queued toward its socket passed
	// their bound: it did not read as fast as its documents changed.
	SlowConsumer Reason = "slow-consumer"
	// WriteTimeout ends a link whose socket did not take one write within
	// the write timeout: the peer stopped reading, or its network did.
	WriteTimeout Reason = "write-timeout"
	// Closed is the local end of a link (or a call) whose socket went away.
	Closed Reason = "closed"
	// StoreUnavailable refuses what the store could not make durable or
	// load. Retry later.
	StoreUnavailable Reason = "store-unavailable"
	// AuthorityTimeout refuses what no authority answered in time.
	AuthorityTimeout Reason = "authority-timeout"
	// Internal is a defect: the gateway failed rather than answered.
	Internal Reason = "internal"
	// DocumentTooLarge refuses what would make a document's state larger
	// than the gateway's bound (a joiner must receive it in one message).
	DocumentTooLarge Reason = "document-too-large"
)

// Error is a refusal with a stable reason, a message for people, and the
// path of text steps from the document root to the target when it is known
// (nil when it is not: the spec's null).
type Error struct {
	Reason  Reason
	Message string
	Path    []string
	// Offset is the byte offset a decode-stage refusal was found at, or -1.
	Offset int
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Reason))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Path != nil {
		b.WriteString(" at /")
		b.WriteString(strings.Join(e.Path, "/"))
	}
	return b.String()
}

// Errorf returns an *Error with no path and no offset.
func Errorf(r Reason, msg string) *Error { return &Error{Reason: r, Message: msg, Offset: -1} }

// ReasonOf returns the reason of err when it is (or wraps) an *Error, else "".
func ReasonOf(err error) Reason {
	for err != nil {
		if e, ok := err.(*Error); ok {
			return e.Reason
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return ""
		}
		err = u.Unwrap()
	}
	return ""
}
