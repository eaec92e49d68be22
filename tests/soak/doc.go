// Command soak runs lakegc's fault test for as long as asked: world after
// world of tests/faults — a small versioned store in a fileblob bucket,
// three cycles of lakegc.Collect with Sweep through a faultblob that
// fails, stalls, truncates reads and cuts listings by a seeded PRNG, then
// one cycle without faults — each checked: no live object deleted, every
// candidate of a cycle that succeeded accounted for, every old garbage
// object gone after the cycle without faults.
//
// It is not run in CI. Usage:
//
//	go run ./tests/soak -duration 10m -seed 1
//
// Worlds take the seeds seed, seed+1, ...: a violation names its seed,
// which go test -run CollectWithFaults -faults.seed=N ./tests/faults/
// replays. Every 30 seconds, and at the end, soak prints the worlds and
// cycles run, the objects written and deleted, the cycles that failed with
// an error, the faults injected and the violations. It exits 1 on a
// violation.
package main
