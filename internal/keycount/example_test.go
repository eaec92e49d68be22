package keycount_test

import (
	"bytes"
	"errors"
	"fmt"
	"log"

	"github.com/lakegc/lakegc/internal/keycount"
)

// slice is a counted stream held in memory.
type slice struct {
	keys   []string
	counts []int64
}

func (s *slice) Next() ([]byte, int64, bool, error) {
	if len(s.keys) == 0 {
		return nil, 0, false, nil
	}
	k, c := s.keys[0], s.counts[0]
	s.keys, s.counts = s.keys[1:], s.counts[1:]
	return []byte(k), c, true, nil
}

func (s *slice) Close() error { return nil }

// A part that left a set takes back its keys (−1), one that came gives its
// own (+1): merged with the counts before, a key shared by both is
// unchanged, and a key no part holds any more drops out.
func Example() {
	format := &keycount.Format{Magic: "example\n", Name: "example", Corrupt: errors.New("corrupt example"),
		Valid: func(count int64, aux uint64) bool { return count > 0 && aux == 0 }}
	before := &slice{[]string{"a", "b", "c"}, []int64{1, 2, 1}}
	gone := &slice{[]string{"a", "b"}, []int64{-1, -1}}
	came := &slice{[]string{"b", "d"}, []int64{1, 1}}
	m := keycount.NewMerge([]keycount.Iter{before, gone, came})
	var buf bytes.Buffer
	enc := keycount.NewEncoder(&buf, format, 4096)
	for {
		k, c, ok, err := m.Next()
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			break
		}
		if err := enc.Add(k, c, 0); err != nil {
			log.Fatal(err)
		}
	}
	if err := enc.Finish(); err != nil {
		log.Fatal(err)
	}
	d, err := keycount.NewDecoder(bytes.NewReader(buf.Bytes()), format, 4096)
	if err != nil {
		log.Fatal(err)
	}
	for {
		k, c, _, ok, err := d.Next()
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			break
		}
		fmt.Println(string(k), c)
	}
	// Output:
	// b 2
	// c 1
	// d 1
}
