package sweep

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestConcurrencyOptions: the ranges' zero values mean their defaults, a
// fixed concurrency is a range of one value, the last option wins, and
// invalid ranges are errors wrapping ErrInvalidInput.
func TestConcurrencyOptions(t *testing.T) {
	def := newMarkConfig(nil)
	require.Equal(t, span{1, DefaultListConcurrency, DefaultMaxListConcurrency}, def.list)
	require.Equal(t, span{1, DefaultDeleteConcurrency, DefaultMaxDeleteConcurrency}, def.delete)
	require.Equal(t, DefaultMinBackoff, def.backoff.Min)
	require.Equal(t, DefaultMaxBackoff, def.backoff.Max)
	for _, c := range []struct {
		name       string
		opts       []any
		list, del  span
		minB, maxB time.Duration
	}{
		{"zeros", []any{WithListConcurrencyRange(0, 0), WithDeleteConcurrencyRange(0, 0), WithBackoff(0, 0), WithListConcurrency(0), WithDeleteConcurrency(0)},
			def.list, def.delete, DefaultMinBackoff, DefaultMaxBackoff},
		{"fixed", []any{WithListConcurrency(3), WithDeleteConcurrency(5)}, span{3, 3, 3}, span{5, 5, 5}, DefaultMinBackoff, DefaultMaxBackoff},
		{"ranges start within", []any{WithListConcurrencyRange(12, 20), WithDeleteConcurrencyRange(2, 4)}, span{12, 12, 20}, span{2, 4, 4}, DefaultMinBackoff, DefaultMaxBackoff},
		{"high floor", []any{WithListConcurrencyRange(100, 0), WithDeleteConcurrencyRange(0, 3)}, span{100, 100, 100}, span{1, 3, 3}, DefaultMinBackoff, DefaultMaxBackoff},
		{"last wins", []any{WithListConcurrencyRange(2, 9), WithListConcurrency(4)}, span{4, 4, 4}, def.delete, DefaultMinBackoff, DefaultMaxBackoff},
		{"backoff", []any{WithBackoff(time.Millisecond, time.Second)}, def.list, def.delete, time.Millisecond, time.Second},
		{"long floor", []any{WithBackoff(5*time.Minute, 0)}, def.list, def.delete, 5 * time.Minute, 5 * time.Minute},
	} {
		cfg := mixedConfig(c.opts)
		require.NoError(t, cfg.err, c.name)
		require.Equal(t, c.list, cfg.list, c.name)
		require.Equal(t, c.del, cfg.delete, c.name)
		require.Equal(t, c.minB, cfg.backoff.Min, c.name)
		require.Equal(t, c.maxB, cfg.backoff.Max, c.name)
	}
	for _, o := range []any{
		WithListConcurrencyRange(-1, 4), WithListConcurrencyRange(5, 4), WithListConcurrencyRange(0, -1),
		WithDeleteConcurrencyRange(-1, 0), WithDeleteConcurrencyRange(9, 8),
		WithBackoff(-time.Second, 0), WithBackoff(time.Second, -1), WithBackoff(time.Minute, time.Second),
		WithDeleteConcurrency(-2),
	} {
		require.ErrorIs(t, mixedConfig([]any{o}).err, ErrInvalidInput)
	}
}

// TestConcurrencyBound: Sweep starts a worker per batch it may keep in
// flight, and Mark one per slice it may list at once, so a concurrency past
// maxConcurrency is refused rather than made into that many goroutines; at
// the bound it is taken.
func TestConcurrencyBound(t *testing.T) {
	for _, o := range []any{
		WithDeleteConcurrencyRange(0, 1<<40), WithDeleteConcurrencyRange(maxConcurrency+1, 0),
		WithListConcurrencyRange(0, maxConcurrency+1), WithListConcurrencyRange(1<<40, 0),
		WithDeleteConcurrency(1 << 40), WithListConcurrency(maxConcurrency + 1),
	} {
		err := mixedConfig([]any{o}).err
		require.ErrorIs(t, err, ErrInvalidInput)
		require.ErrorContains(t, err, "1024")
	}
	cfg := mixedConfig([]any{WithDeleteConcurrencyRange(0, maxConcurrency), WithListConcurrency(maxConcurrency)})
	require.NoError(t, cfg.err)
	require.Equal(t, span{1, DefaultDeleteConcurrency, maxConcurrency}, cfg.delete)
	require.Equal(t, span{maxConcurrency, maxConcurrency, maxConcurrency}, cfg.list)
}
