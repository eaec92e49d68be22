package sweep

import (
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/stretchr/testify/require"
)

// TestSliceTime reads back the start time of slice names as the tests make
// them.
func TestSliceTime(t *testing.T) {
	for _, tm := range []int64{0, 1, 1e9, 1764500000, 2e9, 4e9} {
		name := descendingName(time.Unix(tm, 0))
		got, ok := layout.SliceTime(name)
		require.True(t, ok)
		require.Equal(t, tm, got.Unix(), name)
	}
	for _, bad := range []string{"", "short", "ZZZZZZZZZZZZZZZZZZZZ", "ft1hvo9ksdubjir1711g/"} {
		_, ok := layout.SliceTime(bad)
		require.False(t, ok, bad)
	}
}
