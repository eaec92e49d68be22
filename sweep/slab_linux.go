package sweep

import "syscall"

// discardPages returns the pages of b, page-aligned, to the system; they
// read as zero afterwards.
func discardPages(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
