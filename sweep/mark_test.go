package sweep

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

// oldNamespace writes n old objects in a few slices and returns their keys
// and a bucket reporting them as modified long before the cutoff.
func oldNamespace(t testing.TB, n int) (*blob.Bucket, []string) {
	t.Helper()
	base := memblob.OpenBucket(nil)
	var keys, slices5 []string
	for i := range 5 {
		slices5 = append(slices5, descendingName(t0.Add(-time.Duration(100+i)*time.Hour)))
	}
	for i := range n {
		k := fmt.Sprintf("data/%s/%s", slices5[i%5], objID(i))
		require.NoError(t, base.WriteAll(context.Background(), k, []byte("x"), nil))
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return newTestBucket(base, &testDriver{modTime: func(string) time.Time { return t0.Add(-200 * time.Hour) }}), keys
}

func requireFailedRun(t *testing.T, b *blob.Bucket, runID string) {
	t.Helper()
	ctx := context.Background()
	sum, err := ReadSummary(ctx, b, DefaultStoragePrefix, runID)
	require.NoError(t, err)
	require.False(t, sum.Success)
	require.Zero(t, sum.NumDeletedObjects)
	require.Zero(t, sum.CandidatesBytes, "a failed run has no candidates to size")
	require.Empty(t, collect(t, Candidates(ctx, b, DefaultStoragePrefix, runID)))
	_, err = Sweep(ctx, b, runID)
	require.ErrorIs(t, err, ErrRunFailed)
}

func errAfter(keys []string, n int) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for i, k := range keys {
			if i == n {
				yield("", errors.New("input broke"))
				return
			}
			if !yield(k, nil) {
				return
			}
		}
	}
}

func TestMarkFailures(t *testing.T) {
	_, keys := oldNamespace(t, 0)
	_ = keys
	good := func() Inputs { return Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0} }
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		in   func(keys []string) Inputs
		opts []MarkOption
		want error
	}{
		{"zero export start", nil, func([]string) Inputs { in := good(); in.ExportStart = time.Time{}; return in }, nil, ErrInvalidInput},
		{"nil uncommitted", nil, func([]string) Inputs { in := good(); in.Uncommitted = nil; return in }, nil, ErrInvalidInput},
		{"nil committed", nil, func([]string) Inputs { in := good(); in.Committed = nil; return in }, nil, ErrInvalidInput},
		{"full URI", nil, func(k []string) Inputs {
			in := good()
			in.Committed = seqOf([]string{k[0], "s3://bucket/repo/" + k[1]})
			return in
		}, nil, ErrInvalidInput},
		{"file URI", nil, func(k []string) Inputs {
			in := good()
			in.Uncommitted = seqOf([]string{"file:/srv/lake/repo/" + k[1]})
			return in
		}, nil, ErrInvalidInput},
		{"leading slash", nil, func(k []string) Inputs { in := good(); in.Uncommitted = seqOf([]string{"/" + k[1]}); return in }, nil, ErrInvalidInput},
		{"empty key", nil, func(k []string) Inputs { in := good(); in.Uncommitted = seqOf([]string{""}); return in }, nil, ErrInvalidInput},
		{"uncommitted error", nil, func(k []string) Inputs { in := good(); in.Uncommitted = errAfter(k, 5); return in }, nil, nil},
		{"committed error", nil, func(k []string) Inputs { in := good(); in.Committed = errAfter(k, 50); return in }, nil, nil},
		{"unsafe min age", nil, func([]string) Inputs { return good() }, []MarkOption{WithMinAge(time.Hour)}, ErrUnsafeMinAge},
		// An invalid option fails Mark before it touches the bucket: no
		// summary at all (TestInvalidOptionTouchesNothing).
		{"bad option", nil, func([]string) Inputs { return good() }, []MarkOption{WithListConcurrency(-1)}, ErrInvalidInput},
		{"overlapping prefixes", nil, func([]string) Inputs { return good() }, []MarkOption{WithDataPrefix("_lakefs/data")}, ErrInvalidInput},
		{"cancelled", cancelled, func([]string) Inputs { return good() }, nil, context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, keys := oldNamespace(t, 200)
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			opts := append([]MarkOption{WithClock(fixedClock), WithMemoryBudget(4 << 10), WithTempDir(t.TempDir())}, tc.opts...)
			sum, err := Mark(ctx, b, "run1", tc.in(keys), opts...)
			require.Error(t, err)
			require.Nil(t, sum)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
			if errors.Is(err, ErrInvalidInput) && len(tc.opts) > 0 {
				_, err := ReadSummary(context.Background(), b, DefaultStoragePrefix, "run1")
				require.ErrorIs(t, err, ErrNoRun)
				return
			}
			requireFailedRun(t, b, "run1")
		})
	}
}

