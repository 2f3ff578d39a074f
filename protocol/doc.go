// Package protocol holds what every part of aweft shares: the stable reason
// codes of the spec's refusal vocabulary and the error value that carries one.
//
// The sub-packages are aweft itself, pure: wire (the strict byte encoding of
// format.md section 6), commit (values, ids, positions and the commit codec),
// document (the document model and apply), frame (the six link frames) and
// link (the link state machine). None of them starts a goroutine, opens a
// socket, reads a clock or draws randomness, except that commit.NewID reads
// crypto/rand as identity.md requires. They are driven by inputs and outputs
// so they can be tested by transcript and fuzzed.
//
// This package does not decode or apply anything; it only names outcomes.
package protocol
