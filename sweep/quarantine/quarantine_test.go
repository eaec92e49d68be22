package quarantine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// contents returns every object of the bucket with its bytes.
func contents(t *testing.T, b *blob.Bucket) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	it := b.List(nil)
	for {
		o, err := it.Next(ctx)
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			return out
		}
		data, err := b.ReadAll(ctx, o.Key)
		require.NoError(t, err)
		out[o.Key] = string(data)
	}
}

// quarantineWorld is a namespace with candidates, objects a sweep must
// refuse (one of them in an older quarantine), and objects no run names.
type quarantineWorld struct {
	good, refused, other []string
}

func newQuarantineWorld(t *testing.T, b *blob.Bucket, runID string) quarantineWorld {
	t.Helper()
	ctx := context.Background()
	cutoff := t0.Add(-24 * time.Hour)
	old := descendingName(cutoff.Add(-time.Hour))
	w := quarantineWorld{
		good: []string{"data/" + old + "/" + objID(1), "data/" + old + "/" + objID(2), "data/" + earlyName(1), flatName(1)},
		// The quarantine is under the storage prefix, never a candidate:
		// a report that names an object in it (or the record) is refused.
		refused: []string{layout.QuarantineKey(sweep.DefaultStoragePrefix, "older", "data/"+old+"/"+objID(9)), layout.QuarantinePath(sweep.DefaultStoragePrefix, "older") + layout.QuarantineFile, "other/x"},
		other:   []string{"data/" + old + "/" + objID(3), "notes.txt"},
	}
	for i, k := range slices.Concat(w.good, w.refused, w.other) {
		require.NoError(t, b.WriteAll(ctx, k, []byte(fmt.Sprintf("object %d %s", i, k)), nil))
	}
	writeRun(t, b, runID, cutoff, slices.Concat(w.refused, w.good))
	return w
}

func buckets(t *testing.T) map[string]*blob.Bucket {
	fb, err := fileblob.OpenBucket(t.TempDir(), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = fb.Close() })
	return map[string]*blob.Bucket{"mem": memblob.OpenBucket(nil), "file": fb}
}

func TestQuarantineThenRestore(t *testing.T) {
	for name, b := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newQuarantineWorld(t, b, "run1")
			before := contents(t, b)
			res, err := sweep.Sweep(ctx, b, "run1", withQuarantine)
			require.NoError(t, err)
			require.Equal(t, int64(len(w.good)), res.Deleted)
			require.Equal(t, int64(len(w.refused)), res.Refused)
			require.Equal(t, layout.QuarantinePath(sweep.DefaultStoragePrefix, "run1"), res.Quarantine)
			after := contents(t, b)
			for _, k := range w.good {
				require.NotContains(t, after, k)
				require.Equal(t, before[k], after[layout.QuarantineKey(sweep.DefaultStoragePrefix, "run1", k)], k)
			}
			for _, k := range slices.Concat(w.refused, w.other) {
				require.Equal(t, before[k], after[k], k)
			}
			require.Contains(t, after, layout.QuarantinePath(sweep.DefaultStoragePrefix, "run1")+layout.QuarantineFile)

			rr, err := Restore(ctx, b, "run1", nil)
			require.NoError(t, err)
			require.Equal(t, RestoreResult{Restored: int64(len(w.good))}, *rr)
			restored := contents(t, b)
			for k, v := range before {
				require.Equal(t, v, restored[k], k)
			}
			for k := range restored {
				if _, ok := layout.QuarantineAddress(sweep.DefaultStoragePrefix, "run1", k); ok {
					t.Errorf("%s is still in the quarantine", k)
				}
			}
		})
	}
}

