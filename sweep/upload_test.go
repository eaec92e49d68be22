package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/faultblob"
)

// The uploads that end a mark: the candidates' part, the committed and
// staged indexes and the parts record at once, then the state, then the
// summary; the unrecognized objects' report beside the join, complete
// before the state.

// uploadModel is a namespace whose keep set is given as parts, with a first
// run r1 of it, five hours before the model's clock; in gives the inputs of
// a run now.
func uploadModel(t *testing.T) (m *gcModel, in func() Inputs) {
	m = newGCModel(t, 36, false, true)
	m.partsOn, m.pr = true, rand.New(rand.NewPCG(36, 28))
	m.partsFromFlat()
	m.advance(40 * time.Hour)
	in = func() Inputs {
		_, ids := m.committed()
		opened := 0
		return Inputs{Uncommitted: seqOf(m.stagedKeys()), Parts: m.hostParts(ids, keepAll, &opened), ExportStart: m.now}
	}
	_, err := Mark(m.ctx, m.b, "r1", in(), m.opts()...)
	require.NoError(t, err)
	m.advance(5 * time.Hour)
	return m, in
}

// joinUploads are the keys of a run's uploads that are closed at once.
func joinUploads(runID string) []string {
	dir := reportDir(DefaultStoragePrefix, runID)
	return []string{dir + "deleted/" + partName, dir + indexName, dir + stagedName, dir + partsName}
}

// keysUnder lists the keys under prefix.
func keysUnder(t *testing.T, b *blob.Bucket, prefix string) []string {
	t.Helper()
	var keys []string
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return keys
		}
		require.NoError(t, err)
		keys = append(keys, o.Key)
	}
}

// TestMarkUploadFails fails each upload of an optimized run in turn: the
// mark fails, no state is ever written, the summary says failure, no
// candidates are left, the uploads of the join still open when the failure
// came are aborted, and the unrecognized objects' report (but when it is
// the one that failed) is closed, not aborted. The next optimized run from
// the failed one is clean, and the failed run marked again is optimized;
// both mark what a clean run does.
func TestMarkUploadFails(t *testing.T) {
	m, in := uploadModel(t)
	_, err := Mark(m.ctx, m.b, "clean", in(), m.opts()...)
	require.NoError(t, err)
	want := collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "clean"))
	require.NotEmpty(t, want)
	injected := errors.New("injected upload failure")
	for i, name := range []string{"deleted/" + partName, indexName, stagedName, partsName, "unrecognized/" + partName, stateName} {
		t.Run(name, func(t *testing.T) {
			id := fmt.Sprintf("f%d", i)
			dir := reportDir(DefaultStoragePrefix, id)
			failing := dir + name
			joined := joinUploads(id)
			inJoin := slices.Contains(joined, failing)
			var (
				mu        sync.Mutex
				committed = map[string]bool{}
			)
			b := wrapBucket(m.b,
				// The join's other uploads take long: still open when the
				// failure comes, unless it aborts them.
				faultblob.WithLatency(faultblob.Close, func(key string) time.Duration {
					if inJoin && key != failing && slices.Contains(joined, key) {
						return 5 * time.Second
					}
					return 0
				}),
				faultblob.WithError(faultblob.Close, func(key string) error {
					if key == failing {
						return injected
					}
					return nil
				}),
				faultblob.WithHook(faultblob.Commit, func(_ context.Context, c *faultblob.Call) error {
					mu.Lock()
					defer mu.Unlock()
					committed[c.Key] = true
					return nil
				}))
			start := time.Now()
			_, err := Mark(m.ctx, b, id, in(), m.opts(WithPrevious("r1"))...)
			require.ErrorIs(t, err, injected)
			requireFailedRun(t, m.b, id)
			mu.Lock()
			defer mu.Unlock()
			require.False(t, committed[dir+stateName], "a state was written")
			require.Empty(t, keysUnder(t, m.base, dir+recordDir))
			if inJoin {
				for _, k := range joined {
					require.False(t, committed[k], "%s was not aborted", k)
				}
				require.Less(t, time.Since(start), 5*time.Second)
			}
			if name != "unrecognized/"+partName {
				require.True(t, committed[dir+"unrecognized/"+partName], "the unrecognized objects' report was not written")
			}

			next, err := Mark(m.ctx, m.b, "n"+id, in(), m.opts(WithPrevious(id))...)
			require.NoError(t, err)
			require.Equal(t, RunClean, next.RunKind)
			require.NotEmpty(t, next.CleanReason)
			require.Equal(t, want, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "n"+id)))
			again, err := Mark(m.ctx, m.b, id, in(), m.opts(WithPrevious("r1"))...)
			require.NoError(t, err)
			require.Equal(t, RunOptimized, again.RunKind)
			require.Equal(t, KeepPartsChanged, again.KeepSource)
			require.Equal(t, want, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, id)))
		})
	}
}

