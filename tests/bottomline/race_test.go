//go:build race

package main

// raceEnabled: the race detector's shadow memory makes the resident set
// say nothing about the budget.
const raceEnabled = true
