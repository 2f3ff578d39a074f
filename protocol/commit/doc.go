// Package commit holds aweft values, ids, array positions and the commit
// codec of format.md sections 2 to 6: Encode writes the one canonical
// spelling of a commit, Decode refuses anything an encoder would not have
// written, with the exact decode-stage reason the fixtures name.
//
// Decode is hand-written over protocol/wire rather than built on
// fxamacker/cbor: conformance is judged by the reason a refusal names and by
// which reason wins when an input breaks two rules (INDEX.md 8.1: bytes before
// structure, then the structure front to back, the delta order, the tag).
// A general CBOR library refuses with its own errors, in its own order, and
// accepts things this format forbids (half floats, wide heads) unless each is
// switched off; it also allocates a generic tree first. fxamacker/cbor is used
// in the tests instead, as an independent reader of what Encode writes.
//
// Decode reads a commit in one walk that judges its bytes as it goes, and
// lets wire.Scan name a refusal, since a byte-level reason anywhere wins.
//
// The JSON view (MarshalJSON/UnmarshalJSON on Commit, Delta, Ref and Value)
// is the fixtures' shape, for fixtures, logs and tools; the wire is bytes.
//
// It does not know documents: whether a commit fits a document is
// protocol/document's question (the apply stage). It neither computes nor
// checks the integrity tag, whose algorithm the spec leaves open.
package commit