func TestMarkUnsafeMinAgeAllowed(t *testing.T) {
	b, keys := oldNamespace(t, 10)
	sum, err := Mark(context.Background(), b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0},
		WithClock(fixedClock), WithMinAge(time.Hour), WithUnsafeMinAge())
	require.NoError(t, err)
	require.Equal(t, t0.Add(-time.Hour-DefaultClockSkew-StagingMargin), sum.CutoffTime)
	require.Equal(t, int64(len(keys)), sum.NumDeletedObjects)
}

func TestMarkWritesNothing(t *testing.T) {
	ctx := context.Background()
	in := Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}
	_, err := Mark(ctx, nil, "run1", in)
	require.ErrorIs(t, err, ErrInvalidInput)
	for _, id := range []string{"", "a/b", "..", "run 1", "run\n"} {
		b := memblob.OpenBucket(nil)
		_, err := Mark(ctx, b, id, in)
		require.ErrorIs(t, err, ErrInvalidInput, "run ID %q", id)
		requireEmptyBucket(t, b)
	}
	b := memblob.OpenBucket(nil)
	_, err = Mark(ctx, b, "run1", in, WithStoragePrefix("/abs"))
	require.ErrorIs(t, err, ErrInvalidInput)
	requireEmptyBucket(t, b)
}

func requireEmptyBucket(t *testing.T, b *blob.Bucket) {
	t.Helper()
	objs, _, err := b.ListPage(context.Background(), blob.FirstPageToken, 10, nil)
	require.NoError(t, err)
	require.Empty(t, objs)
}

func TestMarkRunExists(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 30)
	in := func() Inputs { return Inputs{Uncommitted: seqOf(keys[:10]), Committed: seqOf(nil), ExportStart: t0} }
	first, err := Mark(ctx, b, "run1", in(), WithClock(fixedClock))
	require.NoError(t, err)
	require.Equal(t, int64(20), first.NumDeletedObjects)
	// A second mark of the same run is refused and changes nothing.
	_, err = Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.ErrorIs(t, err, ErrRunExists)
	again, err := ReadSummary(ctx, b, DefaultStoragePrefix, "run1")
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Equal(t, keys[10:], collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
}

