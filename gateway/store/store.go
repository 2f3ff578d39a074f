package store

import "context"

// Record is one commit in a document's log. Commit is opaque to the store.
// Origin says where it came from (a link, a backend), for fan-out to skip.
type Record struct {
	Cursor uint64
	Commit []byte
	Origin string
}

// Snapshot is a document's whole state as of Cursor (every record up to and
// including Cursor applied). State nil is the empty document. Root and
// RootKind are the document's root id and kind, fixed for life.
type Snapshot struct {
	Cursor   uint64
	State    []byte
	Root     [12]byte
	RootKind uint8
}

// DocInfo is what the store knows about a document without reading its
// records.
type DocInfo struct {
	Name     string
	Root     [12]byte
	RootKind uint8
	// Snapshot is the cursor of the newest snapshot.
	Snapshot uint64
	// Floor: every record with Floor < cursor <= Last is retained; Read from
	// a cursor <= Floor gives ErrCompacted.
	Floor uint64
	// Last is the cursor of the newest record, or Snapshot when there is
	// none after it.
	Last uint64
}

// Store keeps every document's commit log durable. One owner (a document's
// hub) appends to a document; any number may read. Every method is safe for
// concurrent use.
//
// A document is created by its first PutSnapshot, which fixes its root; an
// empty new document is PutSnapshot(Snapshot{Cursor: 0, State: nil, Root:
// r, RootKind: k}). Cursors are gap-free: the first record after a snapshot
// at cursor C is C+1.
type Store interface {
	// Append makes recs durable for doc, in order. recs[0].Cursor must be
	// the document's last cursor plus one and the rest consecutive, else
	// ErrCursorMismatch and nothing is written. It returns nil only once
	// the records are on disk, so the caller may then deliver them. ctx
	// bounds the wait for a place in the write queue; once queued, Append
	// waits for its outcome. Append does not keep recs.
	Append(ctx context.Context, doc string, recs []Record) error

	// Load returns the newest snapshot and the records after it, at most
	// MaxLoadRecords of them and MaxLoadBytes of commits (always at least
	// one when there is one). When the tail was cut, continue with Read
	// from the next cursor until it returns nothing.
	Load(ctx context.Context, doc string) (*Snapshot, []Record, error)

	// Read returns up to max records with cursor >= from, in order (max <=
	// 0 or above MaxReadRecords means MaxReadRecords; at most MaxReadBytes
	// of commits but always at least one record when there is one). From 0
	// means 1. It returns ErrCompacted when from <= Floor, ErrCursorAhead
	// when from > Last+1, and no records when from == Last+1.
	Read(ctx context.Context, doc string, from uint64, max int) ([]Record, error)

	// PutSnapshot stores s as doc's newest snapshot, creating doc when it
	// does not exist (then any cursor is allowed and becomes Last). For an
	// existing doc s.Cursor must lie between its snapshot and its last
	// cursor (ErrSnapshotCursor) and the root must match (ErrRootMismatch).
	// Records older than s.Cursor-Options.Retain are dropped.
	PutSnapshot(ctx context.Context, doc string, s Snapshot) error

	// Delete removes doc for good: its snapshot, every record and its
	// metadata, durably, ordered after every write queued before it. A
	// later PutSnapshot creates a new document under the name. Deleting
	// an absent document is ErrUnknownDocument.
	Delete(ctx context.Context, doc string) error

	// Info describes one document.
	Info(ctx context.Context, doc string) (DocInfo, error)

	// Documents lists every document, ordered by name bytes.
	Documents(ctx context.Context) ([]DocInfo, error)

	// Healthy returns nil when the store accepts writes; otherwise the
	// reason it does not (ErrUnavailable, ErrClosed). When the store has
	// failed, Healthy first tries a probe write, so calling it is also how
	// a caller can make writes resume promptly.
	Healthy(ctx context.Context) error

	// Close drains queued writes, makes them durable and releases the
	// store. Later calls fail with ErrClosed. Close is idempotent.
	Close() error
}
