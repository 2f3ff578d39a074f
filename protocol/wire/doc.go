// Package wire is the strict CBOR subset of format.md section 6, shared by
// the commit codec and the frame codec.
//
// Scan proves that a buffer holds exactly one value an encoder would have
// written, and names the first rule it breaks with the spec's reason. Reader
// then walks those bytes without judging them again, and the Append functions
// write the one canonical spelling of each value. A decoder that would rather
// judge and read in one walk reads each item with Head and ValidText, which
// judge as Scan does, and asks Scan for the reason when they refuse.
//
// It does not know what a commit or a frame is, and the Append functions do
// not refuse anything: NaN, integers outside plus or minus 2^53 and invalid
// UTF-8 are the caller's to refuse before writing (ValidInt, ValidFloat,
// utf8.ValidString), because only the caller knows which reason to give.
package wire
