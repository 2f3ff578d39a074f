// Package docsm holds the parts of a document's hub that are pure state
// machines: driven by inputs and outputs, with time as an input, no
// goroutines, sockets, clocks, store or authority calls, so that each is
// tested by transcript (testdata/*.txt) as protocol/link is.
//
// Pipeline is one document's commits from their arrival until each is
// decided, with several questions to the authority in flight, the
// decisions still taken in arrival order, timeouts, and a commit asked
// again when what landed before it moved what it touches. Owed is what a
// member that asked for the state is owed: that state before any commit,
// and none of the commits it covers. Log is the applied commits on their
// way to the store: gap-free cursors, one append in flight, what a failed
// append gives back.
//
// It will not apply a commit, hold the document, or talk to anything: the
// hub (gateway/hub.go) is the driver that asks the authority, applies what
// is decided and feeds answers and the time back in. Issue 16 grows the
// rest of the hub (waiters, the creator's hold, idle unload, the delete)
// into this package the same way.
package docsm
