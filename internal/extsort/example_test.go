package extsort_test

import (
	"fmt"
	"log"
	"os"

	"github.com/lakegc/lakegc/internal/extsort"
)

// Sort keys in a block far smaller than they are (every few keys spill to a
// run file), then merge the runs: each key once, in order.
func Example() {
	tmp, err := os.MkdirTemp("", "extsort-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	dir, err := extsort.NewSpillDir(tmp, 4096)
	if err != nil {
		log.Fatal(err)
	}
	defer dir.Remove()

	s := extsort.NewSorter(dir, 64, 2) // 64 bytes of keys and slots, 2 runs merged at once
	defer s.Release()
	for _, k := range []string{"data/c", "data/a", "data/b", "data/a", "data/e", "data/d", "data/b"} {
		if err := s.Add([]byte(k)); err != nil {
			log.Fatal(err)
		}
	}
	it, err := s.Finish()
	if err != nil {
		log.Fatal(err)
	}
	defer it.Close()
	for {
		k, ok, err := it.Next()
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			break
		}
		fmt.Println(string(k))
	}
	// Output:
	// data/a
	// data/b
	// data/c
	// data/d
	// data/e
}
