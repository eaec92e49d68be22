package uncommitted

import (
	"fmt"
	"sync/atomic"

	"github.com/lakegc/lakegc/internal/parquetguard"
)

// SetReadAhead sets the read-ahead of ReadRun and Addresses for a
// benchmark, and returns the function that restores it. Not safe while a
// run is read.
func SetReadAhead(n int) (restore func()) {
	old := readAhead
	readAhead = n
	return func() { readAhead = old }
}

// SetReadWindow sets the window of ReadRun and Addresses for a test, and
// returns the function that restores it. Not safe while a run is read.
func SetReadWindow(n int) (restore func()) {
	old := readWindow
	readWindow = n
	return func() { readWindow = old }
}

// fallbacks counts the files Addresses has read, in part or whole,
// through parquet-go (plainFallbackHook, set in the test binary only).
var fallbacks atomic.Int64

func init() { plainFallbackHook = func() { fallbacks.Add(1) } }

// PlainFallbacks is how many files Addresses has read, in part or whole,
// through parquet-go rather than from parquetguard.ReadPlain's pages.
func PlainFallbacks() int64 { return fallbacks.Load() }

// SetPlainPages makes Addresses hand over at most n pages of a file from
// parquetguard.ReadPlain (n > 0), and read the rest through parquet-go, as
// at a page ReadPlain does not hand over; it returns the function that
// restores it. Not safe while a run is read.
func SetPlainPages(n int) (restore func()) {
	old := plainPageHook
	plainPageHook = nil
	if n > 0 {
		plainPageHook = func(page int) error {
			if page > n {
				return fmt.Errorf("%w: stopped after %d pages (a test)", parquetguard.ErrNotPlain, n)
			}
			return nil
		}
	}
	return func() { plainPageHook = old }
}
