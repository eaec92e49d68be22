package sweep

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/blob/memblob"
)

// writeKeys writes each key to a new memory bucket.
func writeKeys(t testing.TB, keys []string) *blob.Bucket {
	t.Helper()
	b := memblob.OpenBucket(nil)
	for _, k := range keys {
		require.NoError(t, b.WriteAll(context.Background(), k, []byte(k), nil))
	}
	return b
}

func noInputs() Inputs {
	return Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0}
}

// TestMarkRefusesUndelimitedListing lists a namespace through a backend that
// ignores the delimiter, at the top level or in the data folder: the keys of
// lakeFS's own folder and of other folders come back as loose objects, and
// Mark must fail rather than mark them.
func TestMarkRefusesUndelimitedListing(t *testing.T) {
	slice := descendingName(t0.Add(-100 * time.Hour))
	keys := []string{"data/" + slice + "/a", "data/" + slice + "/b", "data/loose", "top",
		"_lakefs/meta/x", "other/y"}
	for _, prefix := range []string{"", "data/"} {
		t.Run(fmt.Sprintf("prefix %q", prefix), func(t *testing.T) {
			d := &testDriver{
				modTime:         func(string) time.Time { return t0.Add(-200 * time.Hour) },
				ignoreDelimiter: func(p string) bool { return p == prefix },
			}
			b := newTestBucket(writeKeys(t, keys), d)
			sum, err := Mark(context.Background(), b, "run1", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()))
			require.ErrorIs(t, err, ErrBadListing)
			require.Nil(t, sum)
			requireFailedRun(t, b, "run1")
		})
	}
}

// TestMarkRefusesBadListing lists through a backend that breaks the
// listing's contract in other ways: Mark must fail rather than guess what it
// scanned.
func TestMarkRefusesBadListing(t *testing.T) {
	slice := descendingName(t0.Add(-100 * time.Hour))
	keys := []string{"data/" + slice + "/a", "data/" + slice + "b/c", "data/loose", "_lakefs/meta/x"}
	for _, tc := range []struct {
		name string
		edit func(prefix string, o *driver.ListObject)
	}{
		{"folder without delimiter", func(prefix string, o *driver.ListObject) {
			if prefix == "data/" && o.IsDir {
				o.Key = strings.TrimSuffix(o.Key, "/")
			}
		}},
		// A folder must have a name, even an empty one ("data//"): the
		// listed prefix itself is no folder of it.
		{"data folder lists itself as a folder", func(prefix string, o *driver.ListObject) {
			if prefix == "data/" && o.IsDir {
				o.Key = prefix
			}
		}},
		{"top level lists an empty folder key", func(prefix string, o *driver.ListObject) {
			if prefix == "" && o.IsDir {
				o.Key = prefix
			}
		}},
		{"folder of two names", func(prefix string, o *driver.ListObject) {
			if prefix == "data/" && o.IsDir {
				o.Key += "x/"
			}
		}},
		{"folder lists a key outside it", func(prefix string, o *driver.ListObject) {
			if prefix == "data/"+slice+"/" {
				o.Key = "_lakefs/meta/x"
			}
		}},
		{"data folder lists a key outside it", func(prefix string, o *driver.ListObject) {
			if prefix == "data/" && !o.IsDir {
				o.Key = "_lakefs/meta/x"
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &testDriver{modTime: func(string) time.Time { return t0.Add(-200 * time.Hour) }, edit: tc.edit}
			b := newTestBucket(writeKeys(t, keys), d)
			sum, err := Mark(context.Background(), b, "run1", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()))
			require.ErrorIs(t, err, ErrBadListing)
			require.Nil(t, sum)
			requireFailedRun(t, b, "run1")
		})
	}
}

