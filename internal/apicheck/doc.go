// Package apicheck exercises the generated gRPC API (gen/weftgate/v1) from
// outside gen/: it builds messages, round-trips them through the protobuf
// wire format, checks the service's shape, and runs one authority
// conversation over an in-memory connection. It holds only tests, so that a
// proto change that breaks the Go API fails `go test` and not just a
// downstream build.
//
// It does not test the gateway's behaviour behind the API; that belongs to
// bridge/.
package apicheck
