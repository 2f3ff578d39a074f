// Package frame encodes and decodes the six link frames of replication.md
// section 5 with the byte encoding of format.md section 6 (protocol/wire).
// Commits inside frames stay bytes; protocol/commit reads them.
//
// Decode tells two failures apart: bytes that are not one well-formed value
// (the wire's byte-level reason; the link must end) and a value that is not
// a frame (*BadFrameError, reason bad-frame, naming the topic when it can be
// addressed). Encode refuses every frame Decode would refuse, so what one end
// writes the other end reads back as the same frame, byte for byte.
//
// It does not keep any state about topics or sequences, and it does not
// decode the commits a frame carries: that is protocol/link and
// protocol/commit.
package frame
