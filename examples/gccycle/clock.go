package main

import (
	"fmt"
	"sync"
	"time"
)

// simClock is the example's simulated time. Every package the store uses
// reads it (pathprovider, linkaddr, copytrack, uncommitted, sweep), so a
// month of history happens in a second. Safe for concurrent use: the sweep
// reads it from its own goroutines.
type simClock struct {
	mu    sync.Mutex
	start time.Time
	now   time.Time
}

// newSimClock starts the story on the day of start, at midnight UTC.
func newSimClock(start time.Time) *simClock {
	start = start.UTC().Truncate(24 * time.Hour)
	return &simClock{start: start, now: start}
}

// Now returns the simulated time.
func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// set moves the clock to a time of the story, counted from its start; the
// clock never goes back.
func (c *simClock) set(day, hour, minute int) {
	at := c.start.Add(time.Duration(day)*24*time.Hour + time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute)
	c.mu.Lock()
	defer c.mu.Unlock()
	if at.After(c.now) {
		c.now = at
	}
}

// advance moves the clock forward by d.
func (c *simClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// label prints t as a time of the story: "day 12 09:30".
func (c *simClock) label(t time.Time) string {
	d := t.Sub(c.start)
	day := int(d / (24 * time.Hour))
	rest := d - time.Duration(day)*24*time.Hour
	return fmt.Sprintf("day %2d %02d:%02d", day, int(rest/time.Hour), int(rest%time.Hour/time.Minute))
}