func TestMarkOverwritesFailedRun(t *testing.T) {
	ctx := context.Background()
	b, keys := oldNamespace(t, 30)
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: errAfter(keys, 3), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.Error(t, err)
	requireFailedRun(t, b, "run1")
	// A stale part, as a crashed earlier attempt would leave.
	stale := reportDir(DefaultStoragePrefix, "run1") + "deleted/part-stale.parquet"
	w, err := newPartWriter[addressRow](ctx, b, stale)
	require.NoError(t, err)
	require.NoError(t, w.Write(addressRow{Address: keys[0]}))
	require.NoError(t, w.Close())

	sum, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(keys[:1]), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.NoError(t, err)
	require.True(t, sum.Success)
	require.Equal(t, keys[1:], collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
	ok, err := b.Exists(ctx, stale)
	require.NoError(t, err)
	require.False(t, ok)
}

// TestMarkSpills forces spilling with a tiny budget and checks that spill
// files were used and are removed, on success and on failure.
func TestMarkSpills(t *testing.T) {
	for _, failing := range []bool{false, true} {
		t.Run(fmt.Sprintf("failing=%v", failing), func(t *testing.T) {
			ctx := context.Background()
			b, keys := oldNamespace(t, 2000)
			tmp := t.TempDir()
			maxFiles := 0
			inputsRead := make(chan struct{})
			progress := func(p Progress) {
				if p.Phase != "join" && p.Phase != "list" {
					return
				}
				if p.Phase == "list" {
					close(inputsRead)
				}
				var n int
				filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "run-") {
						n++
					}
					return nil
				})
				maxFiles = max(maxFiles, n)
			}
			d := &testDriver{modTime: func(string) time.Time { return t0.Add(-200 * time.Hour) }}
			if failing {
				d.listErr = func(prefix string) error {
					if len(prefix) > len("data/") && prefix[:5] == "data/" {
						// Once the keep set has spilled: the listing
						// runs beside the reading of the inputs.
						<-inputsRead
						return codeErr{gcerrors.PermissionDenied} // permanent: not retried
					}
					return nil
				}
			}
			b = newTestBucket(b, d)
			_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(keys[:1000]), Committed: seqOf(keys[500:1500]), ExportStart: t0},
				WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(tmp), WithProgress(progress))
			if failing {
				require.Error(t, err)
				requireFailedRun(t, b, "run1")
			} else {
				require.NoError(t, err)
				require.Equal(t, keys[1500:], collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
			}
			require.Greater(t, maxFiles, 4, "no spill files seen")
			requireNoSpill(t, tmp)
		})
	}
}

// TestMarkShuffledListing marks a namespace whose listing pages come back in
// random order with every budget.
func TestMarkShuffledListing(t *testing.T) {
	ctx := context.Background()
	base, keys := oldNamespace(t, 1500)
	for _, budget := range []int64{4 << 10, 64 << 10, 16 << 20} {
		d := &testDriver{rng: rand.New(rand.NewPCG(uint64(budget), 2)), modTime: func(string) time.Time { return t0.Add(-200 * time.Hour) }}
		b := newTestBucket(base, d)
		runID := fmt.Sprint("run", budget)
		_, err := Mark(ctx, b, runID, Inputs{Uncommitted: seqOf(keys[:500]), Committed: seqOf(keys[1000:]), ExportStart: t0},
			WithClock(fixedClock), WithMemoryBudget(budget), WithTempDir(t.TempDir()))
		require.NoError(t, err)
		require.Equal(t, keys[500:1000], collect(t, Candidates(ctx, b, DefaultStoragePrefix, runID)))
	}
}

func TestMarkEmptyNamespace(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	sum, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf([]string{"data/x/y"}), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.NoError(t, err)
	// Even a part without rows has its bytes: what was stored.
	part, err := b.Attributes(ctx, reportDir(DefaultStoragePrefix, "run1")+"deleted/"+partName)
	require.NoError(t, err)
	require.Positive(t, part.Size)
	require.Equal(t, &Summary{RunID: "run1", Success: true, StartTime: t0, CutoffTime: t0.Add(-DefaultMinAge - DefaultClockSkew - StagingMargin), RunKind: RunClean,
		CandidatesBytes: part.Size}, sum)
	require.Empty(t, collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
	res, err := Sweep(ctx, b, "run1")
	require.NoError(t, err)
	require.Equal(t, Result{}, *res)
}

// TestMarkSummaryWriteFails fails the first write of summary.json, after the
// candidates were written: the run must end failed, without candidates.
func TestMarkSummaryWriteFails(t *testing.T) {
	ctx := context.Background()
	base, keys := oldNamespace(t, 30)
	var once sync.Once
	d := &testDriver{modTime: func(string) time.Time { return t0.Add(-200 * time.Hour) }, writeErr: func(key string) error {
		var err error
		if strings.HasSuffix(key, "/summary.json") {
			once.Do(func() { err = codeErr{gcerrors.Internal} })
		}
		return err
	}}
	b := newTestBucket(base, d)
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.Error(t, err)
	requireFailedRun(t, b, "run1")
	require.NotEmpty(t, keys)
}

// TestMarkZeroOptionsAreDefaults: a zero option is its default, not zero.
func TestMarkZeroOptionsAreDefaults(t *testing.T) {
	b, _ := oldNamespace(t, 3)
	sum, err := Mark(context.Background(), b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0},
		WithClock(nil), WithMinAge(0), WithLinkTTL(0), WithClockSkew(0), WithMemoryBudget(0),
		WithListConcurrency(0), WithStoragePrefix(""), WithDataPrefix(""))
	require.NoError(t, err)
	require.Equal(t, t0.Add(-DefaultMinAge-DefaultClockSkew-StagingMargin), sum.CutoffTime)
}

