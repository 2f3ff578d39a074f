// Package jsstore keeps every document's log on NATS JetStream, so that
// several gateway nodes share one log per document (issue 17). It
// implements store.Store and passes the same conformance suite as the
// embedded stores. It is named jsstore, not jetstream, so that it does
// not shadow nats.go's jetstream package in the files that use both.
//
// Layout: one stream (WEFT_LOG) holds every record; a document's records
// are on subjects weft.log.<key>.<gen>.<block>, where key is a hash of
// the name (names are any bytes, subject tokens are not), gen is new each
// time the name is created, and block is (cursor-1)/64, so a read finds
// its start with one lookup. The cursor is in a header. The records of
// one append that fall in one block are one message (a Weft-Records header
// counts them; decision 039), so an append is most often one conditional
// publish; a message without that header is one record. A KV bucket
// (WEFT_DOCS) holds each document's entry: name, root, snapshot cursor,
// floor and small states; larger states go to an object store
// (WEFT_SNAP), because a KV value is limited by the server's max payload.
//
// Appends are conditional: the first message of each append carries
// the expected last sequence of the document's subjects, so of two nodes
// appending the same cursor exactly one lands and the other gets
// ErrCursorMismatch; an append of several messages is an atomic batch, so
// it lands whole or not at all. The choice is
// in docs/decisions/029-jetstream-log.md. Follow delivers what other
// nodes append, through one ordered consumer that it deletes when it ends;
// the stream sets its consumer limit (Options.MaxFollows), because
// nats-server 2.15 otherwise caps it at 1,000 consumers.
//
// It does not own the NATS connection, does not decide who appends (the
// hub does, and decides again after a lost race), and does not make a cluster
// by itself: a node must follow the others' appends. Retention is by
// block: records up to 63 below the floor may stay stored, hidden by it.
// A record must fit the server's max_payload, else ErrTooLarge.
package jsstore
