package parquetguard

import (
	"encoding/binary"
	"testing"

	"github.com/parquet-go/parquet-go/format"
)

// TestIndexesPaddedRuns: dictionary indexes in bit-packed runs of 256
// values, the last one padded past the page's values (as DuckDB writes
// them: 848 values in four runs, 1,024 decoded), are accepted for a
// BYTE_ARRAY column and an INT32 one; runs holding more than 256 values
// past the page's are refused.
func TestIndexesPaddedRuns(t *testing.T) {
	runs := func(n int) []byte {
		b := []byte{1} // 1-bit indexes
		for range n {
			b = binary.AppendUvarint(b, 32<<1|1) // 32 groups of 8: 256 values
			b = append(b, make([]byte, 32)...)   // index 0, width 1
		}
		return b
	}
	for _, typ := range []format.Type{format.ByteArray, format.Int32} {
		c := &chunk{guard: &guard{lim: Limits{}.withDefaults(), dict: []int32{3, 5}}, col: &leaf{typ: typ}, dictLen: 2}
		for _, v := range []struct {
			n, runs int
			ok      bool
		}{
			{848, 4, true},  // 176 past: DuckDB's last run
			{769, 4, true},  // 255 past
			{768, 4, true},  // 256 past
			{767, 4, false}, // 257 past
			{1024, 4, true}, // none past
			{848, 5, false}, // a whole run past
			{8, 1, true},    // 248 past
			{1, 2, false},   // 511 past
			{0, 0, true},    // no runs
		} {
			err := c.indexes(runs(v.runs), v.n)
			if (err == nil) != v.ok {
				t.Errorf("%v: %d values in %d runs of 256: %v", typ, v.n, v.runs, err)
			}
		}
	}
}
