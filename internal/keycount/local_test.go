package keycount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakegc/lakegc/internal/extsort"
)

// TestCopyFile: a whole stream is copied byte for byte by both copies, with
// its number of entries; a stream cut short or altered anywhere fails both
// (wrapping the format's Corrupt) and leaves no file; an entry the format
// does not allow, under a checksum that holds, fails only the verified copy;
// a cancelled context fails both.
func TestCopyFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := extsort.NewSpillDir(dir, 4096)
	require.NoError(t, err)
	defer d.Remove()
	f := &Format{Magic: "test\n", Name: "test", Corrupt: errors.New("corrupt"), Valid: func(c int64, _ uint64) bool { return c > 0 }}
	encode := func(n int, count int64) []byte {
		var buf bytes.Buffer
		e := NewEncoder(&buf, &Format{Magic: f.Magic, Valid: func(int64, uint64) bool { return true }}, 64)
		for i := range n {
			require.NoError(t, e.Add(fmt.Appendf(nil, "data/k%05d", i), count, 0))
		}
		require.NoError(t, e.Finish())
		return buf.Bytes()
	}
	files := func() int {
		var n int
		for _, e := range must(os.ReadDir(dir)) {
			if e.IsDir() {
				for _, f := range must(os.ReadDir(dir + "/" + e.Name())) {
					if strings.HasPrefix(f.Name(), "record") {
						n++
					}
				}
			}
		}
		return n
	}
	b := encode(5000, 1)
	name, n, err := CopyFile(ctx, d, bytes.NewReader(b), f)
	require.NoError(t, err)
	require.Equal(t, int64(5000), n)
	require.Equal(t, b, must(os.ReadFile(name)))
	require.NoError(t, os.Remove(name))
	name, err = CopyCheckedFile(ctx, d, bytes.NewReader(b), f)
	require.NoError(t, err)
	require.Equal(t, b, must(os.ReadFile(name)))
	require.NoError(t, os.Remove(name))

	small := encode(40, 1)
	for i := range small {
		c := slices.Clone(small)
		c[i] ^= 0x40
		for what, in := range map[string][]byte{"flip": c, "cut": small[:i]} {
			_, _, err := CopyFile(ctx, d, bytes.NewReader(in), f)
			require.ErrorIs(t, err, f.Corrupt, "%s at %d", what, i)
			_, err = CopyCheckedFile(ctx, d, bytes.NewReader(in), f)
			require.ErrorIs(t, err, f.Corrupt, "%s at %d: checked", what, i)
		}
	}
	require.Zero(t, files(), "a failed copy leaves no file")

	// A count the format refuses, under a good checksum: only the decoder
	// sees it.
	bad := encode(40, -1)
	_, _, err = CopyFile(ctx, d, bytes.NewReader(bad), f)
	require.ErrorIs(t, err, f.Corrupt)
	name, err = CopyCheckedFile(ctx, d, bytes.NewReader(bad), f)
	require.NoError(t, err)
	require.NoError(t, os.Remove(name))

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = CopyFile(cancelled, d, bytes.NewReader(b), f)
	require.ErrorIs(t, err, context.Canceled)
	_, err = CopyCheckedFile(cancelled, d, bytes.NewReader(b), f)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, files(), "a cancelled copy leaves no file")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
