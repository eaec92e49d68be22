package sweep

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/faultblob"
)

// partialLister answers a listing in driver pages of at most pageSize keys,
// so that one 1000-key page of Mark's is several driver requests, and fails
// the first request of every (prefix, token) it sees with a transient error
// (except those of the report's folder, which Mark does not retry):
// each page of Mark's fails after the part of it already read, again and
// again, until every one of its driver requests has been seen once.
func partialLister(td *testDriver, pageSize int) *blob.Bucket {
	var (
		mu    sync.Mutex
		seen  = map[string]bool{}
		calls int
	)
	return wrapBucket(td.bucket, faultblob.WithMaxPageSize(pageSize),
		faultblob.WithHook(faultblob.List, func(_ context.Context, c *faultblob.Call) error {
			id := fmt.Sprintf("%s|%s|%q", c.Key, c.Delimiter, c.PageToken)
			mu.Lock()
			first := !seen[id]
			seen[id] = true
			calls++
			n := calls
			mu.Unlock()
			if first && !strings.HasPrefix(c.Key, DefaultStoragePrefix+"/") {
				return codeErr{transientCodes[n%len(transientCodes)]}
			}
			return nil
		}))
}

var transientCodes = []gcerrors.ErrorCode{gcerrors.ResourceExhausted, gcerrors.Internal,
	gcerrors.Unknown, gcerrors.DeadlineExceeded}

// TestMarkRetriedPagesListEachKeyOnce lists slices of several pages through
// a store whose every listing page fails once after a part of it was read:
// Mark retries each page from its own token, so it lists every key exactly
// once (no key skipped, none counted twice) and marks exactly the old ones;
// the young ones, also listed through retried pages, are kept.
func TestMarkRetriedPagesListEachKeyOnce(t *testing.T) {
	ctx := context.Background()
	var all, old []string
	young := map[string]bool{}
	for i := range 4 {
		s := descendingName(t0.Add(-time.Duration(100*3600+i) * time.Second))
		for j := range 2300 + 150*i {
			k := fmt.Sprintf("data/%s/%s", s, objID(j))
			all = append(all, k)
			if j%7 == 3 {
				young[k] = true
			} else {
				old = append(old, k)
			}
		}
	}
	for _, k := range []string{"data/" + earlyName(1), flatName(1)} {
		all, old = append(all, k), append(old, k)
	}
	slices.Sort(old)
	base := writeKeys(t, all)
	td := &testDriver{modTime: func(k string) time.Time {
		if young[k] {
			return t0
		}
		return t0.Add(-200 * time.Hour)
	}}
	plain := newTestBucket(base, td)
	d := partialLister(td, 300)
	clk := &simClock{}
	var last Progress
	sum, err := Mark(ctx, d, "run1", noInputs(), WithClock(fixedClock),
		WithTempDir(t.TempDir()), WithListConcurrencyRange(1, 3), clk.option(),
		WithProgress(func(p Progress) { last = p }))
	require.NoError(t, err)
	require.Positive(t, clk.sleeps, "no page was retried")
	require.Equal(t, int64(len(all)), last.Listed, "keys listed")
	require.Equal(t, int64(len(young)), last.Young, "young keys listed")
	require.Equal(t, int64(len(young)), sum.NumYoungObjects)
	require.Equal(t, int64(len(old)), sum.NumDeletedObjects)
	require.Equal(t, old, collect(t, Candidates(ctx, plain, DefaultStoragePrefix, "run1")))
}

// TestCancelDuringBackoff: a Mark or a Sweep waiting out an hour's backoff
// under an endless storm returns as soon as its context is cancelled.
func TestCancelDuringBackoff(t *testing.T) {
	b, d, _ := stormNamespace(t, 4, 10)
	_, err := Mark(context.Background(), b, "run1", noInputs(), WithClock(fixedClock))
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		run  func(ctx context.Context, st *storm) error
	}{
		{"mark", func(ctx context.Context, st *storm) error {
			_, err := Mark(ctx, stormLister(d, st, false), "run2", noInputs(),
				WithClock(fixedClock), WithBackoff(time.Hour, time.Hour))
			return err
		}},
		{"sweep", func(ctx context.Context, st *storm) error {
			_, err := Sweep(ctx, b, "run1", WithBatchDeleter(stormDeleter{st, b}),
				WithBackoff(time.Hour, time.Hour))
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newStorm(&simClock{}, 0)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(200*time.Millisecond, cancel)
			start := time.Now()
			err := c.run(ctx, st)
			require.ErrorIs(t, err, context.Canceled)
			require.Less(t, time.Since(start), 30*time.Second)
			require.Positive(t, st.throttled, "the storm throttled nothing")
		})
	}
}
