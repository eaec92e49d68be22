//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package extsort

// Without mmap, every slab is a heap slice.
func mapBytes(int) ([]byte, bool) { return nil, false }

func unmapBytes([]byte) {}
