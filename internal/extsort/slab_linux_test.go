package extsort

import (
	"bytes"
	"math/rand/v2"
	"syscall"
	"testing"
	"unsafe"
)

// resident counts the pages of b the system holds in memory (mincore).
func resident(t *testing.T, b []byte) int {
	t.Helper()
	vec := make([]byte, (len(b)+pageSize-1)/pageSize)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestSorterResidentWithinSize adds blocks of short keys (slots take most
// of the block) and of long ones (keys do) to a mapped block, and checks
// after every key, against what the system holds rather than what the
// sorter counts, that the block's resident pages are within Size(), and
// Size() within the budget (so within it too).
func TestSorterResidentWithinSize(t *testing.T) {
	dir, err := NewSpillDir(t.TempDir(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Remove()
	const budget = 1<<20 - 1000 // no huge page fits, nor whole pages
	s := NewSorter(dir, budget, 4)
	r := rand.New(rand.NewPCG(5, 6))
	for round := range 6 {
		n, size := 40000, 4
		if round%2 == 1 {
			n, size = 3000, 600
		}
		for range n {
			k := bytes.Repeat([]byte{byte('a' + r.IntN(26))}, size)
			if err := s.Add(k); err != nil {
				t.Fatal(err)
			}
			if !s.mem.mapped {
				t.Skip("the block is not mapped")
			}
			if got := resident(t, s.mem.b) * pageSize; got > s.Size() || s.Size() > budget {
				t.Fatalf("round %d: %d bytes resident, the sorter counts %d, budget %d", round, got, s.Size(), budget)
			}
		}
	}
	it, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	it.Close()
}
