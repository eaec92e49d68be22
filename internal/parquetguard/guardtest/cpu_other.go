//go:build !unix

package guardtest

import "time"

// CPUTime returns 0: the process's CPU time is only read on Unix.
func CPUTime() time.Duration { return 0 }
