// Package pbconv converts between the aweft model (protocol/commit) and its
// typed view in the gRPC API (gen/weftgate/v1), for both the bridge and the
// Go SDK. Reading from the API is strict: anything the aweft encoding could
// not carry is refused with the decode-stage reason it would get there. The
// proto enum numbers are the API's own (0 is unspecified), so every enum is
// mapped by name, never by number.
//
// It does not encode or decode commit bytes (protocol/commit does).
package pbconv
