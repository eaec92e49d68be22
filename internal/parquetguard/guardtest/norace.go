//go:build !race

package guardtest

// Race is whether the race detector is on: it makes reading a million
// rows take minutes.
const Race = false