// TestMarkKeepsYoungDuplicate lists keys more than once with different
// modification times, as a store listing versions or replaying a page does:
// a key is kept when any listed copy is young or of unknown age, however
// far apart the copies land (other spilled blocks, a shuffled listing).
func TestMarkKeepsYoungDuplicate(t *testing.T) {
	cutoff := t0.Add(-DefaultMinAge - DefaultClockSkew - StagingMargin)
	old, older, young := cutoff.Add(-time.Hour), cutoff.Add(-2*time.Hour), cutoff.Add(time.Minute)
	// The times of every listed copy, by the key's number modulo 8.
	variants := [][]time.Time{
		{old},
		{old, young},
		{young, old},
		{old, {}},
		{{}, older},
		{old, older},
		{older, old, cutoff},
		{old, old},
		{young},
		{cutoff, {}},
	}
	slice := descendingName(t0.Add(-100 * time.Hour))
	times := map[string][]time.Time{}
	var keys, want []string
	for i := range 1500 {
		k := fmt.Sprintf("data/%s/%s", slice, objID(i))
		switch i % 3 {
		case 1:
			k = "data/" + earlyName(i)
		case 2:
			k = flatName(i)
		}
		keys = append(keys, k)
		times[k] = variants[i%len(variants)]
		isYoung := false
		for _, mod := range times[k] {
			isYoung = isYoung || mod.IsZero() || !mod.Before(cutoff)
		}
		if !isYoung {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	base := writeKeys(t, keys)
	for _, budget := range []int64{4 << 10, 1 << 20} {
		for _, shuffle := range []bool{false, true} {
			t.Run(fmt.Sprintf("budget=%d/shuffle=%v", budget, shuffle), func(t *testing.T) {
				ctx := context.Background()
				d := &testDriver{
					modTime: func(k string) time.Time {
						if ts, ok := times[k]; ok {
							return ts[0]
						}
						return t0
					},
					copies: func(k string) []time.Time {
						if ts, ok := times[k]; ok {
							return ts[1:]
						}
						return nil
					},
				}
				if shuffle {
					d.rng = rand.New(rand.NewPCG(uint64(budget), 3))
				}
				b := newTestBucket(base, d)
				runID := fmt.Sprintf("run-%d-%v", budget, shuffle)
				sum, err := Mark(ctx, b, runID, noInputs(), WithClock(fixedClock), WithMemoryBudget(budget), WithTempDir(t.TempDir()))
				require.NoError(t, err)
				require.Equal(t, int64(len(want)), sum.NumDeletedObjects)
				require.Equal(t, want, collect(t, Candidates(ctx, b, DefaultStoragePrefix, runID)))
			})
		}
	}
}

// TestMarkListsEmptyFolderName marks a namespace with stray keys under
// "data//": a folder with an empty name is not a slice, and is listed in
// full like any other folder.
func TestMarkListsEmptyFolderName(t *testing.T) {
	ctx := context.Background()
	slice := descendingName(t0.Add(-100 * time.Hour))
	young := map[string]bool{"data//y": true}
	keys := []string{"data//x", "data//y", "data//a/b", "data///z", "data/" + slice + "/k", "data/l"}
	d := &testDriver{modTime: func(k string) time.Time {
		if young[k] {
			return t0
		}
		return t0.Add(-200 * time.Hour)
	}}
	b := newTestBucket(writeKeys(t, keys), d)
	in := Inputs{Uncommitted: seqOf([]string{"data//a/b"}), Committed: seqOf(nil), ExportStart: t0}
	// The keys are not of lakeFS's shapes: the operator includes the data
	// folder.
	include := WithInclude("data/")
	sum, err := Mark(ctx, b, "run1", in, WithClock(fixedClock), WithTempDir(t.TempDir()), include)
	require.NoError(t, err)
	want := []string{"data///z", "data//x", "data/" + slice + "/k", "data/l"}
	require.Equal(t, int64(len(want)), sum.NumDeletedObjects)
	require.Equal(t, want, collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
	res, err := Sweep(ctx, b, "run1", WithClock(fixedClock), include)
	require.NoError(t, err)
	require.Equal(t, Result{Deleted: int64(len(want))}, *res)
	for _, k := range []string{"data//y", "data//a/b"} {
		ok, err := b.Exists(ctx, k)
		require.NoError(t, err)
		require.True(t, ok, k)
	}
}

// manySlices writes perSlice old objects in each of n slices.
func manySlices(t testing.TB, n, perSlice int) (*blob.Bucket, []string) {
	t.Helper()
	var keys []string
	for i := range n {
		s := descendingName(t0.Add(-time.Duration(100*3600+i) * time.Second))
		for j := range perSlice {
			keys = append(keys, fmt.Sprintf("data/%s/%s", s, objID(j)))
		}
	}
	slices.Sort(keys)
	d := &testDriver{modTime: func(string) time.Time { return t0.Add(-200 * time.Hour) }}
	return newTestBucket(writeKeys(t, keys), d), keys
}

// newTestLister returns a lister of b with a cutoff of t0, a pool of pool
// bytes, and small blocks.
func newTestLister(b *blob.Bucket, dir *extsort.SpillDir, pool int64) *lister {
	cfg := newMarkConfig(nil)
	l := &lister{bucket: b, cfg: cfg, dir: dir, cutoff: t0, cnt: &counters{},
		loose: extsort.NewSorter(dir, 4<<10, 2), youngKeys: &lockedSorter{s: extsort.NewSorter(dir, 4<<10, 2)}, pool: new(extsort.Pool),
		rec: cfg.recognizer(), walls: newWallSet(cfg)}
	l.pool.Give(pool)
	var err error
	l.unrec, err = newUnrecognized(context.Background(), memblob.OpenBucket(nil), "report/")
	if err != nil {
		panic(err)
	}
	return l
}

// folderListBytes is what the lister's list of folders holds: each entry's
// slot, its name, and its listing's handle (a MemRun or a run file's name),
// not counting the listings' keys.
func folderListBytes(l *lister) int {
	n := cap(l.folders) * int(folderSize)
	for _, f := range l.folders {
		n += len(f.prefix) + len(f.run)
		if f.mem != nil {
			n += int(memRunSize)
		}
	}
	return n
}

// TestListFoldersWithinBudget lists many slices with a tiny pool: the list
// of folders must stay within it, and every key must still be listed.
func TestListFoldersWithinBudget(t *testing.T) {
	ctx := context.Background()
	b, keys := manySlices(t, 500, 2)
	for _, pool := range []int64{0, 2 << 10, 16 << 10} {
		t.Run(fmt.Sprint("pool=", pool), func(t *testing.T) {
			dir, err := extsort.NewSpillDir(t.TempDir(), 512)
			require.NoError(t, err)
			defer dir.Remove()
			l := newTestLister(b, dir, pool)
			defer l.loose.Release()
			require.NoError(t, l.listTop(ctx))
			require.NoError(t, l.listFolders(ctx))
			require.LessOrEqual(t, folderListBytes(l), int(pool), "%d folders held", len(l.folders))
			require.GreaterOrEqual(t, l.pool.Left(), int64(0))
			it, err := l.stream(4<<10, 2)
			require.NoError(t, err)
			require.Equal(t, keys, drainKeys(t, it))
		})
	}
}

// TestMarkManySlicesTinyBudget marks more slices than the smallest budget
// can list one entry each for.
func TestMarkManySlicesTinyBudget(t *testing.T) {
	ctx := context.Background()
	b, keys := manySlices(t, 400, 3)
	in := Inputs{Uncommitted: seqOf(keys[:300]), Committed: seqOf(keys[900:]), ExportStart: t0}
	sum, err := Mark(ctx, b, "run1", in, WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	require.Equal(t, int64(600), sum.NumDeletedObjects)
	require.Equal(t, keys[300:900], collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
	require.True(t, strings.HasPrefix(keys[0], "data/"+sum.FirstSlice+"/"))
}

// TestYoungKeysWithinBudget adds many young listed keys while keep sets of
// every size are read from the inputs, as Mark does: the keep set's block,
// the young keys' and the pool together never hold more than the keep
// set's share and the pool's, the pool keeps at least its own, and every
// key ends in the keep set.
func TestYoungKeysWithinBudget(t *testing.T) {
	for _, inputs := range []int{0, 10, 300, 5000} {
		t.Run(fmt.Sprint("inputs=", inputs), func(t *testing.T) {
			dir, err := extsort.NewSpillDir(t.TempDir(), 512)
			require.NoError(t, err)
			defer dir.Remove()
			m := &marker{cfg: newMarkConfig([]MarkOption{WithMemoryBudget(64 << 10)}), spill: dir, cnt: &counters{}}
			sh := m.budgets()
			keep := extsort.NewSorter(dir, sh.keep-sh.young, sh.fanIn)
			defer keep.Release()
			l := m.newLister(sh)
			defer l.loose.Release()
			defer l.youngKeys.s.Release()
			held := func() int { return keep.Size() + l.youngKeys.s.Size() + int(l.pool.Left()) }
			var want []string
			for i := range 20000 {
				if i < inputs {
					want = append(want, fmt.Sprintf("in/%06d", i))
					require.NoError(t, keep.Add([]byte(want[len(want)-1])))
				} else if i == inputs {
					l.inputsRead(keep)
				}
				k := fmt.Sprintf("young/%06d", i)
				want = append(want, k)
				require.NoError(t, l.youngKeys.add([]byte(k)))
				require.LessOrEqual(t, held(), sh.keep+sh.mem, "after %d young keys", i+1)
				require.GreaterOrEqual(t, int(l.pool.Left()), sh.mem, "the pool lost its own share")
			}
			require.NoError(t, keep.Adopt(l.youngKeys.s))
			it, err := keep.Finish()
			require.NoError(t, err)
			defer it.Close()
			slices.Sort(want)
			require.Equal(t, want, drainKeys(t, it))
		})
	}
}
