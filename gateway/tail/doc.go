// Package tail holds a document's most recent durable commits, encoded,
// in a bounded ring that one writer appends to and many readers read from
// their own cursors (issue 18, decision 031).
//
// The hub appends each durable commit once; every link and subscriber keeps
// its own cursor and takes everything after it in one read, so fan-out
// costs the writer one append per commit whatever the number of readers,
// and a reader that fell behind takes more per read. The ring is bounded
// in commits and in bytes; a reader whose cursor is older than the oldest
// entry has fallen off (ErrFellOff), which the gateway treats as a slow
// consumer (or, for a gRPC subscriber, as a resume from the store).
//
// It will not decide who gets which commit (origin, owed states): the
// readers do. It does not copy commit bytes: an entry's bytes are shared by
// every reader and must never be changed.
package tail
