// Package docsm holds the parts of a document's hub that are pure state
// machines: driven by inputs and outputs, with time as an input, no
// goroutines, sockets, clocks, store or authority calls, so that each is
// tested by transcript (testdata/*.txt) as protocol/link is.
//
//   - Pipeline: one document's commits from arrival until each is decided,
//     several questions to the authority in flight, decisions in arrival
//     order, timeouts, a commit asked again when what landed before it
//     moved what it touches, and commits put back after a lost race on a
//     shared log.
//   - Owed: what a member that asked for the state is owed: that state
//     before any commit, and none of the commits it covers.
//   - Log and Recover: the applied commits on their way to the store
//     (gap-free cursors, one append in flight) and what a failed append
//     becomes once the store has been asked what it holds.
//   - Admit: what becomes of a commit whose turn came: applied, refused
//     to its origin alone, a compare-and-swap mismatch, or gone.
//   - Creation: a new document's creator's hold on joiners' wants, its
//     state timeout, and its abandonment.
//   - Idle: when a quiet document leaves memory, and whether it stores a
//     final snapshot.
//   - Race: on a log other nodes append to, the wait after a lost append
//     for the follow to bring the winner, and the read of the log when it
//     does not come in time.
//
// It will not apply a commit, hold the document, or talk to anything: the
// hub (gateway/hub.go) is the driver that asks the authority, applies what
// is decided, calls the store, and feeds answers and the time back in.
// Decision 028 says how the work divides and where a shared log plugs in.
package docsm
