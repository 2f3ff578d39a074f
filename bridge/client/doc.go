// Package client is the Go SDK for backends of a weftgate gateway: it dials
// the gateway's gRPC API (gen/weftgate/v1), claims document, handshake and
// call names by pattern, and answers the gateway's questions about them
// (accept, load, identify, may-open, call) with plain Go functions. It also
// follows documents' commit streams with automatic resume, and reads and
// writes documents.
//
// What it does for the caller:
//
//   - One authority stream, opened when the first claim or stream write
//     needs it, re-opened with exponential backoff (100 ms doubling to 30 s,
//     full jitter, reset by a Welcome) when it drops, re-claiming every
//     claim in force.
//   - Handlers run concurrently, at most Options.MaxInFlight at once (or the
//     gateway's lower bound); answers go back by question id, batched. An
//     Accept that never blocks may run on the stream's receive loop instead
//     (Handlers.InlineAccept), one hand-off less a commit. A handler that
//     errors or panics answers with a Failure, so a backend bug fails closed.
//   - Commits reach handlers decoded from their exact bytes with
//     protocol/commit, beside each delta's path from the gateway's typed
//     view; a commit whose two forms disagree is answered with a Failure.
//   - Subscribe resumes from the last cursor its callback applied, so the
//     callback sees no gap and no duplicate, and a snapshot when the gateway
//     no longer holds the commits in between.
//
// What it does not do: it holds no document state (a backend that needs one
// applies events to a protocol/document), it does not retry unary calls
// (their outcome is the caller's to judge), and it does not compute or check
// integrity tags.
//
// Status reports the streams (state, last error, consecutive failures,
// claims, each subscription's observed and applied cursors); Changed wakes
// a waiter at the next change, so a readiness probe needs no polling.
//
// Close ends everything it started and waits for it. Do not call Close from
// a handler or a Subscribe callback: it waits for them.
package client
