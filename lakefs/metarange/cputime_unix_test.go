//go:build unix

package metarange

import "syscall"

// cpuTime returns the CPU time the process has used, user and system, in
// nanoseconds. On a shared machine it is a steadier measure than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
