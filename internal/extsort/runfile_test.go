package extsort

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunFileRoundTrip writes random keys, sorted or not, to run files and
// reads them back: the same keys, and the writer's order flag says whether
// they strictly ascended.
func TestRunFileRoundTrip(t *testing.T) {
	dir, err := NewSpillDir(t.TempDir(), 512)
	require.NoError(t, err)
	defer dir.Remove()
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 5))
		var keys [][]byte
		for range r.IntN(500) {
			k := bytes.Repeat([]byte{'k'}, r.IntN(30))
			for range r.IntN(12) {
				k = append(k, []byte{0, 'a', 'b', 255}[r.IntN(4)])
			}
			keys = append(keys, k)
		}
		if r.IntN(2) == 0 {
			slices.SortFunc(keys, bytes.Compare)
		}
		rw, err := dir.Create()
		require.NoError(t, err)
		ordered := true
		for i, k := range keys {
			require.NoError(t, rw.Add(k))
			if i > 0 && bytes.Compare(k, keys[i-1]) <= 0 {
				ordered = false
			}
		}
		require.Equal(t, ordered, rw.Ordered(), "seed %d", seed)
		name, err := rw.Finish()
		require.NoError(t, err)
		fr, err := OpenRun(name, 512)
		require.NoError(t, err)
		var got [][]byte
		for {
			k, ok, err := fr.Next()
			require.NoError(t, err)
			if !ok {
				break
			}
			got = append(got, bytes.Clone(k))
		}
		require.NoError(t, fr.Close())
		require.Equal(t, len(keys), len(got), "seed %d", seed)
		for i := range keys {
			require.Equal(t, string(keys[i]), string(got[i]), "seed %d key %d", seed, i)
		}
	}
}

// FuzzRunFile reads arbitrary bytes as a run file: an error or keys, never
// a panic or a key beyond maxKeyLen.
func FuzzRunFile(f *testing.F) {
	f.Add([]byte{1, 3, 'a', 'b', 'c', 3, 1, 'd', 0, 2}) // "abc", "abd", the end
	f.Add([]byte{6, 1, 'x', 0, 1})                      // shares more than the key before it
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f, 'a'}) // longer than any key
	f.Add([]byte{1, 4, 'a'})                            // truncated
	f.Add([]byte{1, 1, 'a', 0, 2})                      // the end miscounts
	f.Add([]byte{0, 0, 0})                              // bytes after the end
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Read through a small buffer, where keys cross its end and take
		// the slow path, and a large one, where they come from the
		// buffer: the same keys, and an error in both or in neither.
		var runs [2][]string
		var errs [2]error
		for i, size := range []int{16, 4096} {
			name := filepath.Join(t.TempDir(), "run")
			require.NoError(t, os.WriteFile(name, data, 0o600))
			fr, err := OpenRun(name, size)
			require.NoError(t, err)
			for range len(data) + 1 {
				k, ok, err := fr.Next()
				if err != nil || !ok {
					errs[i] = err
					break
				}
				require.LessOrEqual(t, len(k), maxKeyLen)
				runs[i] = append(runs[i], string(k))
			}
			require.NoError(t, fr.Close())
		}
		require.Equal(t, runs[0], runs[1])
		require.Equal(t, errs[0] != nil, errs[1] != nil, "errors %v and %v", errs[0], errs[1])
	})
}

// TestRunFileTruncated cuts a run file at every length short of its own:
// reading it fails rather than yield a shorter run (a lost kept key would
// mark a live object).
func TestRunFileTruncated(t *testing.T) {
	dir, err := NewSpillDir(t.TempDir(), 512)
	require.NoError(t, err)
	defer dir.Remove()
	rw, err := dir.Create()
	require.NoError(t, err)
	for _, k := range []string{"a", "ab", "abc", "b", "data/x/1", "data/x/2"} {
		require.NoError(t, rw.Add([]byte(k)))
	}
	name, err := rw.Finish()
	require.NoError(t, err)
	whole, err := os.ReadFile(name)
	require.NoError(t, err)
	require.NoError(t, os.Remove(name))
	for cut := range len(whole) {
		cutName := filepath.Join(t.TempDir(), "run")
		require.NoError(t, os.WriteFile(cutName, whole[:cut], 0o600))
		fr, err := OpenRun(cutName, 16)
		require.NoError(t, err)
		var rerr error
		for {
			_, ok, err := fr.Next()
			if err != nil || !ok {
				rerr = err
				break
			}
		}
		require.NoError(t, fr.Close())
		require.Error(t, rerr, "a run cut to %d of its %d bytes reads as a valid run", cut, len(whole))
	}
}
