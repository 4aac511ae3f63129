//go:build race

package engine_test

// raceEnabled: the race detector slows the tests that size their work by it.
const raceEnabled = true