func TestRestoreNeverOverwrites(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	w := newQuarantineWorld(t, b, "run1")
	_, err := sweep.Sweep(ctx, b, "run1", withQuarantine)
	require.NoError(t, err)
	q := func(k string) string { return layout.QuarantineKey(sweep.DefaultStoragePrefix, "run1", k) }
	// Another object at the first's place: it stays, and so does the
	// quarantine copy.
	require.NoError(t, b.WriteAll(ctx, w.good[0], []byte("someone else's"), nil))
	// The second back at its place already, as a restore stopped after
	// its copy leaves it: the quarantine copy goes.
	require.NoError(t, b.Copy(ctx, w.good[1], q(w.good[1]), nil))
	// The third and fourth asked for by address, with one not in it.
	rr, err := Restore(ctx, b, "run1", []string{w.good[0], w.good[1], w.good[2], "data/none"})
	require.NoError(t, err)
	require.Equal(t, int64(1), rr.Restored)
	require.Equal(t, int64(1), rr.AlreadyThere)
	require.Equal(t, []string{"data/none"}, rr.Missing)
	require.Len(t, rr.Refused, 1)
	require.Equal(t, w.good[0], rr.Refused[0].Address)
	got := contents(t, b)
	require.Equal(t, "someone else's", got[w.good[0]])
	require.Contains(t, got, q(w.good[0]))
	require.NotContains(t, got, q(w.good[1]))
	require.NotContains(t, got, q(w.good[2]))
	require.Contains(t, got, w.good[2])
	require.NotContains(t, got, w.good[3], "not asked for")
	require.Contains(t, got, q(w.good[3]))

	_, err = Restore(ctx, b, "nope", nil)
	require.ErrorIs(t, err, ErrNoQuarantine)
	_, err = Restore(ctx, b, "../x", nil)
	require.ErrorIs(t, err, ErrInvalidInput)
}

func TestSameContent(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	big := strings.Repeat("ab", 70<<10)
	for _, c := range []struct {
		a, b string
		same bool
	}{{"x", "x", true}, {"x", "y", false}, {big, big, true}, {big, big[:len(big)-1] + "c", false}, {"", "", true}, {"x", "xy", false}} {
		require.NoError(t, b.WriteAll(ctx, "a", []byte(c.a), nil))
		require.NoError(t, b.WriteAll(ctx, "b", []byte(c.b), nil))
		got, err := sameContent(ctx, b, "a", "b")
		require.NoError(t, err)
		require.Equal(t, c.same, got, "%.10q %.10q", c.a, c.b)
	}
}

func TestPurge(t *testing.T) {
	for name, b := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clockAt := func(t time.Time) sweep.Option { return sweep.WithClock(func() time.Time { return t }) }
			wOld := newQuarantineWorld(t, b, "old")
			_, err := sweep.Sweep(ctx, b, "old", withQuarantine, clockAt(t0.Add(-10*24*time.Hour)))
			require.NoError(t, err)
			// A second sweep into the same quarantine keeps its start.
			_, err = sweep.Sweep(ctx, b, "old", withQuarantine, clockAt(t0))
			require.NoError(t, err)
			writeRun(t, b, "new", t0.Add(-24*time.Hour), []string{"data/" + earlyName(7)})
			require.NoError(t, b.WriteAll(ctx, "data/"+earlyName(7), []byte("1234"), nil))
			_, err = sweep.Sweep(ctx, b, "new", withQuarantine, clockAt(t0.Add(-24*time.Hour)))
			require.NoError(t, err)
			// Quarantines whose age is unknown are kept.
			require.NoError(t, b.WriteAll(ctx, layout.QuarantinePath(sweep.DefaultStoragePrefix, "norecord")+layout.QuarantineObjects+"a", []byte("a"), nil))
			require.NoError(t, b.WriteAll(ctx, layout.QuarantinePath(sweep.DefaultStoragePrefix, "bad")+layout.QuarantineFile, []byte(`{"run_id":"bad"}`), nil))
			require.NoError(t, b.WriteAll(ctx, layout.QuarantinePath(sweep.DefaultStoragePrefix, "bad")+layout.QuarantineObjects+"a", []byte("a"), nil))

			before := contents(t, b)
			var wantBytes int64
			for _, k := range wOld.good {
				wantBytes += int64(len(before[layout.QuarantineKey(sweep.DefaultStoragePrefix, "old", k)]))
			}
			res, err := Purge(ctx, b, 7*24*time.Hour, clockAt(t0))
			require.NoError(t, err)
			require.Equal(t, []PurgedRun{{RunID: "old", Created: t0.Add(-10 * 24 * time.Hour), Objects: int64(len(wOld.good)), Bytes: wantBytes}}, res.Purged)
			require.ElementsMatch(t, []string{"bad", "new", "norecord", "older"}, res.Kept)
			after := contents(t, b)
			for k, v := range before {
				if strings.HasPrefix(k, layout.QuarantinePath(sweep.DefaultStoragePrefix, "old")) {
					require.NotContains(t, after, k)
				} else {
					require.Equal(t, v, after[k], k)
				}
			}
			_, err = Purge(ctx, b, -time.Hour)
			require.ErrorIs(t, err, ErrInvalidInput)
		})
	}
}

