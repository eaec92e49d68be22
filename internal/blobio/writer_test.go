package blobio_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/blobio"
)

// TestWriterAppearsOnlyOnClose: in a memory and a file bucket, an object
// written and closed is there with its bytes; one aborted, or whose context
// ended before Close, is not, and Abort reports no error for it.
func TestWriterAppearsOnlyOnClose(t *testing.T) {
	fb, err := fileblob.OpenBucket(t.TempDir(), nil)
	require.NoError(t, err)
	for name, b := range map[string]*blob.Bucket{"mem": memblob.OpenBucket(nil), "file": fb} {
		t.Run(name, func(t *testing.T) {
			defer b.Close()
			ctx := context.Background()
			w, err := blobio.NewWriter(ctx, b, "kept", nil)
			require.NoError(t, err)
			_, err = w.Write([]byte("data"))
			require.NoError(t, err)
			require.NoError(t, w.Close())
			got, err := b.ReadAll(ctx, "kept")
			require.NoError(t, err)
			require.Equal(t, "data", string(got))

			w, err = blobio.NewWriter(ctx, b, "aborted", nil)
			require.NoError(t, err)
			_, err = w.Write([]byte("data"))
			require.NoError(t, err)
			require.NoError(t, w.Abort())
			ok, err := b.Exists(ctx, "aborted")
			require.NoError(t, err)
			require.False(t, ok, "an aborted object appeared")

			cctx, cancel := context.WithCancel(ctx)
			w, err = blobio.NewWriter(cctx, b, "cancelled", nil)
			require.NoError(t, err)
			_, err = w.Write([]byte("data"))
			require.NoError(t, err)
			cancel()
			require.Error(t, w.Close())
			ok, err = b.Exists(ctx, "cancelled")
			require.NoError(t, err)
			require.False(t, ok, "an object whose context ended appeared")
		})
	}
}
