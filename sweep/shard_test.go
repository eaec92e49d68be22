package sweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// fnv1a64 is FNV-1a, 64 bits, written out from its definition rather than
// taken from the package, as a host in another language would.
func fnv1a64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// TestSliceShard checks SliceShard against the documented function: the
// published FNV-1a 64 test vectors, and the hash written out above on
// random slice names.
func TestSliceShard(t *testing.T) {
	for s, want := range map[string]uint64{"": 0xcbf29ce484222325, "a": 0xaf63dc4c8601ec8c, "foobar": 0x85944171f73967e8} {
		require.Equal(t, want, fnv1a64(s), "%q", s)
		for _, n := range []int{2, 3, 7, 1 << 20} {
			require.Equal(t, int(want%uint64(n)), SliceShard(s, n), "%q mod %d", s, n)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		name := randDescendingName(r, t0.Add(-time.Duration(r.IntN(1<<20))*time.Second))
		n := 1 + r.IntN(9)
		want := 0
		if n > 1 {
			want = int(fnv1a64(name) % uint64(n))
		}
		require.Equal(t, want, SliceShard(name, n), "%s mod %d", name, n)
	}
	require.Zero(t, SliceShard("x", 0))
	require.Zero(t, SliceShard("x", -3))
}

// TestWithShardInvalid: an invalid shard fails Mark; the zero value and a count of 1 are no sharding.
func TestWithShardInvalid(t *testing.T) {
	ctx := context.Background()
	in := Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}
	for _, c := range [][2]int{{0, -1}, {-1, 2}, {2, 2}, {3, 2}, {1, 1}, {1, 0}, {-1, 0}, {5, -5}} {
		b := memblob.OpenBucket(nil)
		_, err := Mark(ctx, b, "run", in, WithClock(fixedClock), WithTempDir(t.TempDir()), WithShard(c[0], c[1]))
		require.ErrorIs(t, err, ErrInvalidInput, "shard %d of %d", c[0], c[1])
	}
	for _, c := range [][2]int{{0, 0}, {0, 1}} {
		b := memblob.OpenBucket(nil)
		sum, err := Mark(ctx, b, "run", in, WithClock(fixedClock), WithTempDir(t.TempDir()), WithShard(c[0], c[1]))
		require.NoError(t, err)
		require.Zero(t, sum.ShardIndex)
		require.Zero(t, sum.ShardCount)
		ok, err := b.Exists(ctx, reportDir(DefaultStoragePrefix, "run")+stateName)
		require.NoError(t, err)
		require.True(t, ok, "an unsharded run leaves its records")
	}
}

