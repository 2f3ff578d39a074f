// Package soak lets the reliability tests run longer than CI runs them.
//
// A test asks for its CI-sized amount (rounds, a duration) and gets it back
// scaled when the run asked for a soak: with the -weftgate.soak flag of a test
// binary that imports this package, or the WEFTGATE_SOAK variable for a whole
// `go test ./...`. The value is a duration ("10m"); tests that count rounds
// repeat until it has passed. It does not make a test faster or skip one.
package soak