// TestMarkErrorText: an unreadable summary of the same run is an error that
// names the package once and wraps ErrInvalidInput, whether the JSON is
// malformed or holds a bad value.
func TestMarkErrorText(t *testing.T) {
	b, _ := oldNamespace(t, 3)
	if err := b.WriteAll(context.Background(), "_lakefs/retention/gc/unified/run1/summary.json", []byte("{"), nil); err != nil {
		t.Fatal(err)
	}
	_, err := Mark(context.Background(), b, "run1", Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.EqualError(t, err, "sweep: existing summary of run run1: _lakefs/retention/gc/unified/run1/summary.json: invalid input: summary: unexpected end of JSON input")
	require.ErrorIs(t, err, ErrInvalidInput)
	for _, bad := range []string{`{`, `[]`, `{"start_time":"yesterday"}`} {
		require.NoError(t, b.WriteAll(context.Background(), "_lakefs/retention/gc/unified/run1/summary.json", []byte(bad), nil))
		_, err = ReadSummary(context.Background(), b, "", "run1")
		require.ErrorIs(t, err, ErrInvalidInput, bad)
		require.Equal(t, 1, strings.Count(err.Error(), "sweep:"), err.Error())
	}
}

// TestMarkCountsYoungApartFromKept: objects kept for their age (by the
// listing's modification time) and objects kept by reference are counted
// apart, in Progress and in the summary.
func TestMarkCountsYoungApartFromKept(t *testing.T) {
	base := memblob.OpenBucket(nil)
	slice := descendingName(t0.Add(-100 * time.Hour))
	var keys []string
	for i := range 10 {
		k := fmt.Sprintf("data/%s/%s", slice, objID(i))
		require.NoError(t, base.WriteAll(context.Background(), k, []byte("x"), nil))
		keys = append(keys, k)
	}
	// keys[0..2] are young by their modification time, though their slice
	// is old; keys[3..4] are referenced; the other five are garbage.
	mod := func(key string) time.Time {
		if slices.Index(keys, key) < 3 {
			return t0
		}
		return t0.Add(-200 * time.Hour)
	}
	b := newTestBucket(base, &testDriver{modTime: mod})
	var last Progress
	sum, err := Mark(context.Background(), b, "run1",
		Inputs{Uncommitted: seqOf(keys[3:4]), Committed: seqOf(keys[4:5]), ExportStart: t0},
		WithClock(fixedClock), WithProgress(func(p Progress) { last = p }))
	require.NoError(t, err)
	require.Equal(t, Progress{Phase: "done", Listed: 10, Young: 3, Kept: 2, Marked: 5}, last)
	read, err := ReadSummary(context.Background(), b, "", "run1")
	require.NoError(t, err)
	require.Equal(t, [3]int64{5, 3, 2}, [3]int64{read.NumDeletedObjects, read.NumYoungObjects, read.NumKeptObjects})
	require.Equal(t, *sum, *read)
}

// TestMarkCancelledSaysThePhase: a Mark cancelled while reading its inputs
// says so.
func TestMarkCancelledSaysThePhase(t *testing.T) {
	b, keys := oldNamespace(t, 10)
	ctx, cancel := context.WithCancel(context.Background())
	in := func(yield func(string, error) bool) {
		cancel()
		for _, k := range keys {
			if !yield(k, nil) {
				return
			}
		}
	}
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: in, Committed: seqOf(nil), ExportStart: t0}, WithClock(fixedClock))
	require.ErrorIs(t, err, context.Canceled)
	require.EqualError(t, err, "sweep: mark run1: keep: context canceled")
}
