package s3delete

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/gcerrors"
)

func TestKeyErrorCodes(t *testing.T) {
	for code, want := range map[string]gcerrors.ErrorCode{
		"AccessDenied":  gcerrors.PermissionDenied,
		"SlowDown":      gcerrors.ResourceExhausted,
		"InternalError": gcerrors.Internal,
		"NoSuchKey":     gcerrors.NotFound,
		"Whatever":      gcerrors.Unknown,
	} {
		var err error = &KeyError{Code: code, Message: "m"}
		var c interface{ ErrorCode() gcerrors.ErrorCode }
		require.True(t, errors.As(err, &c))
		require.Equal(t, want, c.ErrorCode(), code)
	}
}

func TestFromBucketNil(t *testing.T) {
	_, err := FromBucket(nil)
	require.ErrorIs(t, err, ErrNotS3)
}