// TestMarkWritesStateLast: when the state's upload starts, the candidates'
// part, both indexes, the parts record and the unrecognized objects'
// report are stored; when the summary's starts, the state is too. The
// uploads before them are slowed down, so that a mark that wrote the state
// or the summary before the join's uploads completed would be caught (the
// unrecognized objects' report usually completes long before the join
// ends: TestMarkUploadFails is what catches a state written before it).
func TestMarkWritesStateLast(t *testing.T) {
	m, in := uploadModel(t)
	dir := reportDir(DefaultStoragePrefix, "o")
	before := append(joinUploads("o"), dir+"unrecognized/"+partName)
	var (
		mu       sync.Mutex
		problems []string
		checked  int
	)
	stored := func(keys ...string) {
		for _, k := range keys {
			ok, err := m.base.Exists(context.Background(), k)
			if err != nil || !ok {
				problems = append(problems, k+" not stored yet")
			}
		}
	}
	b := wrapBucket(m.b,
		faultblob.WithLatency(faultblob.Close, func(key string) time.Duration {
			if slices.Contains(before, key) {
				return 30 * time.Millisecond
			}
			return 0
		}),
		faultblob.WithHook(faultblob.Close, func(_ context.Context, c *faultblob.Call) error {
			mu.Lock()
			defer mu.Unlock()
			switch c.Key {
			case dir + stateName:
				checked++
				stored(before...)
			case dir + "summary.json":
				checked++
				stored(append(before, dir+stateName)...)
			}
			return nil
		}))
	sum, err := Mark(m.ctx, b, "o", in(), m.opts(WithPrevious("r1"))...)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 2, checked)
	require.Empty(t, problems)
	require.Equal(t, RunOptimized, sum.RunKind)
	part, err := m.base.Attributes(m.ctx, dir+"deleted/"+partName)
	require.NoError(t, err)
	require.Equal(t, part.Size, sum.CandidatesBytes)
}

// TestMarkClosesAtOnce: the join's four uploads are in flight together.
// Each Close waits until all four have started; uploads made one after
// another would wait for good (here, until the test gives up).
func TestMarkClosesAtOnce(t *testing.T) {
	m, in := uploadModel(t)
	joined := joinUploads("o")
	var started atomic.Int32
	all := make(chan struct{})
	b := wrapBucket(m.b, faultblob.WithHook(faultblob.Close, func(ctx context.Context, c *faultblob.Call) error {
		if !slices.Contains(joined, c.Key) {
			return nil
		}
		if started.Add(1) == int32(len(joined)) {
			close(all)
		}
		select {
		case <-all:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
			return fmt.Errorf("%s: the others did not start in 5 s", c.Key)
		}
	}))
	sum, err := Mark(m.ctx, b, "o", in(), m.opts(WithPrevious("r1"))...)
	require.NoError(t, err)
	require.Equal(t, KeepPartsChanged, sum.KeepSource)
	require.Equal(t, int32(len(joined)), started.Load())
}

// TestMarkUploadPanics: a panic in one of the uploads a mark closes at once
// (here the store's, in the staged index's Close), or in the unrecognized
// objects' report's, reaches Mark's caller, as it did when the uploads were
// closed on Mark's goroutine, and only once every other upload has ended:
// none is still writing to the bucket when it does.
func TestMarkUploadPanics(t *testing.T) {
	m, in := uploadModel(t)
	for i, name := range []string{stagedName, "unrecognized/" + partName} {
		t.Run(name, func(t *testing.T) {
			id := fmt.Sprintf("p%d", i)
			dir := reportDir(DefaultStoragePrefix, id)
			var open atomic.Int32 // Closes under way
			b := wrapBucket(m.b, faultblob.WithHook(faultblob.Close, func(ctx context.Context, c *faultblob.Call) error {
				if c.Key == dir+name {
					panic("injected panic")
				}
				open.Add(1)
				defer open.Add(-1)
				// The others are still open when the panic comes, and
				// take a while to end even once aborted.
				time.Sleep(30 * time.Millisecond)
				return ctx.Err()
			}))
			require.PanicsWithValue(t, "injected panic", func() {
				Mark(m.ctx, b, id, in(), m.opts(WithPrevious("r1"))...) //nolint:errcheck // it panics
			})
			require.Zero(t, open.Load(), "an upload still open after Mark returned")
			ok, err := m.base.Exists(m.ctx, dir+stateName)
			require.NoError(t, err)
			require.False(t, ok, "a state was written")
		})
	}
}
