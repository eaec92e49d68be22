//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package extsort

import (
	"errors"
	"os"
)

// spillLocks is false here: without a lock, a live process's spill folder
// cannot be told from a stale one, so none is removed.
const spillLocks = false

var errNoLocks = errors.New("file locks unsupported")

func createLocked(string) (*os.File, error) { return nil, errNoLocks }

func tryLockExisting(string) (*os.File, bool) { return nil, false }
