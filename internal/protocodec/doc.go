// Package protocodec is the gRPC codec of weftgate's API: gRPC's proto codec,
// except that a message with generated vtprotobuf code is unmarshalled by
// that code, about twice as fast as protobuf-go's table-driven decoder,
// which is most of a verdict's protobuf cost (decision 011).
//
// The generated code does not check what protobuf-go checks on the way in,
// so Unmarshal first walks the bytes against the message's descriptor: every
// string field must be UTF-8 and nesting stays within protobuf-go's
// recursion limit, and a message that fails either is refused as
// protobuf-go would refuse it. Marshalling is gRPC's own, which checks its
// output.
//
// It is not a general protobuf codec: it trusts that the generated code and
// the descriptors are of the same .proto files, which buf generate ensures.
package protocodec
