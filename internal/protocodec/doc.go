// Package protocodec is the gRPC codec of weftgate's API: gRPC's proto codec,
// except that a message with generated vtprotobuf code is encoded and decoded
// by that code, two to three times as fast as protobuf-go, whose decoding
// and sizing were most of a verdict's protobuf cost (decision 011).
//
// The generated code does not check what protobuf-go checks, so the codec
// walks the bytes against the message's descriptor both ways, on the way in
// before decoding and on the way out after encoding: every string field must
// be UTF-8, nesting stays within protobuf-go's recursion limit, field
// numbers and the wire format must be valid, a packed run must end with its
// field, a known field must come with its own wire type (protobuf-go would
// keep it as unknown; the generated code misreads it in a map entry), and a
// map entry holds its key and value once each (the generated code ORs a
// varint sent twice). A message that fails is refused.
//
// It is not a general protobuf codec: it trusts that the generated code and
// the descriptors are of the same .proto files, which buf generate ensures.
package protocodec
