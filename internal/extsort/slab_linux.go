package extsort

import "syscall"

// discardPages returns the pages of b, page-aligned, to the system, and
// reports whether it did; they read as zero afterwards.
func discardPages(b []byte) bool { return syscall.Madvise(b, syscall.MADV_DONTNEED) == nil }
