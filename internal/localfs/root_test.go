package localfs

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

// TestCheckRoot accepts the fileblob bucket at the folder, and refuses a
// memory bucket, a fileblob bucket at another folder or with a prefix, and
// a folder that is not there.
func TestCheckRoot(t *testing.T) {
	ctx := context.Background()
	dir, other := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	open := func(d string) *blob.Bucket {
		b, err := fileblob.OpenBucket(d, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = b.Close() })
		return b
	}
	require.NoError(t, CheckRoot(ctx, open(dir), dir))
	require.NoError(t, CheckRoot(ctx, open(dir), dir+string(filepath.Separator)))
	for name, b := range map[string]*blob.Bucket{
		"memblob":       memblob.OpenBucket(nil),
		"another":       open(other),
		"prefixed":      blob.PrefixedBucket(open(dir), "sub/"),
		"prefixed flat": blob.PrefixedBucket(open(dir), "x"),
	} {
		require.Error(t, CheckRoot(ctx, b, dir), name)
	}
	require.Error(t, CheckRoot(ctx, open(dir), filepath.Join(dir, "none")))
}
