package extsort

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var errTestCorrupt = errors.New("corrupt test stream")

// strictFormat is a strict stream under a magic and a checksum, as package
// sweep's live record is.
var strictFormat = KeyFormat{Magic: "test\n", Strict: true, Checksum: true, MaxKey: 64, Corrupt: errTestCorrupt}

func decodeKeys(f KeyFormat, b []byte, bufSize int) ([]string, error) {
	d, err := NewKeyDecoder(bytes.NewReader(b), f, bufSize)
	if err != nil {
		return nil, err
	}
	var keys []string
	for {
		k, ok, err := d.Next()
		if err != nil || !ok {
			if err == nil && d.Count() != int64(len(keys)) {
				panic("Count disagrees")
			}
			return keys, err
		}
		keys = append(keys, string(k))
	}
}

// TestStrictKeyStream round-trips random ascending keys through a strict
// stream read through buffers small and large (keys across the buffer's
// end take the slow path): the same keys; every cut and every flipped bit
// of the stream is refused with an error wrapping Corrupt; a key out of
// order, repeated, empty or too long is refused by the encoder.
func TestStrictKeyStream(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 9))
		set := map[string]bool{}
		for range r.IntN(60) {
			k := bytes.Repeat([]byte{'k'}, r.IntN(20))
			for range 1 + r.IntN(8) {
				k = append(k, []byte{0, 'a', 'b', 255}[r.IntN(4)])
			}
			set[string(k)] = true
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range set {
				if !yield(k) {
					return
				}
			}
		})
		var buf bytes.Buffer
		e, err := NewKeyEncoder(&buf, strictFormat, 64)
		require.NoError(t, err)
		for _, k := range keys {
			require.NoError(t, e.Add([]byte(k)))
		}
		require.NoError(t, e.Finish())
		b := buf.Bytes()
		for _, size := range []int{16, 4096} {
			got, err := decodeKeys(strictFormat, b, size)
			require.NoError(t, err, "seed %d", seed)
			require.Equal(t, len(keys), len(got), "seed %d", seed)
			for i := range keys {
				require.Equal(t, keys[i], got[i])
			}
		}
		for n := range len(b) {
			_, err := decodeKeys(strictFormat, b[:n], 4096)
			require.ErrorIs(t, err, errTestCorrupt, "seed %d cut at %d", seed, n)
		}
		for i := range len(b) * 8 {
			c := bytes.Clone(b)
			c[i/8] ^= 1 << (i % 8)
			_, err := decodeKeys(strictFormat, c, 4096)
			require.ErrorIs(t, err, errTestCorrupt, "seed %d bit %d", seed, i)
		}
	}
	e, err := NewKeyEncoder(&bytes.Buffer{}, strictFormat, 64)
	require.NoError(t, err)
	require.NoError(t, e.Add([]byte("b")))
	for _, k := range []string{"a", "b", "", strings.Repeat("z", 65)} {
		require.ErrorIs(t, e.Add([]byte(k)), errTestCorrupt, "%q", k)
	}
}
