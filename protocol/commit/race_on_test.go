//go:build race

package commit

// raceOn is set when the race detector runs, which changes what sync.Pool
// keeps.
const raceOn = true
