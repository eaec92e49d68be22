//go:build !race

package retention

const raceEnabled = false
