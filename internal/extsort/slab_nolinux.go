//go:build !linux

package extsort

// discardPages keeps the pages where madvise is not at hand: they stay
// resident, and counted.
func discardPages([]byte) bool { return false }
