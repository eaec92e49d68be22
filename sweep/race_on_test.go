//go:build race

package sweep

// raceEnabled says the race detector is on: it slows Mark about ten times
// and adds its own memory, so TestMarkPeakRSS runs at a quarter of its size.
const raceEnabled = true
