package jsstore

import "time"

// Defaults for the zero Options.
const (
	DefaultStream    = "WEFT_LOG"
	DefaultSubject   = "weft.log"
	DefaultDocs      = "WEFT_DOCS"
	DefaultSnapshots = "WEFT_SNAP"
	DefaultRetain    = 10000
	DefaultTimeout   = 5 * time.Second
	// DefaultInlineSnapshotBytes: states up to this size ride in the
	// document's KV entry; larger ones go to the object store. Well under
	// NATS's default 1 MiB max payload.
	DefaultInlineSnapshotBytes = 64 << 10
	// DefaultBatchRecords is the server's default atomic batch limit.
	DefaultBatchRecords = 1000
	// DefaultFollowBytes bounds what one Follow buffers from the server:
	// two of the largest records.
	DefaultFollowBytes = 9 << 20
	// DefaultMaxFollows is the stream's consumer limit. Each node that
	// holds a document follows it with one consumer; nats-server 2.15
	// caps a stream that sets no limit at 1,000 consumers, which would cap
	// a whole cluster at 1,000 followed documents.
	DefaultMaxFollows = 1_000_000
	// followIdle is how long the server keeps a follow's consumer once
	// nothing pulls from it. A Follow deletes its consumer when it ends;
	// this is the backstop when that delete cannot reach the server.
	followIdle = 2 * time.Minute
)

// blockRecords is how many consecutive cursors share one subject. A read
// from cursor c starts at the first record of c's block, so it skips at
// most blockRecords-1 records; the server keeps per-subject state for
// about (retained records)/blockRecords subjects per document.
const blockRecords = 64

// Options tune a Store. The zero value works.
type Options struct {
	// Stream is the JetStream stream holding every document's records;
	// Subject is the prefix of its subjects (Subject.>).
	Stream  string
	Subject string
	// Docs is the KV bucket of document metadata (root, snapshot cursor,
	// floor, small states); Snapshots the object store of large states.
	Docs      string
	Snapshots string
	// Replicas of the stream, the KV bucket and the object store (0 means
	// 1; 3 for a cluster that survives losing a server).
	Replicas int
	// Retain is how many records are kept behind the newest snapshot (0
	// means DefaultRetain; negative keeps all), as store.Options.Retain.
	Retain int
	// Timeout bounds one request to NATS when the caller's context has no
	// deadline (0 means DefaultTimeout).
	Timeout time.Duration
	// InlineSnapshotBytes: states up to this size are kept in the KV entry
	// (0 means DefaultInlineSnapshotBytes).
	InlineSnapshotBytes int
	// BatchRecords bounds the records of one atomic publish; an Append of
	// more is several batches, each conditional on the one before (0 means
	// DefaultBatchRecords; keep it at or under the server's max_batch_size).
	BatchRecords int
	// FollowBytes bounds the bytes one Follow buffers (0 means
	// DefaultFollowBytes; it must exceed the largest record).
	FollowBytes int
	// MaxFollows is the stream's consumer limit: the Follows that may run
	// at once over every node sharing the stream (0 means
	// DefaultMaxFollows).
	MaxFollows int
	// HealthChanged, when set, is called with the cause when writes start
	// failing and with nil when they work again. It must not call the
	// store.
	HealthChanged func(err error)
}

func (o Options) withDefaults() Options {
	str := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	num := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	str(&o.Stream, DefaultStream)
	str(&o.Subject, DefaultSubject)
	str(&o.Docs, DefaultDocs)
	str(&o.Snapshots, DefaultSnapshots)
	num(&o.Replicas, 1)
	if o.Retain == 0 {
		o.Retain = DefaultRetain
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	num(&o.InlineSnapshotBytes, DefaultInlineSnapshotBytes)
	num(&o.BatchRecords, DefaultBatchRecords)
	num(&o.FollowBytes, DefaultFollowBytes)
	num(&o.MaxFollows, DefaultMaxFollows)
	return o
}

// floorFor is the floor a snapshot at cursor leaves, given the old one.
func (o Options) floorFor(cursor, old uint64) uint64 {
	if o.Retain < 0 || cursor <= uint64(o.Retain) {
		return old
	}
	return max(old, cursor-uint64(o.Retain))
}
