//go:build unix

package guardtest

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time the process has used, user and system: a
// measure of work that, unlike wall time, other processes on the machine
// barely change.
func CPUTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
