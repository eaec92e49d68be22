package sweep

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

func encodeLive(t testing.TB, keys []string) []byte {
	var buf bytes.Buffer
	e, err := newLiveEncoder(&buf)
	require.NoError(t, err)
	for _, k := range keys {
		require.NoError(t, e.Add([]byte(k)))
	}
	require.NoError(t, e.Finish())
	return buf.Bytes()
}

// decodeLive returns the keys of a live record, or the first error.
func decodeLive(b []byte) ([]string, error) {
	d, err := newLiveDecoder(bytes.NewReader(b), 512)
	if err != nil {
		return nil, err
	}
	var keys []string
	for {
		k, ok, err := d.next()
		if err != nil {
			return keys, err
		}
		if !ok {
			return keys, nil
		}
		keys = append(keys, string(k))
	}
}

var liveSeeds = [][]string{
	nil,
	{"a"},
	{"data/ftgiap1umhohp9prs680/dbmums0c4gu8s7cqko9g", "data/ftgiap1umhohp9prs680/dbmums0c4gu8s7cqko9h", "data/ftgjvo4imc3v0cs4do30/x"},
	{"a", "ab", "abc", "b", "日本", "😀"},
}

func TestLiveRecordRoundTrip(t *testing.T) {
	for _, keys := range liveSeeds {
		b := encodeLive(t, keys)
		got, err := decodeLive(b)
		require.NoError(t, err)
		require.Equal(t, len(keys), len(got))
		for i := range keys {
			require.Equal(t, keys[i], got[i])
		}
		// Every cut and every flipped bit is refused.
		for n := range len(b) {
			_, err := decodeLive(b[:n])
			require.ErrorIs(t, err, ErrInvalidInput, "cut at %d", n)
		}
		for i := range len(b) * 8 {
			c := bytes.Clone(b)
			c[i/8] ^= 1 << (i % 8)
			_, err := decodeLive(c)
			require.Error(t, err, "bit %d", i)
		}
		_, err = decodeLive(append(bytes.Clone(b), 0))
		require.ErrorIs(t, err, ErrInvalidInput)
	}
	var buf bytes.Buffer
	e, err := newLiveEncoder(&buf)
	require.NoError(t, err)
	require.NoError(t, e.Add([]byte("b")))
	require.ErrorIs(t, e.Add([]byte("a")), ErrInvalidInput)
	require.ErrorIs(t, e.Add([]byte("b")), ErrInvalidInput)
	require.ErrorIs(t, e.Add(nil), ErrInvalidInput)
}

// TestLiveRecordBounds: a record that claims a huge key is refused before
// anything of that size is allocated.
func TestLiveRecordBounds(t *testing.T) {
	b := []byte(liveMagic)
	b = append(b, 0, 0xff, 0xff, 0xff, 0xff, 0x0f) // a suffix of 4 GiB
	_, err := decodeLive(b)
	require.ErrorIs(t, err, ErrInvalidInput)
	b = append([]byte(liveMagic), 5, 1, 'x') // shares 5 bytes of nothing
	_, err = decodeLive(b)
	require.ErrorIs(t, err, ErrInvalidInput)
	b = append([]byte(liveMagic), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)
	_, err = decodeLive(b)
	require.ErrorIs(t, err, ErrInvalidInput)
}

// TestLiveRecordCanonical: a record the encoder would write otherwise is
// refused even with a checksum that fits: a shared prefix shorter than the
// keys share, or a varint of more bytes than its value needs.
func TestLiveRecordCanonical(t *testing.T) {
	// The encoder's: entries 0 2 "ab" and 1 1 "c", then the end 0 0 2.
	good := encodeLive(t, []string{"ab", "ac"})
	require.Equal(t, append([]byte(liveMagic), 0, 2, 'a', 'b', 1, 1, 'c', 0, 0, 2), good[:len(good)-4])
	for name, body := range map[string][]byte{
		"short shared":       {0, 2, 'a', 'b', 0, 2, 'a', 'c', 0, 0, 2},
		"long suffix length": {0, 0x82, 0, 'a', 'b', 1, 1, 'c', 0, 0, 2},
		"long shared":        {0, 2, 'a', 'b', 0x81, 0, 1, 'c', 0, 0, 2},
		"long count":         {0, 2, 'a', 'b', 1, 1, 'c', 0, 0, 0x82, 0},
		"long end":           {0, 2, 'a', 'b', 1, 1, 'c', 0x80, 0, 0, 2},
	} {
		t.Run(name, func(t *testing.T) {
			b := withLiveChecksum(append(append([]byte(liveMagic), body...), 0, 0, 0, 0))
			keys, err := decodeLive(b)
			require.ErrorIs(t, err, ErrInvalidInput, "read %q", keys)
		})
	}
	keys, err := decodeLive(good)
	require.NoError(t, err)
	require.Equal(t, []string{"ab", "ac"}, keys)
}

// FuzzLiveRecord: the decoder never panics or allocates beyond one key, and
// what it accepts is exactly what the encoder writes for those keys.
func FuzzLiveRecord(f *testing.F) {
	for _, keys := range liveSeeds {
		b := encodeLive(f, keys)
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte(liveMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		// b as it is, and b with a checksum that fits its body: without
		// the second, a mutated body would almost never get past the
		// checksum, and what the decoder accepts would go untested.
		for _, b := range [][]byte{b, withLiveChecksum(b)} {
			keys, err := decodeLive(b)
			if err != nil {
				if !errors.Is(err, ErrInvalidInput) {
					t.Fatalf("error %v does not wrap ErrInvalidInput", err)
				}
				continue
			}
			if again := encodeLive(t, keys); !bytes.Equal(again, b) {
				t.Fatalf("accepted %x, a record the encoder writes as %x", b, again)
			}
		}
	})
}

