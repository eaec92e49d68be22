//go:build !race

package sweep

// raceEnabled says the race detector is on.
const raceEnabled = false
