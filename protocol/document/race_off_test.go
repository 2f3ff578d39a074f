//go:build !race

package document

const raceOn = false