// withLiveChecksum returns b with its last 4 bytes replaced by the checksum
// of the bytes before them.
func withLiveChecksum(b []byte) []byte {
	if len(b) < 4 {
		return b
	}
	body := b[:len(b)-4]
	return binary.BigEndian.AppendUint32(bytes.Clone(body), crc32.Checksum(body, castagnoli))
}

func FuzzRunState(f *testing.F) {
	f.Add([]byte(`{"version":1,"storage_prefix":"_lakefs","data_prefix":"data","min_age_seconds":3600,"slice_margin_seconds":7200,"runs_since_clean":0,"live_keys":3,"young_slices":["ftgiap1umhohp9prs680"]}`))
	f.Add([]byte(`{"version":1,"storage_prefix":"_lakefs","data_prefix":"data","live_keys":0,"include":["data/imports/","top-"],"custom_recognizer":true}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":2,"storage_prefix":"_lakefs","data_prefix":"data","live_keys":3,"index_keys":5,"keep_kind":"parts","parts":2}`))
	f.Add([]byte(`{"version":2,"live_keys":3,"index_keys":5,"keep_kind":"set"}`))
	f.Add([]byte(`{"version":2,"live_keys":3,"index_keys":5,"keep_kind":"multiset"}`))
	f.Add([]byte(`{"version":3}`))
	f.Add([]byte(`{"version":1,"young_slices":["x"]}`))
	// As the first version wrote it, with what the summary says too.
	f.Add([]byte(`{"version":1,"run_id":"r","kind":"clean","storage_prefix":"_lakefs","data_prefix":"data","min_age_seconds":3600,"slice_margin_seconds":7200,"cutoff_time":"2026-11-30T12:00:00Z","newest_slice":"ftgiap1umhohp9prs680","runs_since_clean":0,"live_keys":3,"young_slices":["ftgiap1umhohp9prs680"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseState(b)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v does not wrap ErrInvalidInput", err)
			}
			return
		}
		if s.Version != stateVersion && s.Version != 1 || len(s.YoungSlices) > maxYoungSl || s.LiveKeys < 0 {
			t.Fatalf("accepted %+v", s)
		}
	})
}

// TestRecordsHidden: the records of a run are beside lakeFS's report, where
// Candidates and lakeFS's reader of deleted/ never look, and a failed run
// with the same ID leaves none.
func TestRecordsHidden(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	old := t0.Add(-100 * time.Hour)
	var keys []string
	for i := range 20 {
		k := fmt.Sprintf("data/%s/%s", descendingName(old.Add(time.Duration(i%4)*time.Hour)), objID(i))
		keys = append(keys, k)
		require.NoError(t, b.WriteAll(ctx, k, []byte("x"), nil))
	}
	d := &testDriver{modTime: func(string) time.Time { return old }}
	tb := newTestBucket(b, d)
	sum, err := Mark(ctx, tb, "run1", Inputs{Uncommitted: seqOf(keys[:5]), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	require.Equal(t, int64(15), sum.NumDeletedObjects)
	require.Equal(t, slices.Sorted(slices.Values(keys[5:])), collect(t, Candidates(ctx, tb, DefaultStoragePrefix, "run1")))
	dir := reportDir(DefaultStoragePrefix, "run1")
	for _, name := range []string{stateName, indexName} {
		ok, err := b.Exists(ctx, dir+name)
		require.NoError(t, err)
		require.True(t, ok, name)
		require.True(t, strings.HasPrefix(name, "_"), "Hadoop's readers skip names starting with '_'")
		require.False(t, strings.HasPrefix(name, "deleted/"))
	}
	parts, err := listParts(ctx, b, dir)
	require.NoError(t, err)
	for _, p := range parts {
		require.NotContains(t, p, recordDir)
	}
	// A failed run of the same ID removes the records.
	d.listErr = func(prefix string) error {
		if strings.HasPrefix(prefix, "data/") {
			return codeErr{gcerrors.PermissionDenied} // permanent: not retried
		}
		return nil
	}
	b.Delete(ctx, dir+"summary.json")
	_, err = Mark(ctx, tb, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock), WithTempDir(t.TempDir()))
	require.Error(t, err)
	for _, name := range []string{stateName, indexName} {
		ok, err := b.Exists(ctx, dir+name)
		require.NoError(t, err)
		require.False(t, ok, name)
	}
}

// liveV1Keys are the keys of testdata/live-v1.bin, a live record the
// encoder wrote before it moved into internal/extsort's key codec.
func liveV1Keys() []string {
	keys := []string{"a", "ab", "abc", "b", "data/日本/x"}
	for i := range 3000 {
		keys = append(keys, fmt.Sprintf("zdata/slice-%03d/object-%08d", i/100, i*7))
	}
	return append(keys, "😀")
}

// TestLiveRecordWrittenBefore: a record an earlier version wrote (the next
// optimized run reads it) decodes to its keys, and the encoder writes those
// keys to the same bytes.
func TestLiveRecordWrittenBefore(t *testing.T) {
	b, err := os.ReadFile("testdata/live-v1.bin")
	require.NoError(t, err)
	keys, err := decodeLive(b)
	require.NoError(t, err)
	require.Equal(t, liveV1Keys(), keys)
	require.Equal(t, b, encodeLive(t, keys))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
