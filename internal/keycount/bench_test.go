package keycount

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// BenchmarkEncoder encodes 1 M entries of a keep index (keys of lakeFS's
// data layout, 10,000 a slice) to io.Discard, as a run writes its index.
func BenchmarkEncoder(b *testing.B) {
	const n = 1_000_000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "data/g%019d/c%019d", i/10_000, i*7919)
	}
	f := &Format{Magic: "bench\n", Name: "bench", Corrupt: errors.New("corrupt"), Valid: func(c int64, aux uint64) bool { return c >= 0 && aux <= 1 }}
	b.ReportAllocs()
	for b.Loop() {
		e := NewEncoder(io.Discard, f, 64<<10)
		for i, k := range keys {
			if err := e.Add(k, 1, uint64(i&1)); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Finish(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*b.N), "ns/key")
}

// BenchmarkDecoder decodes the index BenchmarkEncoder writes (1 M entries,
// every one checked as it is read), from memory, as an optimized run's join
// reads the previous run's index on its prefetch goroutine.
func BenchmarkDecoder(b *testing.B) {
	const n = 1_000_000
	f := &Format{Magic: "bench\n", Name: "bench", Corrupt: errors.New("corrupt"), Valid: func(c int64, aux uint64) bool { return c >= 0 && aux <= 1 }}
	var enc bytes.Buffer
	e := NewEncoder(&enc, f, 64<<10)
	for i := range n {
		if err := e.Add(fmt.Appendf(nil, "data/g%019d/c%019d", i/10_000, i*7919), 1, uint64(i&1)); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Finish(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		d, err := NewDecoder(bytes.NewReader(enc.Bytes()), f, 64<<10)
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			_, _, _, ok, err := d.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			got++
		}
		if got != n {
			b.Fatalf("decoded %d entries, want %d", got, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*b.N), "ns/key")
}
