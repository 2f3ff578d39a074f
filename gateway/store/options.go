package store

import "time"

// Fixed limits. Each is a bound callers can rely on; exceeding one is
// ErrTooLarge or ErrBadName, never a crash.
const (
	// MaxNameBytes bounds a document name.
	MaxNameBytes = 1024
	// MaxOriginBytes bounds a record's origin.
	MaxOriginBytes = 256
	// MaxRecordBytes bounds one commit; well above any sane commit limit of
	// the gateway, so the store never refuses what the gateway accepted.
	MaxRecordBytes = 4 << 20
	// MaxAppendRecords bounds the records of one Append.
	MaxAppendRecords = 4096
	// MaxAppendBytes bounds the commit bytes of one Append.
	MaxAppendBytes = 16 << 20
	// MaxSnapshotBytes bounds a snapshot's state.
	MaxSnapshotBytes = 256 << 20
	// MaxReadRecords and MaxReadBytes bound one Read.
	MaxReadRecords = 4096
	MaxReadBytes   = 4 << 20
	// MaxLoadRecords and MaxLoadBytes bound the tail one Load returns.
	MaxLoadRecords = 1 << 16
	MaxLoadBytes   = 64 << 20
)

// Defaults for the zero Options.
const (
	DefaultRetain            = 10000
	DefaultQueueLength       = 4096
	DefaultBatchRecords      = 8192
	DefaultBatchBytes        = 8 << 20
	DefaultCheckpointRecords = 32768
	DefaultCheckpointBytes   = 32 << 20
	DefaultProbeInterval     = time.Second
	DefaultMmapBytes         = 1 << 30
)

// Options tune a store. The zero value works.
type Options struct {
	// Retain is how many records are kept behind the newest snapshot for
	// subscribers that resume (0 means DefaultRetain; negative keeps all).
	Retain int

	// QueueLength bounds Append and PutSnapshot requests waiting for the
	// writer; a full queue blocks callers until ctx ends.
	QueueLength int
	// BatchRecords and BatchBytes bound one group commit; a single request
	// larger than them still goes alone.
	BatchRecords int
	BatchBytes   int

	// CheckpointRecords and CheckpointBytes bound the write-ahead log:
	// once it holds this much, the writer folds it into the per-document
	// log in one transaction. Larger means fewer scattered page writes and
	// more memory and replay on open. 1 folds every batch at once.
	CheckpointRecords int
	CheckpointBytes   int

	// MaxFileBytes caps the pages the database uses (0 means no cap).
	// Reaching it is ErrUnavailable, as a full disk would be. The file
	// itself may run up to bbolt's 16 MiB growth step past it.
	MaxFileBytes int
	// MmapBytes is the initial memory map size; readers never block the
	// writer while the file fits in it.
	MmapBytes int
	// ProbeInterval is how often a failed store tries a probe write.
	ProbeInterval time.Duration

	// Fault, when set, is called just before each write transaction
	// commits; a non-nil result fails that transaction as an I/O error
	// would. It lets tests inject failures. It must not call the store.
	Fault func() error
	// HealthChanged, when set, is called with the cause when the store
	// fails and with nil when it recovers. It must not call the store.
	HealthChanged func(err error)
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.Retain == 0 {
		o.Retain = DefaultRetain
	}
	def(&o.QueueLength, DefaultQueueLength)
	def(&o.BatchRecords, DefaultBatchRecords)
	def(&o.BatchBytes, DefaultBatchBytes)
	def(&o.CheckpointRecords, DefaultCheckpointRecords)
	def(&o.CheckpointBytes, DefaultCheckpointBytes)
	def(&o.MmapBytes, DefaultMmapBytes)
	if o.MaxFileBytes < 0 {
		o.MaxFileBytes = 0
	}
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = DefaultProbeInterval
	}
	return o
}

// floorFor is the floor a snapshot at cursor leaves, given the old floor.
func (o Options) floorFor(cursor, old uint64) uint64 {
	if o.Retain < 0 || cursor <= uint64(o.Retain) {
		return old
	}
	return max(old, cursor-uint64(o.Retain))
}
