package keycount

import (
	"fmt"
	"testing"
)

// BenchmarkMergeLongRuns merges the counts of 1 M keys (a keep index) with
// two streams of 1 % as many (the parts that appeared and left since), as
// an optimized run counts its committed keep set: long runs of one stream.
func BenchmarkMergeLongRuns(b *testing.B) {
	const n = 1_000_000
	var big, plus, minus mem
	for i := range n + n/50 {
		k := fmt.Sprintf("data/g%019d/c%019d", i/10_000, i)
		switch {
		case i%100 == 7:
			plus.keys, plus.counts = append(plus.keys, k), append(plus.counts, 1)
		case i%100 == 59:
			big.keys, big.counts = append(big.keys, k), append(big.counts, 2)
			minus.keys, minus.counts = append(minus.keys, k), append(minus.counts, -1)
		default:
			big.keys, big.counts = append(big.keys, k), append(big.counts, 1)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		a, p, m := big, plus, minus
		it := NewMerge([]Iter{&bufMem{mem: a}, &bufMem{mem: p}, &bufMem{mem: m}})
		got := 0
		for {
			_, _, ok, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			got++
		}
		if got != len(big.keys)+len(plus.keys) {
			b.Fatalf("%d keys", got)
		}
	}
	b.ReportMetric(float64(len(big.keys))*float64(b.N)/b.Elapsed().Seconds(), "keys/s")
}
