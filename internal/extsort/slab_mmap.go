//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package extsort

import "syscall"

// mapBytes maps n bytes of private anonymous memory; false if the system
// refuses.
func mapBytes(n int) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	return b, err == nil
}

func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
