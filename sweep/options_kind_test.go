package sweep

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOptionKinds: an option of Mark only is no SweepOption and one of Sweep
// only no MarkOption, so giving it to the other does not compile; the
// options of both are both.
func TestOptionKinds(t *testing.T) {
	for _, o := range []MarkOption{WithMinAge(time.Hour), WithLinkTTL(0), WithUnsafeMinAge(), WithClockSkew(0),
		WithTempDir(""), WithMemoryBudget(0), WithListConcurrency(0), WithListConcurrencyRange(0, 0),
		WithCandidateCheck(nil), WithCanary(Canary{}), WithPrevious(""), WithSliceMargin(0), WithCleanEvery(0), WithShard(0, 0)} {
		_, isSweep := o.(SweepOption)
		require.False(t, isSweep, "%T", o)
	}
	for _, o := range []SweepOption{WithDeleteConcurrency(0), WithDeleteConcurrencyRange(0, 0), WithDeleteRate(0), WithBatchDeleter(nil)} {
		_, isMark := o.(MarkOption)
		require.False(t, isMark, "%T", o)
	}
	for _, o := range []Option{WithStoragePrefix(""), WithDataPrefix(""), WithClock(nil), WithLogger(nil), WithProgress(nil),
		WithBackoff(0, 0), WithRecognizer(nil), WithInclude(), WithErrorClassifier(nil)} {
		var m MarkOption = o
		var s SweepOption = o
		require.NotNil(t, m)
		require.NotNil(t, s)
	}
}

// TestCheckOptionsFixed: an option that sets what a fixed option sets is
// refused, naming it; WithListConcurrency and WithListConcurrencyRange set
// one thing; options that add up (WithErrorClassifier) never conflict.
func TestCheckOptionsFixed(t *testing.T) {
	fixed := Options{
		Mark:  []MarkOption{WithMinAge(time.Hour), WithListConcurrencyRange(1, 2), WithErrorClassifier(nil)},
		Sweep: []SweepOption{WithBatchDeleter(nil)},
	}
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Mark: []MarkOption{WithMinAge(2 * time.Hour)}}, "WithMinAge"},
		{Options{Mark: []MarkOption{WithListConcurrency(3)}}, "WithListConcurrency"},
		{Options{Sweep: []SweepOption{WithBatchDeleter(nil)}}, "WithBatchDeleter"},
		{Options{Sweep: []SweepOption{WithDeleteRate(5), WithBatchDeleter(nil)}}, "WithBatchDeleter"},
	} {
		err := CheckOptions(tc.opts, fixed)
		require.ErrorIs(t, err, ErrInvalidInput)
		require.ErrorContains(t, err, tc.want)
	}
	require.NoError(t, CheckOptions(Options{
		Mark:  []MarkOption{WithClockSkew(time.Minute), WithErrorClassifier(nil), nil},
		Sweep: []SweepOption{WithDeleteRate(5), WithDeleteConcurrency(3)},
	}, fixed))
	require.ErrorIs(t, CheckOptions(Options{Sweep: []SweepOption{WithDeleteConcurrency(-1)}}, Options{}), ErrInvalidInput)
}
