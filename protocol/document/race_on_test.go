//go:build race

package document

// raceOn shortens the long property runs under the race detector, which
// makes them ten times slower and checks nothing they do not already show
// (the package starts no goroutines).
const raceOn = true
