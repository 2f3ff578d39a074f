// Package authorityts holds the end-to-end test of the TypeScript authority
// in this directory (src/, run with Node 20): it builds the gateway binary
// and the TypeScript, starts both on 127.0.0.1, drives peers with the Go
// peer package, and checks each behaviour the Go example
// (examples/authority) has, from the outside; and it runs the TypeScript's
// own unit tests (npm test).
//
// It has no Go code besides the test; the authority is the TypeScript. The
// test skips when node is not installed, unless CI is set, where a missing
// node fails it.
package authorityts
