//go:build !unix

package retention

// cpuTime is unknown here: benchmarks report 0 CPU time.
func cpuTime() int64 { return 0 }
