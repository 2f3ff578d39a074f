// Package apicheck exercises the generated gRPC API (gen/weftgate/v1) from
// outside gen/: it builds messages, round-trips them through the protobuf
// wire format, checks the service's shape, and runs one authority
// conversation over an in-memory connection. It also checks that
// docs/authority-protocol.md names only messages, fields and enum values
// that exist, names every message and enum, and lists the bridge's reason
// codes. It holds only tests, so that a proto change that breaks the Go API
// (or its document) fails `go test` and not just a downstream build.
//
// It does not test the gateway's behaviour behind the API; that belongs to
// bridge/.
package apicheck
