//go:build race

package main

// raceEnabled: the race detector's shadow memory inflates a process's
// resident set, so memory bounds are not checked under it.
const raceEnabled = true
