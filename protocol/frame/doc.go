// Package frame encodes and decodes the six link frames of replication.md
// section 5 with the byte encoding of format.md section 6. Commits inside
// frames stay bytes; protocol/commit reads them.
//
// It does not keep any state about topics: that is protocol/link.
package frame
