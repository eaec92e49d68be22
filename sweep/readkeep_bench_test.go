package sweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base32"
	"encoding/binary"
	"iter"
	"sync"
	"testing"

	"github.com/klauspost/compress/s2"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
)

// benchStagedKeys is how many staged addresses BenchmarkReadKeep reads: a
// fifth of the 20 M bottom line's 5 M, with a block a fifth of the mark's
// 80 MiB, so that the block fills as often (three spills, the rest left
// in the block).
const (
	benchStagedKeys  = 1_000_000
	benchStagedBlock = 16 << 20
)

var benchStaged struct {
	once sync.Once
	s2   []byte // the addresses, a line each, S2-compressed
}

// stagedAddresses returns the bench's addresses, S2-compressed: shaped as the
// bottom line's staged set (data/<slice xid>/<object xid>, 10 000 objects
// a slice, one branch's rows after another's over 1 000 branches, so that
// the sorter sees them out of order).
func stagedAddresses() []byte {
	benchStaged.once.Do(func() {
		const branches, perSlice = 1000, 10000
		enc := base32.HexEncoding.WithPadding(base32.NoPadding)
		var raw bytes.Buffer
		var id [12]byte
		for br := range branches {
			for k := br; k < benchStagedKeys; k += branches {
				g := k*4 + 1
				binary.BigEndian.PutUint32(id[:4], uint32(4e9)-uint32(g/perSlice)*3600)
				clear(id[4:]) // the slice's: a time
				raw.WriteString("data/")
				raw.WriteString(enc.EncodeToString(id[:]))
				raw.WriteByte('/')
				// The object's: a time, three bytes of its slice, a counter.
				binary.BigEndian.PutUint32(id[:4], 1.7e9)
				binary.BigEndian.PutUint64(id[4:12], uint64(g/perSlice*2654435761)<<40|uint64(g%perSlice))
				raw.WriteString(enc.EncodeToString(id[:]))
				raw.WriteByte('\n')
			}
		}
		var packed bytes.Buffer
		w := s2.NewWriter(&packed, s2.WriterConcurrency(1))
		if _, err := w.Write(raw.Bytes()); err != nil {
			panic(err)
		}
		if err := w.Close(); err != nil {
			panic(err)
		}
		benchStaged.s2 = packed.Bytes()
	})
	return benchStaged.s2
}

// decoded yields the addresses of packed as fresh strings, uncompressing
// them as it goes: a producer that spends about 60 ns of CPU a key, near
// the 43 ns uncommitted.Addresses spends on an exported address
// (BenchmarkStagedKeep/read: ZSTD pages, a string a row).
func decoded(packed []byte) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		d := s2.NewReader(bytes.NewReader(packed))
		sc := bufio.NewScanner(d)
		for sc.Scan() {
			if !yield(string(sc.Bytes()), nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield("", err)
		}
	}
}

// BenchmarkReadKeep is the keep phase's read of the staged set: 1 M
// addresses of the bottom line's shape uncompressed from S2 (produce:
// alone) and added by readKeep to a sorter whose 16 MiB block holds about
// a quarter of them (readKeep), as the mark does with Inputs.Uncommitted.
// cpu-ns/key is the process's CPU a key, ns/key the wall a key.
func BenchmarkReadKeep(b *testing.B) {
	packed := stagedAddresses()
	ctx := context.Background()
	report := func(b *testing.B, cpu0 int64) {
		b.ReportMetric(float64(int64(guardtest.CPUTime())-cpu0)/float64(b.N)/benchStagedKeys, "cpu-ns/key")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchStagedKeys, "ns/key")
	}
	b.Run("produce", func(b *testing.B) {
		cpu := int64(guardtest.CPUTime())
		for b.Loop() {
			n := 0
			for _, err := range decoded(packed) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != benchStagedKeys {
				b.Fatalf("%d keys", n)
			}
		}
		report(b, cpu)
	})
	b.Run("readKeep", func(b *testing.B) {
		cpu := int64(guardtest.CPUTime())
		for b.Loop() {
			dir, err := extsort.NewSpillDir(b.TempDir(), 64<<10)
			if err != nil {
				b.Fatal(err)
			}
			s := extsort.NewSorter(dir, benchStagedBlock, 64)
			if err := readKeep(ctx, decoded(packed), s); err != nil {
				b.Fatal(err)
			}
			s.Release()
			if err := dir.Remove(); err != nil {
				b.Fatal(err)
			}
		}
		report(b, cpu)
	})
}
