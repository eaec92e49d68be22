//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package extsort

import (
	"os"
	"syscall"
)

// spillLocks says whether spill folders are locked, and so whether stale
// ones can be told apart from live ones and removed.
const spillLocks = true

// createLocked creates the lock file name and takes an exclusive lock on it.
func createLocked(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// tryLockExisting opens the existing lock file name (not through a symbolic
// link) and takes its lock without waiting; ok is false if the file is
// missing or the lock is held.
func tryLockExisting(name string) (f *os.File, ok bool) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, false
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

func flock(f *os.File, how int) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
