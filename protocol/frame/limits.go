package frame

import "github.com/weftgate/weftgate/protocol/wire"

// MaxNumber is the largest topic, first or seq the encoding can carry: wire
// integers are exact only within 2^53 (format.md section 6.2), and a decoder
// refuses anything larger as integer-out-of-range.
const MaxNumber uint64 = wire.MaxInt

// A frame holds no bound of its own beyond MaxNumber: every list in it is
// bounded by the bytes it arrived in (wire.Scan refuses a length longer than
// what remains), and Decode allocates at most a small constant times that.
// Bounds on message bytes and commits per frame belong to whoever reads the
// socket.
