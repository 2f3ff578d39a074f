// Package commit holds aweft values, ids, array positions and the commit
// codec of format.md sections 2 to 6: Encode writes the one canonical
// spelling of a commit, Decode refuses anything an encoder would not have
// written, with the exact decode-stage reason the fixtures name.
//
// It does not know documents: whether a commit fits a document is
// protocol/document's question (the apply stage).
package commit