// TestQuarantineCrashes stops a sweep into the quarantine, a restore and a
// purge at a random bucket call (every call after it fails, as if the
// process died) and checks that no object is lost: each candidate is at its
// place or in the quarantine, nothing else changed; then the rerun finishes.
func TestQuarantineCrashes(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			inner := memblob.OpenBucket(nil)
			w := newQuarantineWorld(t, inner, "run1")
			start := contents(t, inner)
			r := rand.New(rand.NewPCG(seed, 7))
			crashAt := func() *blob.Bucket {
				var calls atomic.Int64
				at := int64(1 + r.IntN(30))
				hook := func(_ context.Context, c *faultblob.Call) error {
					if calls.Add(1) >= at {
						return errCrash
					}
					return nil
				}
				var opts []faultblob.Option
				for _, op := range []faultblob.Op{faultblob.Attributes, faultblob.List, faultblob.Read, faultblob.Write, faultblob.Copy, faultblob.Delete} {
					opts = append(opts, faultblob.WithHook(op, hook))
				}
				fb, err := faultblob.New(inner, opts...)
				require.NoError(t, err)
				return fb.Bucket()
			}
			q := func(k string) string { return layout.QuarantineKey(sweep.DefaultStoragePrefix, "run1", k) }
			check := func(stage string, wantHome bool) {
				now := contents(t, inner)
				for k, v := range start {
					if slices.Contains(w.good, k) {
						if now[k] != v && now[q(k)] != v {
							t.Fatalf("%s: %s lost: at neither its place nor in the quarantine", stage, k)
						}
						if wantHome && now[k] != v {
							t.Fatalf("%s: %s not back", stage, k)
						}
						continue
					}
					require.Equal(t, v, now[k], "%s: %s changed", stage, k)
				}
			}
			opts := []sweep.SweepOption{withQuarantine, sweep.WithBackoff(time.Microsecond, time.Microsecond)}
			_, _ = sweep.Sweep(ctx, crashAt(), "run1", opts...)
			check("crashed sweep", false)
			_, err := sweep.Sweep(ctx, inner, "run1", opts...)
			require.NoError(t, err)
			check("swept", false)
			for _, k := range w.good {
				ok, err := inner.Exists(ctx, k)
				require.NoError(t, err)
				require.False(t, ok, "the rerun did not finish moving %s", k)
			}
			_, _ = Restore(ctx, crashAt(), "run1", nil, opts...)
			check("crashed restore", false)
			rr, err := Restore(ctx, inner, "run1", nil, opts...)
			require.NoError(t, err)
			require.Empty(t, rr.Refused)
			check("restored", true)
			// Sweep again, then purge, crashing: what is left of the
			// quarantine goes on the rerun, nothing else changes.
			_, err = sweep.Sweep(ctx, inner, "run1", opts...)
			require.NoError(t, err)
			moved := contents(t, inner)
			_, _ = Purge(ctx, crashAt(), 0, opts...)
			pr, err := Purge(ctx, inner, 0, opts...)
			require.NoError(t, err)
			purged := contents(t, inner)
			for k, v := range moved {
				if strings.HasPrefix(k, layout.QuarantinePath(sweep.DefaultStoragePrefix, "run1")) {
					require.NotContains(t, purged, k)
				} else {
					require.Equal(t, v, purged[k], k)
				}
			}
			require.NotContains(t, slices.Collect(maps.Keys(purged)), layout.QuarantinePath(sweep.DefaultStoragePrefix, "run1")+layout.QuarantineFile)
			_ = pr
		})
	}
}

var errCrash = errors.New("crashed")

