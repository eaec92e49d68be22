//go:build !unix

package metarange

// cpuTime is unknown here: benchmarks report no CPU figures.
func cpuTime() int64 { return 0 }
