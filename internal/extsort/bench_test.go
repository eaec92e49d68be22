package extsort

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/rs/xid"
)

// benchKeys returns n keys of lakeFS's data layout, "data/<slice>/<id>",
// in random order: 20-character slice names shared by runs of keys, and
// 20-character ids, as a listing and a keep set hold them.
func benchKeys(n int) [][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "data/g%019d/c%019d", i/10_000, r.Uint64()%1e19)
	}
	r.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

// drain reads it to its end, closes it, and returns how many keys it held.
func drain(b *testing.B, it Iter) int {
	n := 0
	for {
		_, ok, err := it.Next()
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			break
		}
		n++
	}
	if err := it.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkSorter sorts 1 M keys in random order through a block of a
// given size: in memory, and with spills (about 50 bytes a key with its
// slot, so 4 MiB holds some 80,000 keys, and the merge reads a dozen runs).
func BenchmarkSorter(b *testing.B) {
	const n = 1_000_000
	keys := benchKeys(n)
	for _, budget := range []int{128 << 20, 4 << 20} {
		b.Run(fmt.Sprintf("keys=%d/budget=%dMiB", n, budget>>20), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				dir, err := NewSpillDir(b.TempDir(), 64<<10)
				if err != nil {
					b.Fatal(err)
				}
				s := NewSorter(dir, budget, 64)
				for _, k := range keys {
					if err := s.Add(k); err != nil {
						b.Fatal(err)
					}
				}
				it, err := s.Finish()
				if err != nil {
					b.Fatal(err)
				}
				if got := drain(b, it); got != n {
					b.Fatalf("%d keys, want %d", got, n)
				}
				s.Release()
				dir.Remove()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

// BenchmarkMergeRunFiles writes 16 sorted run files of 62,500 keys each and
// merges them through a prefetch, as the join reads the keep set.
func BenchmarkMergeRunFiles(b *testing.B) {
	const runs, per = 16, 62_500
	keys := benchKeys(runs * per)
	dir, err := NewSpillDir(b.TempDir(), 64<<10)
	if err != nil {
		b.Fatal(err)
	}
	defer dir.Remove()
	// Each run is sorted once, in a sorter of its own, and its keys kept.
	sorted := make([][][]byte, runs)
	for i := range sorted {
		s := NewSorter(dir, 64<<20, 2)
		for _, k := range keys[i*per : (i+1)*per] {
			if err := s.Add(k); err != nil {
				b.Fatal(err)
			}
		}
		it, err := s.Finish()
		if err != nil {
			b.Fatal(err)
		}
		for {
			k, ok, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			sorted[i] = append(sorted[i], append([]byte(nil), k...))
		}
		it.Close()
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		iters := make([]Iter, runs)
		for i, ks := range sorted {
			rw, err := dir.Create()
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range ks {
				if err := rw.Add(k); err != nil {
					b.Fatal(err)
				}
			}
			name, err := rw.Finish()
			if err != nil {
				b.Fatal(err)
			}
			if iters[i], err = OpenRun(name, dir.IOBuf()); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if got := drain(b, Strict(NewPrefetch(NewMerge(iters)), "merge")); got != runs*per {
			b.Fatalf("%d keys, want %d", got, runs*per)
		}
	}
	b.ReportMetric(float64(runs*per)*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// sliceIter yields keys from a slice.
type sliceIter struct{ keys [][]byte }

func (s *sliceIter) Next() ([]byte, bool, error) {
	if len(s.keys) == 0 {
		return nil, false, nil
	}
	k := s.keys[0]
	s.keys = s.keys[1:]
	return k, true, nil
}

func (s *sliceIter) Close() error { return nil }

// BenchmarkMergeLongRuns merges 1 M sorted keys with two streams of 1 %
// as many, as an optimized run merges the carried keys of the slices it
// does not list with the listing (the merge of the carried keys itself
// one of the streams): long runs of one stream.
func BenchmarkMergeLongRuns(b *testing.B) {
	const n = 1_000_000
	keys := benchKeys(n + n/50)
	slices.SortFunc(keys, bytes.Compare)
	var big, small1, small2 [][]byte
	for i, k := range keys {
		switch {
		case i%100 == 7:
			small1 = append(small1, k)
		case i%100 == 59:
			small2 = append(small2, k)
		default:
			big = append(big, k)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		carried := NewMerge([]Iter{&sliceIter{big}})
		m := NewMerge([]Iter{NewMerge([]Iter{&sliceIter{small1}, &sliceIter{small2}}), carried})
		if got := drain(b, m); got != len(keys) {
			b.Fatalf("%d keys, want %d", got, len(keys))
		}
	}
	b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}

// stagedKeys returns n addresses shaped as the bottom line's staged set
// (tests/bottomline): slices of 10 000 objects, data/<xid of the slice>/
// <xid of the object>, one object in 4 staged, staged object k on branch
// k mod branches, in the order an export lists them (branch by branch).
func stagedKeys(n, branches int) [][]byte {
	const perSlice = 10000
	keys := make([][]byte, 0, n)
	for b := range branches {
		for k := b; k < n; k += branches {
			g := k*4 + 1
			slice := g / perSlice
			var sid, name xid.ID
			binary.BigEndian.PutUint32(sid[0:4], uint32(4e9)-uint32(slice)*3600)
			prefix := append(append([]byte("data/"), sid.String()...), '/')
			h := fnv.New32a()
			h.Write(prefix)
			sum := h.Sum32()
			binary.BigEndian.PutUint32(name[0:4], 1.7e9)
			name[4], name[5], name[6] = byte(sum>>16), byte(sum>>8), byte(sum)
			v := uint64(g % perSlice)
			for j := 11; j >= 7; j-- {
				name[j] = byte(v)
				v >>= 8
			}
			keys = append(keys, append(prefix, name.String()...))
		}
	}
	return keys
}

// BenchmarkSortBlock sorts one block of the keep phase's staged set: the
// 1.3 M addresses (stagedKeys) an 80 MiB block holds (a 256 MiB budget's),
// in the order an export lists them, and random keys (benchKeys).
// cpu-ns/key is the process's CPU time a key (the sort runs on every
// processor), which a busy machine changes less than wall time.
func BenchmarkSortBlock(b *testing.B) {
	const n = 1_300_000
	for _, c := range []struct {
		name string
		keys [][]byte
	}{{"staged", stagedKeys(n, 1000)}, {"random", benchKeys(n)}} {
		b.Run(c.name, func(b *testing.B) {
			var arena []byte
			slots := make([]slot, 0, len(c.keys))
			for _, k := range c.keys {
				slots = append(slots, slot{off: uint32(len(arena)), n: uint32(len(k))})
				arena = append(arena, k...)
			}
			work := make([]slot, len(slots))
			cpu := guardtest.CPUTime()
			for b.Loop() {
				copy(work, slots)
				sortSlots(work, arena, 0)
			}
			b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N)/n, "cpu-ns/key")
		})
	}
}

// BenchmarkSorterStaged runs 2.6 M addresses of the staged set (stagedKeys,
// in an export's order) through a Sorter with the block of the keep phase
// under a 256 MiB budget (80 MiB, which holds about half of them: a spill
// and the merge of a run with the block), as the keep phase does after
// reading them.
func BenchmarkSorterStaged(b *testing.B) {
	const n = 2_600_000
	keys := stagedKeys(n, 1000)
	b.ReportAllocs()
	cpu := guardtest.CPUTime()
	for b.Loop() {
		dir, err := NewSpillDir(b.TempDir(), 64<<10)
		if err != nil {
			b.Fatal(err)
		}
		s := NewSorter(dir, 80<<20, 64)
		for _, k := range keys {
			if err := s.Add(k); err != nil {
				b.Fatal(err)
			}
		}
		it, err := s.Finish()
		if err != nil {
			b.Fatal(err)
		}
		if got := drain(b, it); got != n {
			b.Fatalf("%d keys, want %d", got, n)
		}
		s.Release()
		dir.Remove()
	}
	b.ReportMetric(float64(guardtest.CPUTime()-cpu)/float64(b.N)/n, "cpu-ns/key")
}
