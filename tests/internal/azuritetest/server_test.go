package azuritetest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/lakegc/lakegc/tests/internal/azuritetest"
	"github.com/stretchr/testify/require"
)

func TestAzurite(t *testing.T) {
	ctx := context.Background()
	srv := azuritetest.Start(t)
	b := srv.Bucket(t, "lake")
	require.NoError(t, b.WriteAll(ctx, "dir/a", []byte("hello"), nil))
	data, err := b.ReadAll(ctx, "dir/a")
	require.NoError(t, err)
	require.Equal(t, "hello", string(data))

	srv.Throttle(1)
	err = b.Delete(ctx, "dir/a")
	var re *azcore.ResponseError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, http.StatusServiceUnavailable, re.StatusCode)
	require.Equal(t, "ServerBusy", re.ErrorCode)
	require.NoError(t, b.Delete(ctx, "dir/a"))
	ok, err := b.Exists(ctx, "dir/a")
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, azuritetest.Counts{Deletes: 2, Throttled: 1}, srv.Counts())
}
