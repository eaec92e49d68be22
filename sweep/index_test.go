package sweep

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/keycount"
)

// listKeep is the join's streams of a listing and kept keys, with no
// committed counts and no keep index.
func listKeep(list, keep extsort.Iter) joinStreams { return joinStreams{list: list, staged: keep} }

type indexEntry struct {
	key   string
	count int64
	aux   uint64
}

// encodeCounts writes entries in format f.
func encodeCounts(t testing.TB, f *keycount.Format, entries []indexEntry) []byte {
	var buf bytes.Buffer
	e := keycount.NewEncoder(&buf, f, 64)
	for _, x := range entries {
		require.NoError(t, e.Add([]byte(x.key), x.count, x.aux))
	}
	require.NoError(t, e.Finish())
	return buf.Bytes()
}

// decodeCounts returns the entries of a counted stream, or the first error.
func decodeCounts(b []byte, f *keycount.Format) ([]indexEntry, error) {
	d, err := keycount.NewDecoder(bytes.NewReader(b), f, 64)
	if err != nil {
		return nil, err
	}
	var out []indexEntry
	for {
		k, c, aux, ok, err := d.Next()
		if err != nil {
			return out, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, indexEntry{string(k), c, aux})
	}
}

func decodeIndex(b []byte) ([]indexEntry, error) { return decodeCounts(b, stagedFormat) }

var indexSeeds = [][]indexEntry{
	nil,
	{{"a", 1, 0}},
	{{"data/ftgiap1umhohp9prs680/dbmums0c4gu8s7cqko9g", 0, idxListed}, {"data/ftgiap1umhohp9prs680/dbmums0c4gu8s7cqko9h", 3, idxListed}, {"data/ftgjvo4imc3v0cs4do30/x", 1 << 40, 0}},
	{{"a", 1, 0}, {"ab", 2, 1}, {"abc", 300, 0}, {"b", 1, 0}, {"日本", 1, 1}, {"😀", 64, 0}},
}

func TestIndexRoundTrip(t *testing.T) {
	for _, entries := range indexSeeds {
		b := encodeCounts(t, stagedFormat, entries)
		got, err := decodeIndex(b)
		require.NoError(t, err)
		require.Equal(t, entries, got)
		// Every cut and every flipped bit is refused.
		for i := range b {
			_, err := decodeIndex(b[:i])
			require.ErrorIs(t, err, ErrInvalidInput, "cut at %d", i)
			c := slices.Clone(b)
			c[i] ^= 0x10
			_, err = decodeIndex(c)
			require.ErrorIs(t, err, ErrInvalidInput, "flip at %d", i)
		}
		_, err = decodeIndex(append(slices.Clone(b), 0))
		require.ErrorIs(t, err, ErrInvalidInput)
	}
}

// TestIndexEncoderRefuses: the encoder writes only what the decoder takes.
func TestIndexEncoderRefuses(t *testing.T) {
	for _, tc := range [][]indexEntry{
		{{"b", 1, 0}, {"a", 1, 0}},
		{{"a", 1, 0}, {"a", 1, 0}},
		{{"ab", 1, 0}, {"a", 1, 0}},
		{{"", 1, 0}},
		{{"a", 0, 0}},
		{{"a", -1, 1}},
		{{"a", 1, 2}},
		{{string(make([]byte, maxRecordKey+1)), 1, 0}},
	} {
		var buf bytes.Buffer
		e := keycount.NewEncoder(&buf, stagedFormat, 64)
		var err error
		for _, x := range tc {
			if err = e.Add([]byte(x.key), x.count, x.aux); err != nil {
				break
			}
		}
		require.ErrorIs(t, err, ErrInvalidInput, "%q", tc)
	}
}

// FuzzKeepIndex: the keep index's decoder (the index is read back from the
// bucket: outside input) never panics nor takes more than its buffer and one
// key, and what it accepts the encoder writes to the same bytes.
func FuzzKeepIndex(f *testing.F) {
	for _, entries := range indexSeeds {
		b := encodeCounts(f, stagedFormat, entries)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(stagedMagic + "\x00\x00\x00"))
	f.Add([]byte(stagedMagic + "\x00\x01a\x02\x00\x00\x00\x01\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeIndex(b)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidInput)
			return
		}
		require.Equal(t, b, encodeCounts(t, stagedFormat, got))
	})
}

// FuzzPartsRecord: as FuzzKeepIndex, for the parts record.
func FuzzPartsRecord(f *testing.F) {
	f.Add(encodeCounts(f, partsFormat, []indexEntry{{"0a1b", 0, 0}, {"0a1c", 1 << 20, 1<<32 - 1}}))
	f.Add([]byte(partsMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeCounts(b, partsFormat)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidInput)
			return
		}
		require.Equal(t, b, encodeCounts(t, partsFormat, got))
	})
}
