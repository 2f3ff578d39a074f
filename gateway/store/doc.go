// Package store keeps every document's commit log durable, so that nothing
// the gateway delivered is lost: a hub appends a document's commits with
// gap-free cursors and delivers them only once Append has returned.
//
// Two implementations here share one interface, Store: Open, an embedded
// crash-safe store on one bbolt file with group commit (many concurrent
// appends share one transaction and its syncs), and NewMemory, for tests and
// diskless runs. A third, gateway/store/jetstream, keeps the log on NATS
// JetStream; storetest holds the conformance suite all three pass. Both keep a document as a snapshot (its whole state at a
// cursor, which also fixes its root) plus the records after it, and retain
// Options.Retain records behind the newest snapshot for subscribers that
// resume.
//
// Delete removes a document for good (data that must go): its snapshot,
// records and metadata, in one durable transaction ordered after every write
// queued before it.
//
// Durability: Append returns nil only once its records are synced, and a
// reopen after a crash gives every such record. A failing disk (full, I/O
// errors) makes writes fail with store-unavailable while reads go on; a
// probe write, periodic or prompted by Healthy, lets writes resume. The
// on-disk layout (a write-ahead bucket folded at checkpoints into
// per-document chunks) is described in encoding.go, the choice of bbolt in
// docs/decisions/001-embedded-store.md.
//
// The store knows nothing of sockets, links or the document model: commits
// and states are opaque bytes. It does not decode, validate or apply them,
// does not assign cursors (the hub does, and the store checks them), and
// does not decide when to snapshot. Errors are *Error values with a stable
// Reason; see errors.go for the table.
package store
