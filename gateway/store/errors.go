package store

import (
	"errors"
	"strings"

	"github.com/weftgate/weftgate/protocol"
)

// Reason is a stable code for a store outcome. The strings never change
// meaning, so the gateway can map them onto faults, refusals or gRPC
// statuses and operators can alert on them.
type Reason string

const (
	// Unavailable: the store cannot write (disk full, I/O error). What it had
	// stored is intact; appends are refused until a probe write succeeds.
	// When an Append fails with it, the records may or may not have landed:
	// read Info before choosing the next cursor.
	Unavailable = Reason(protocol.StoreUnavailable)
	// Closed: the store was closed.
	Closed Reason = "store-closed"
	// Corrupt: stored bytes did not decode; the store is not trusted.
	Corrupt Reason = "store-corrupt"
	// UnknownDocument: no document of that name (it is created by its first
	// snapshot).
	UnknownDocument Reason = "unknown-document"
	// CursorMismatch: an append's first cursor is not the document's last
	// cursor plus one, or the records' cursors are not consecutive.
	CursorMismatch Reason = "cursor-mismatch"
	// Compacted: a read asked for records older than the store retains; load
	// the snapshot instead.
	Compacted Reason = "compacted"
	// CursorAhead: a read started beyond the document's last cursor plus one.
	CursorAhead Reason = "cursor-ahead"
	// SnapshotCursor: a snapshot's cursor is behind the document's snapshot
	// or ahead of its last record.
	SnapshotCursor Reason = "snapshot-cursor"
	// RootMismatch: a snapshot names a different root than the document has.
	RootMismatch Reason = "root-mismatch"
	// BadName: the document name is empty or longer than MaxNameBytes.
	BadName Reason = "bad-document-name"
	// TooLarge: a record, an origin, a snapshot or an append exceeds its
	// named limit.
	TooLarge Reason = "store-limit"
)

// Error is a store outcome with a stable Reason. Err, when set, is the
// underlying cause (an I/O error, a context error).
type Error struct {
	Reason  Reason
	Doc     string
	Message string
	Err     error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("store: ")
	b.WriteString(string(e.Reason))
	if e.Doc != "" {
		b.WriteString(" (")
		b.WriteString(e.Doc)
		b.WriteString(")")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches any *Error with the same Reason, so errors.Is(err,
// ErrCompacted) works whatever the document or message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Reason == e.Reason
}

// Sentinels for errors.Is; the store returns richer *Error values with the
// same reasons.
var (
	ErrUnavailable     = &Error{Reason: Unavailable}
	ErrClosed          = &Error{Reason: Closed}
	ErrCorrupt         = &Error{Reason: Corrupt}
	ErrUnknownDocument = &Error{Reason: UnknownDocument}
	ErrCursorMismatch  = &Error{Reason: CursorMismatch}
	ErrCompacted       = &Error{Reason: Compacted}
	ErrCursorAhead     = &Error{Reason: CursorAhead}
	ErrSnapshotCursor  = &Error{Reason: SnapshotCursor}
	ErrRootMismatch    = &Error{Reason: RootMismatch}
	ErrBadName         = &Error{Reason: BadName}
	ErrTooLarge        = &Error{Reason: TooLarge}
)

// ReasonOf returns the Reason of err when it is or wraps an *Error, else "".
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

func errorf(r Reason, doc, msg string) *Error { return &Error{Reason: r, Doc: doc, Message: msg} }

func unavailable(doc string, cause error) *Error {
	return &Error{Reason: Unavailable, Doc: doc, Err: cause}
}
