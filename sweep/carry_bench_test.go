package sweep

import (
	"bufio"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/keycount"
	"github.com/lakegc/lakegc/internal/layout"
)

// BenchmarkCarried reads the listed keys of a keep index of 1 M entries in
// 100 slices (all listed, of slices an optimized run does not list) through
// a staged index's decoder, deciding each listed key: per key as runs did
// before (the slice's name decoded, its verdict and the recognizer asked for
// each key), per slice with the recognizer asked for each key (a previous
// state of other rules, or a custom recognizer), and per slice alone (the
// same rules):
//
//	go test -run XXX -bench Carried ./sweep/
func BenchmarkCarried(b *testing.B) {
	const n, nSlices = 1_000_000, 100
	r := rand.New(rand.NewPCG(28, 6))
	var keys []string
	for i := range nSlices {
		at := t0.Add(-time.Duration(100+i) * time.Hour)
		name := randDescendingName(r, at)
		for range n / nSlices {
			keys = append(keys, "data/"+name+"/"+randXID(r, at))
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	name := filepath.Join(b.TempDir(), "index")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := keycount.NewEncoder(w, stagedFormat, 64<<10)
	for i, k := range keys {
		if err := enc.Add([]byte(k), int64(i%2), idxListed); err != nil {
			b.Fatal(err)
		}
	}
	if err := enc.Finish(); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	p := &previous{boundary: t0, young: map[string]struct{}{}}
	rec := layout.Recognizer{Data: layout.DataPrefix}
	for _, v := range []struct {
		name string
		keep func() func([]byte) bool
	}{
		{"per-key", func() func([]byte) bool {
			return func(key []byte) bool {
				name, t, ok := sliceOf(key, "data/")
				return ok && p.skip(name, t) && rec.OKBytes(key)
			}
		}},
		{"per-slice+recognizer", func() func([]byte) bool { return newCarryFilter("data/", p.skip, rec, true) }},
		{"per-slice", func() func([]byte) bool { return newCarryFilter("data/", p.skip, rec, false) }},
	} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				kf, err := keycount.OpenFile(name, stagedFormat, 64<<10)
				if err != nil {
					b.Fatal(err)
				}
				keep := v.keep()
				got := 0
				for {
					k, _, aux, ok, err := kf.Entry()
					if err != nil {
						b.Fatal(err)
					}
					if !ok {
						break
					}
					if aux&idxListed != 0 && keep(k) {
						got++
					}
				}
				kf.Close()
				if got != len(keys) {
					b.Fatalf("%d keys carried, want %d", got, len(keys))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(keys)*b.N), "ns/key")
		})
	}
}