// TestQuarantineFaults sweeps into the quarantine, restores and purges
// through the fault bucket (seeded retryable and permanent errors, stalls,
// short reads on every operation): whatever fails, no candidate is lost and
// nothing else changes; reruns on a sound bucket finish.
func TestQuarantineFaults(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			inner := memblob.OpenBucket(nil)
			w := newQuarantineWorld(t, inner, "run1")
			start := contents(t, inner)
			fb, err := faultblob.New(inner, faultblob.WithSeed(seed), faultblob.WithRates(0.25), faultblob.WithMaxStall(time.Millisecond))
			require.NoError(t, err)
			q := func(k string) string { return layout.QuarantineKey(sweep.DefaultStoragePrefix, "run1", k) }
			check := func(stage string) {
				now := contents(t, inner)
				for k, v := range start {
					if slices.Contains(w.good, k) {
						if now[k] != v && now[q(k)] != v {
							t.Fatalf("%s: %s lost", stage, k)
						}
						continue
					}
					require.Equal(t, v, now[k], "%s: %s changed", stage, k)
				}
			}
			opts := []sweep.SweepOption{withQuarantine, sweep.WithBackoff(time.Microsecond, time.Microsecond)}
			for range 3 {
				_, _ = sweep.Sweep(ctx, fb.Bucket(), "run1", opts...)
				check("sweep")
				_, _ = Restore(ctx, fb.Bucket(), "run1", nil, opts...)
				check("restore")
			}
			_, err = sweep.Sweep(ctx, inner, "run1", opts...)
			require.NoError(t, err)
			rr, err := Restore(ctx, inner, "run1", nil, opts...)
			require.NoError(t, err)
			require.Empty(t, rr.Refused)
			end := contents(t, inner)
			for k, v := range start {
				require.Equal(t, v, end[k], k)
			}
			for k := range end {
				if _, ok := layout.QuarantineAddress(sweep.DefaultStoragePrefix, "run1", k); ok {
					t.Errorf("%s left in the quarantine", k)
				}
			}
		})
	}
}

