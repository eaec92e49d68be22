//go:build race

package uncommitted_test

// raceEnabled says the race detector is on: the tests that read many files
// or fault many reads run fewer of them, to keep CI's race run short; the
// plain run runs them all.
const raceEnabled = true
