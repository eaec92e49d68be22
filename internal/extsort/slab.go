package extsort

// This file holds the memory that stores keys. A slab is one region, taken
// once per block and reused across its spills rather than grown by
// reallocation, so that a key costs no allocation of its own. Where the
// system allows (slab_mmap.go), a slab is mapped outside the Go heap: its
// pages count only once touched, are returned when the slab is freed, and
// the garbage collector, which lets the heap grow to about twice what is
// live, neither scans nor doubles them. Elsewhere a slab is a heap slice.

// minMapped is the smallest slab worth a mapping of its own; smaller ones
// are heap slices.
const minMapped = 64 << 10

// slab is a region of memory that holds no Go pointers.
type slab struct {
	b      []byte
	mapped bool
}

// newSlab returns a slab of n bytes, zeroed.
func newSlab(n int) *slab {
	if n >= minMapped {
		if b, ok := mapBytes(n); ok {
			return &slab{b: b, mapped: true}
		}
	}
	return &slab{b: make([]byte, n)}
}

// free returns the slab's memory; the slab must not be used again.
func (s *slab) free() {
	if s == nil || s.b == nil {
		return
	}
	if s.mapped {
		unmapBytes(s.b)
	}
	s.b = nil
}

// discard gives the whole pages of b[off:off+n] back to the system where it
// allows (Linux), and reports whether it did; their content is undefined
// afterwards.
func (s *slab) discard(off, n int) bool {
	if !s.mapped {
		return false
	}
	lo := (off + pageSize - 1) &^ (pageSize - 1)
	hi := (off + n) &^ (pageSize - 1)
	return hi <= lo || discardPages(s.b[lo:hi])
}