// TestShardsMakeTheFullMark checks, on random worlds (those of
// TestMarkSweepInvariant: slices, the flat layout, folders that are not
// slices, young objects, repeated listings), that the shards 0..n-1 of a
// mark, n from 1 to 5, mark what one clean Mark marks: their candidate sets
// are disjoint and their union is the full run's, each candidate is in the
// shard the documented function names, their counts add up to the full
// run's, and sweeping every shard's run deletes exactly the full run's
// candidates. LAKEGC_PROPERTY_ROUNDS=n runs n worlds instead of 40.
func TestShardsMakeTheFullMark(t *testing.T) {
	rounds := propertyRounds(t)
	// What the worlds exercised, so that the test cannot pass on worlds
	// where sharding changes nothing.
	var sliceCands, topCands, otherCands, shardedWorlds int
	for seed := range uint64(rounds) {
		w := newWorld(rand.New(rand.NewPCG(seed, 7)))
		n := 1 + int(seed%5)
		t.Run(fmt.Sprintf("%d-of-%d", seed, n), func(t *testing.T) {
			ctx := context.Background()
			b := w.bucket(t, memblob.OpenBucket(nil), seed)
			opts := func(extra ...MarkOption) []MarkOption {
				return append([]MarkOption{WithClock(fixedClock), WithMemoryBudget(w.budget),
					WithListConcurrency(w.conc), WithTempDir(t.TempDir()), anyKey}, extra...)
			}
			full, err := Mark(ctx, b, "full", w.inputs(), opts()...)
			require.NoError(t, err)
			want := collect(t, Candidates(ctx, b, DefaultStoragePrefix, "full"))
			require.Equal(t, nonNil(w.marked), nonNil(want))

			var union []string
			var merged Summary
			seen := map[string]int{}
			for i := range n {
				id := fmt.Sprintf("shard-%d", i)
				sum, err := Mark(ctx, b, id, w.inputs(), opts(WithShard(i, n))...)
				require.NoError(t, err)
				require.True(t, sum.Success)
				require.Equal(t, RunClean, sum.RunKind)
				require.Equal(t, full.CutoffTime, sum.CutoffTime)
				if n > 1 {
					require.Equal(t, [2]int{i, n}, [2]int{sum.ShardIndex, sum.ShardCount})
					ok, err := b.Exists(ctx, reportDir(DefaultStoragePrefix, id)+stateName)
					require.NoError(t, err)
					require.False(t, ok, "a shard's run leaves records for an optimized run")
				}
				got := collect(t, Candidates(ctx, b, DefaultStoragePrefix, id))
				require.Equal(t, int64(len(got)), sum.NumDeletedObjects)
				for _, k := range got {
					if j, dup := seen[k]; dup {
						t.Fatalf("%q is a candidate of shards %d and %d", k, j, i)
					}
					seen[k] = i
					switch name, _, ok := sliceOf([]byte(k), "data/"); {
					case ok:
						require.Equal(t, int(fnv1a64(name)%uint64(n)), i, "%q", k)
						if i > 0 {
							sliceCands++
						}
					case strings.Contains(k, "/"):
						require.Zero(t, i, "%q is not in a slice", k)
						otherCands++
					default:
						require.Zero(t, i, "%q is of the flat layout", k)
						topCands++
					}
				}
				union = append(union, got...)
				merged.NumDeletedObjects += sum.NumDeletedObjects
				merged.NumYoungObjects += sum.NumYoungObjects
				merged.NumKeptObjects += sum.NumKeptObjects
				merged.SlicesListed += sum.SlicesListed
				if newer(sum.FirstSlice, merged.FirstSlice) {
					merged.FirstSlice = sum.FirstSlice
				}
			}
			slices.Sort(union)
			require.Equal(t, nonNil(want), nonNil(union))
			require.Equal(t, full.NumDeletedObjects, merged.NumDeletedObjects)
			require.Equal(t, full.NumYoungObjects, merged.NumYoungObjects)
			require.Equal(t, full.NumKeptObjects, merged.NumKeptObjects)
			require.Equal(t, full.SlicesListed, merged.SlicesListed)
			require.Equal(t, full.FirstSlice, merged.FirstSlice)
			if n > 1 {
				shardedWorlds++
			}

			// Sweeping every shard's run is sweeping the full run.
			var deleted int64
			for i := range n {
				res, err := Sweep(ctx, b, fmt.Sprintf("shard-%d", i), WithClock(fixedClock), anyKey)
				require.NoError(t, err)
				require.Zero(t, res.Failed+res.Refused+res.AlreadyGone)
				deleted += res.Deleted
			}
			require.Equal(t, int64(len(want)), deleted)
			for k := range w.objects {
				ok, err := b.Exists(ctx, k)
				require.NoError(t, err)
				_, marked := slices.BinarySearch(want, k)
				require.Equal(t, !marked, ok, "key %q", k)
			}
		})
	}
	t.Logf("%d candidates in slices of shards > 0, %d of the flat layout, %d in other folders, %d sharded worlds", sliceCands, topCands, otherCands, shardedWorlds)
	if rounds >= 10 && (sliceCands == 0 || topCands == 0 || otherCands == 0 || shardedWorlds == 0) {
		t.Errorf("the worlds never exercised a case: %d candidates in slices of shards > 0, %d of the flat layout, %d in other folders, %d sharded worlds",
			sliceCands, topCands, otherCands, shardedWorlds)
	}
}

// newer reports whether slice a is newer than slice b ("" is older than
// any), as first_slice is chosen: the later start time, then the smaller
// name.
func newer(a, b string) bool {
	if a == "" || b == "" {
		return b == "" && a != ""
	}
	ta, _ := layout.SliceTime(a)
	tb, _ := layout.SliceTime(b)
	return ta.After(tb) || ta.Equal(tb) && a < b
}

// TestShardedRunsAndOptimized: a sharded run is clean, leaves no records,
// and is never the previous run of an optimized one; LatestRun passes over
// shards' runs, and the full run before them still starts an optimized run
// that marks what a clean run marks.
func TestShardedRunsAndOptimized(t *testing.T) {
	m := newGCModel(t, 7, true, true)
	m.advance(40 * time.Hour)
	m.mark("full-1")
	m.advance(5 * time.Hour)
	for i := range 3 {
		id := fmt.Sprintf("shard-%d", i)
		sum, _ := m.mark(id, WithShard(i, 3), WithPrevious("full-1"))
		require.Equal(t, RunClean, sum.RunKind)
		require.Equal(t, "full-1", sum.PreviousRunID)
		require.Contains(t, sum.CleanReason, "shard")
		require.Equal(t, 3, sum.ShardCount)
		require.Zero(t, sum.SlicesSkipped)
		ok, err := m.b.Exists(m.ctx, reportDir(DefaultStoragePrefix, id)+stateName)
		require.NoError(t, err)
		require.False(t, ok)
	}
	m.advance(time.Hour)
	prev, err := LatestRun(m.ctx, m.b, "")
	require.NoError(t, err)
	require.Equal(t, "full-1", prev)

	_, want := m.mark("clean")
	sum, got := m.mark("from-shard", WithPrevious("shard-1"))
	require.Equal(t, RunClean, sum.RunKind)
	require.Contains(t, sum.CleanReason, "shard 1 of 3")
	require.Equal(t, want, got)

	sum, got = m.mark("opt", WithPrevious(prev))
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Positive(t, sum.SlicesSkipped)
	require.Empty(t, diff(want, got), "an optimized run missed garbage")
	for _, k := range diff(got, want) {
		_, present := m.mods[k]
		require.False(t, present, "an optimized run marked %q, which a clean run keeps", k)
	}
}
