//go:build !race

package commit

const raceOn = false
