package gcstest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/lakegc/lakegc/tests/internal/gcstest"
	"github.com/stretchr/testify/require"
	"google.golang.org/api/googleapi"
)

func TestReadBack(t *testing.T) {
	ctx := context.Background()
	srv := gcstest.Start(t)
	b := srv.Bucket(t, "lake")
	require.NoError(t, b.WriteAll(ctx, "dir/a", []byte("hello world"), nil))
	data, err := b.ReadAll(ctx, "dir/a")
	require.NoError(t, err)
	require.Equal(t, "hello world", string(data))
	r, err := b.NewRangeReader(ctx, "dir/a", 6, 5, nil)
	require.NoError(t, err)
	defer r.Close()
}

func TestRefusedAndThrottledDeletes(t *testing.T) {
	ctx := context.Background()
	srv := gcstest.Start(t, gcstest.WithFailingDeletes(func(bucket, object string) bool {
		return bucket == "lake" && object == "keep/it"
	}))
	b := srv.Bucket(t, "lake")
	for _, k := range []string{"keep/it", "go/away", "go/slow"} {
		require.NoError(t, b.WriteAll(ctx, k, []byte(k), nil))
	}
	status := func(err error) int {
		var g *googleapi.Error
		if !errors.As(err, &g) {
			return 0
		}
		return g.Code
	}
	require.Equal(t, http.StatusForbidden, status(b.Delete(ctx, "keep/it")))
	require.NoError(t, b.Delete(ctx, "go/away"))
	srv.Throttle(2)
	require.Equal(t, http.StatusTooManyRequests, status(b.Delete(ctx, "go/slow")))
	require.Equal(t, http.StatusTooManyRequests, status(b.Delete(ctx, "go/slow")))
	require.NoError(t, b.Delete(ctx, "go/slow"))
	ok, err := b.Exists(ctx, "keep/it")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, gcstest.Counts{Deletes: 5, Refused: 1, Throttled: 2}, srv.Counts())
}
