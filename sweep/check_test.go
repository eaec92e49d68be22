package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// WithCandidateCheck is asked about exactly the candidates, in order; the
// keys it spares are not marked, and an optimized run after lists their
// slices again and asks about them again: spared again they stay
// unmarked, no longer spared they are marked as a clean run marks them.
func TestCandidateCheck(t *testing.T) {
	m := newGCModel(t, 21, false, true)
	for range 12 {
		m.churn()
		m.advance(6 * time.Hour)
	}
	_, plain := m.mark("plain")
	require.NotEmpty(t, plain)
	spared := map[string]bool{}
	for i, k := range plain {
		if i%3 == 0 {
			spared[k] = true
		}
	}
	var asked []string
	check := func(spare bool) CandidateCheck {
		return func(_ context.Context, keys []string, keep []bool) error {
			require.True(t, slices.IsSorted(keys))
			for i, k := range keys {
				asked = append(asked, k)
				keep[i] = spare && spared[k]
			}
			return nil
		}
	}
	sum, got := m.mark("checked", WithCandidateCheck(check(true)))
	require.Equal(t, plain, asked, "the check is asked about the candidates and nothing else")
	for _, k := range got {
		require.False(t, spared[k], "spared key %s marked", k)
	}
	require.Len(t, got, len(plain)-len(spared))
	require.EqualValues(t, len(got), sum.NumDeletedObjects)

	// Later, with nothing new to collect: an optimized run that spares
	// them again marks none; one that does not marks all of them, as a
	// clean run does.
	m.advance(time.Hour)
	asked = nil
	sum, again := m.mark("again", WithPrevious("checked"), WithCandidateCheck(check(true)))
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	for k := range spared {
		require.Contains(t, asked, k, "spared key %s not checked again", k)
		require.NotContains(t, again, k)
	}
	_, clean := m.mark("clean")
	sum, next := m.mark("next", WithPrevious("checked"), WithCandidateCheck(check(false)))
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Equal(t, clean, next)
	for k := range spared {
		require.Contains(t, next, k)
	}
}

// A check's error fails the mark: no candidates are written.
func TestCandidateCheckError(t *testing.T) {
	m := newGCModel(t, 22, false, true)
	for range 6 {
		m.churn()
		m.advance(6 * time.Hour)
	}
	boom := errors.New("boom")
	_, err := Mark(m.ctx, m.b, "failed", Inputs{Uncommitted: seqOf(m.keep()), Committed: seqOf(nil), ExportStart: m.now},
		m.opts(WithCandidateCheck(func(context.Context, []string, []bool) error { return boom }))...)
	require.ErrorIs(t, err, boom)
	_, err = Sweep(m.ctx, m.b, "failed", sweepOpts(m.opts())...)
	require.ErrorIs(t, err, ErrRunFailed)
}

// TestCandidateCheckDoesNotQuietCanary: a keep set that matches nothing
// trips rule B even when a candidate check spares a few of its candidates:
// spared keys are the keep set's misses, not its hits.
func TestCandidateCheckDoesNotQuietCanary(t *testing.T) {
	ctx := context.Background()
	var elsewhere []string
	for i := range 1500 {
		elsewhere = append(elsewhere, fmt.Sprintf("repo1/data/x/%05d", i))
	}
	b, _ := canaryWorld(t, 1000)
	spareEvery := func(_ context.Context, keys []string, keep []bool) error {
		for i := range keys {
			keep[i] = i%20 == 0 // 5 %
		}
		return nil
	}
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(elsewhere), Committed: seqOf(nil), ExportStart: t0},
		WithClock(fixedClock), WithTempDir(t.TempDir()), WithCandidateCheck(spareEvery))
	require.ErrorIs(t, err, ErrImplausibleMark)
	requireFailedRun(t, b, "run1")
}
