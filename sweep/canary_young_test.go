package sweep

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCanaryNotFooledByYoungObjects: the namespace listed is an active
// repository, 2 % of whose objects are young, and the keep set is not its
// own — another repository's keys (rule A), or keys spelled outside what any
// run lists (rule B). The young objects are not keep keys that the listing
// found, nor candidates' peers: the canary fires all the same, and nothing is
// marked.
func TestCanaryNotFooledByYoungObjects(t *testing.T) {
	ctx := context.Background()
	listed := canaryKeys(2000)
	young := map[string]bool{}
	for i := 0; i < len(listed); i += 50 {
		young[listed[i]] = true // 40 young objects
	}
	other := descendingName(t0.Add(-150 * time.Hour))
	var theirs, elsewhere []string
	for i := range 2000 {
		theirs = append(theirs, "data/"+other+"/"+objID(i))
		elsewhere = append(elsewhere, fmt.Sprintf("repo1/data/x/%05d", i))
	}
	for name, keep := range map[string][]string{"rule A": theirs, "rule B": elsewhere} {
		t.Run(name, func(t *testing.T) {
			b := newTestBucket(writeKeys(t, listed), &testDriver{modTime: func(k string) time.Time {
				if young[k] {
					return t0
				}
				return monthOld
			}})
			keep := slices.Sorted(slices.Values(keep))
			_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(keep), Committed: seqOf(nil), ExportStart: t0},
				WithClock(fixedClock), WithTempDir(t.TempDir()))
			require.ErrorIs(t, err, ErrImplausibleMark)
			requireFailedRun(t, b, "run1")
		})
	}
}

// TestCanaryQuietWhenInputsAreYoung: a healthy repository whose keep set is
// mostly young listed objects and finds the rest: the canary stays quiet,
// however many young objects there are.
func TestCanaryQuietWhenInputsAreYoung(t *testing.T) {
	ctx := context.Background()
	listed := canaryKeys(3000)
	young := map[string]bool{}
	for _, k := range listed[:2500] {
		young[k] = true
	}
	// The keep set: every young object, and 400 of the 500 old ones (100
	// garbage); and 1500 keys outside what the run lists.
	keep := slices.Clone(listed[:2900])
	for i := range 1500 {
		keep = append(keep, fmt.Sprintf("imports/%05d", i))
	}
	slices.Sort(keep)
	b := newTestBucket(writeKeys(t, listed), &testDriver{modTime: func(k string) time.Time {
		if young[k] {
			return t0
		}
		return monthOld
	}})
	sum, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(keep), Committed: seqOf(nil), ExportStart: t0},
		WithClock(fixedClock), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	require.Equal(t, int64(100), sum.NumDeletedObjects)
}

// TestCanaryQuietWhenKeepSetIsNew: a repository that rewrote itself since
// the cutoff — nearly every keep key lies in slices started after it,
// which the run does not list — is not implausible: those keys are not the
// listing's to find.
func TestCanaryQuietWhenKeepSetIsNew(t *testing.T) {
	ctx := context.Background()
	old := canaryKeys(100)
	newer := descendingName(t0.Add(-time.Hour))
	keep := slices.Clone(old[:10])
	for i := range 2000 {
		keep = append(keep, "data/"+newer+"/"+objID(i))
	}
	slices.Sort(keep)
	b := oldBucket(t, old) // the new slice's objects are never listed
	sum, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(keep), Committed: seqOf(nil), ExportStart: t0},
		WithClock(fixedClock), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	require.Equal(t, int64(90), sum.NumDeletedObjects)
}
