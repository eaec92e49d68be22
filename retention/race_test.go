//go:build race

package retention

// raceEnabled lets the slowest property test run fewer cases under the race
// detector, which makes it about ten times slower.
const raceEnabled = true