func FuzzQuarantineRecord(f *testing.F) {
	f.Add([]byte(`{"run_id":"r","created":"2026-11-30T12:00:00Z"}`))
	f.Add([]byte(`{"run_id":"r"}`))
	f.Add([]byte(`{"run_id":"x","created":"2026-11-30T12:00:00Z"}`))
	f.Add([]byte(`{"created":"0000-01-01T00:00:00Z","run_id":"r"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseQuarantineRecord(b, "r")
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v does not wrap ErrInvalidInput", err)
			}
			return
		}
		if got.IsZero() {
			t.Fatal("a record without a time accepted")
		}
	})
}

// TestQuarantineCopyVerified: a copy that the store reports done but that
// holds other bytes (here rewritten right after the copy) never lets the
// original be deleted.
func TestQuarantineCopyVerified(t *testing.T) {
	for name, inner := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newQuarantineWorld(t, inner, "run1")
			before := contents(t, inner)
			bad := w.good[0]
			fb, err := faultblob.New(inner, faultblob.WithHook(faultblob.Copy, func(_ context.Context, c *faultblob.Call) error {
				if c.SrcKey == bad {
					c.After = func() { _ = inner.WriteAll(context.Background(), c.Key, []byte("other bytes of another size"), nil) }
				}
				return nil
			}))
			require.NoError(t, err)
			res, err := sweep.Sweep(ctx, fb.Bucket(), "run1", withQuarantine)
			require.NoError(t, err)
			require.Equal(t, int64(len(w.good)-1), res.Deleted)
			require.Equal(t, int64(1), res.Failed)
			after := contents(t, inner)
			require.Equal(t, before[bad], after[bad], "the original of a differing copy is kept")
			for _, k := range w.good[1:] {
				require.NotContains(t, after, k)
				require.Equal(t, before[k], after[layout.QuarantineKey(sweep.DefaultStoragePrefix, "run1", k)], k)
			}
		})
	}
}

// TestRestoreNeverOverwritesALateWriter: an object put at its place after
// Restore found the place free (here, just before the copy back) is not
// overwritten: the copy back is a conditional write.
func TestRestoreNeverOverwritesALateWriter(t *testing.T) {
	for name, inner := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w := newQuarantineWorld(t, inner, "run1")
			_, err := sweep.Sweep(ctx, inner, "run1", withQuarantine)
			require.NoError(t, err)
			late := w.good[0]
			qkey := layout.QuarantineKey(sweep.DefaultStoragePrefix, "run1", late)
			var once atomic.Bool
			fb, err := faultblob.New(inner, faultblob.WithHook(faultblob.Attributes, func(_ context.Context, c *faultblob.Call) error {
				if c.Key == qkey && once.CompareAndSwap(false, true) {
					c.After = func() { require.NoError(t, inner.WriteAll(context.Background(), late, []byte("a late writer's"), nil)) }
				}
				return nil
			}))
			require.NoError(t, err)
			quarantined := contents(t, inner)[qkey]
			rr, err := Restore(ctx, fb.Bucket(), "run1", nil)
			require.NoError(t, err)
			require.True(t, once.Load())
			require.Equal(t, int64(len(w.good)-1), rr.Restored)
			require.Len(t, rr.Refused, 1)
			require.Equal(t, late, rr.Refused[0].Address)
			after := contents(t, inner)
			require.Equal(t, "a late writer's", after[late])
			require.Equal(t, quarantined, after[qkey], "the refused object stays in the quarantine")
		})
	}
}

// TestPurgeCountsFromTheLastMove: objects a rerun moved into an old
// quarantine get their own days before Purge deletes them.
func TestPurgeCountsFromTheLastMove(t *testing.T) {
	for name, b := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clockAt := func(t time.Time) sweep.Option { return sweep.WithClock(func() time.Time { return t }) }
			keys := []string{"data/" + earlyName(1), "data/" + earlyName(2)}
			for _, k := range keys {
				require.NoError(t, b.WriteAll(ctx, k, []byte(k), nil))
			}
			writeRun(t, b, "late", t0.Add(-11*24*time.Hour), keys)
			// Ten days ago the copy of keys[1] failed: it stayed at its place.
			fb, err := faultblob.New(b, faultblob.WithError(faultblob.Copy, func(key string) error {
				if strings.HasSuffix(key, keys[1]) {
					return errors.New("copy refused")
				}
				return nil
			}))
			require.NoError(t, err)
			res, err := sweep.Sweep(ctx, fb.Bucket(), "late", withQuarantine, clockAt(t0.Add(-10*24*time.Hour)), sweep.WithBackoff(time.Microsecond, time.Microsecond))
			require.NoError(t, err)
			require.Equal(t, int64(1), res.Failed)
			// An hour ago a rerun moved it.
			res, err = sweep.Sweep(ctx, b, "late", withQuarantine, clockAt(t0.Add(-time.Hour)))
			require.NoError(t, err)
			require.Equal(t, int64(1), res.Deleted)
			pr, err := Purge(ctx, b, 7*24*time.Hour, clockAt(t0))
			require.NoError(t, err)
			require.Empty(t, pr.Purged)
			require.Equal(t, []string{"late"}, pr.Kept)
			after := contents(t, b)
			for _, k := range keys {
				require.Contains(t, after, layout.QuarantineKey(sweep.DefaultStoragePrefix, "late", k))
			}
			// Seven days after the rerun, it goes.
			pr, err = Purge(ctx, b, 7*24*time.Hour, clockAt(t0.Add(7*24*time.Hour)))
			require.NoError(t, err)
			require.Len(t, pr.Purged, 1)
			require.Equal(t, int64(2), pr.Purged[0].Objects)
		})
	}
}

// goneDeleter deletes each key and reports it failed with errGoneOwn, an
// error only its own ClassifyError reads (as NotFound), as azdelete's and
// gcsdelete's deleters read their stores' answers.
type goneDeleter struct{ b *blob.Bucket }

var errGoneOwn = errors.New("goneDeleter: the object is gone")

func (d goneDeleter) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	failed := map[string]error{}
	for _, k := range keys {
		if err := d.b.Delete(ctx, k); err != nil {
			return nil, err
		}
		failed[k] = errGoneOwn
	}
	return failed, nil
}

func (goneDeleter) ClassifyError(err error) (gcerrors.ErrorCode, bool) {
	if errors.Is(err, errGoneOwn) {
		return gcerrors.NotFound, true
	}
	return gcerrors.Unknown, false
}

// TestPurgeAsksTheDeletersClassifier: Purge reads a deleter's refusals with
// the deleter's own classifier, as Sweep does; without it, an object the
// deleter says is gone would stop the purge.
func TestPurgeAsksTheDeletersClassifier(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	w := newQuarantineWorld(t, b, "old")
	at := func(t time.Time) sweep.Option { return sweep.WithClock(func() time.Time { return t }) }
	_, err := sweep.Sweep(ctx, b, "old", withQuarantine, at(t0.Add(-10*24*time.Hour)))
	require.NoError(t, err)
	res, err := Purge(ctx, b, 7*24*time.Hour, at(t0), sweep.WithBatchDeleter(goneDeleter{b}))
	require.NoError(t, err)
	require.Len(t, res.Purged, 1)
	require.Equal(t, int64(len(w.good)), res.Purged[0].Objects)
	ok, err := b.Exists(ctx, layout.QuarantinePath(sweep.DefaultStoragePrefix, "old")+layout.QuarantineFile)
	require.NoError(t, err)
	require.False(t, ok)
}
