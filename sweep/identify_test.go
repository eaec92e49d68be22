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
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

// idWorld is a random namespace that mixes the repository's own objects,
// of every shape lakeFS writes, with what it did not write: other tenants'
// files, import sources, nested repositories, odd spellings.
type idWorld struct {
	objects map[string]time.Time // key → modification time (zero: unknown)
	own     map[string]bool      // the keys of the repository's own shapes (or included)
	keep    []string
	include []string
	cutoff  time.Time
	newer   []string // slices started at or after the cutoff
}

const b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func randFrom(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// randUUID is a random UUID (version 4) in its canonical form.
func randUUID(r *rand.Rand) string {
	h := randHexUUID(r)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// randHexUUID is hex of a random UUID (version 4), as lakeFS's flat layout
// named objects.
func randHexUUID(r *rand.Rand) string {
	h := []byte(randFrom(r, "0123456789abcdef", 32))
	h[12], h[16] = '4', "89ab"[r.IntN(4)]
	return string(h)
}

func newIDWorld(r *rand.Rand) *idWorld {
	w := &idWorld{objects: map[string]time.Time{}, own: map[string]bool{},
		cutoff: t0.Add(-DefaultMinAge - DefaultClockSkew)}
	mod := func() time.Time {
		switch r.IntN(6) {
		case 0:
			return w.cutoff.Add(time.Duration(r.IntN(48)) * time.Hour) // young
		case 1:
			return time.Time{} // unknown
		case 2:
			return w.cutoff // at the cutoff: young
		default:
			return w.cutoff.Add(-time.Duration(1+r.IntN(1000)) * time.Hour)
		}
	}
	put := func(key string, own bool) {
		if _, dup := w.objects[key]; dup {
			return
		}
		w.objects[key] = mod()
		if own {
			w.own[key] = true
		}
	}
	var folders []string // folders under data/ to nest repositories in
	var oldSlices []string
	for range 1 + r.IntN(4) {
		oldSlices = append(oldSlices, randDescendingName(r, w.cutoff.Add(-time.Duration(1+r.IntN(500))*time.Hour)))
	}
	w.newer = []string{randDescendingName(r, w.cutoff.Add(time.Duration(r.IntN(20))*time.Hour))}
	for _, s := range append(slices.Clone(oldSlices), w.newer...) {
		dir := "data/" + s + "/"
		folders = append(folders, dir)
		for range r.IntN(30) {
			id := randXID(r, time.Unix(int64(r.Uint32()), 0))
			switch r.IntN(12) {
			case 0:
				put(dir+id+","+randFrom(r, b64url, layout.SignatureLen), true)
			case 1:
				put(dir+id+","+randFrom(r, b64url, layout.SignatureLen+pick(r, []int{-1, 1})), false)
			case 2:
				put(dir+id+",", false)
			case 3:
				put(dir+strings.ToUpper(id), false)
			case 4:
				put(dir+id+"/extra", false)
			case 5:
				put(dir+"imported-"+randName(r, 3)+".csv", false)
			case 6:
				put(dir+id[:19], false)
			default:
				put(dir+id, true)
			}
		}
	}
	// The old flat layout, and other tenants' files at the top level.
	for range r.IntN(10) {
		h := randHexUUID(r)
		switch r.IntN(6) {
		case 0:
			put(strings.ToUpper(h), h == strings.ToUpper(h))
		case 1:
			put(h[:31], false)
		case 2:
			put(h+"0", false)
		case 3:
			md5 := randFrom(r, "0123456789abcdef", 32) // an MD5 digest, or another UUID's hex
			put(md5, md5[12] == '4' && strings.IndexByte("89ab", md5[16]) >= 0)
		default:
			put(h, true)
		}
	}
	for _, k := range []string{"README.txt", "backup.tar", "sales-2024.csv", "dummy", "part-0.parquet"} {
		if r.IntN(2) == 0 {
			put(k, false)
		}
	}
	// Early linked uploads, under the data folder and a staging token.
	token := "repo1-main" + pick(r, []string{":", "-"}) + randUUID(r)
	for range r.IntN(8) {
		n := randFrom(r, b64url, 21)
		switch r.IntN(5) {
		case 0:
			put("data/"+token+"/"+n, true)
		case 1:
			put("data/"+n[:20], false)
		case 2:
			put("data/repo1-main:"+strings.ToUpper(randUUID(r))+"/"+n, false)
		case 3:
			put("data/"+n, false) // lakeFS always put a token before it
		default:
			put("data/"+token+"/"+n, true)
		}
	}
	folders = append(folders, "data/"+token+"/")
	// Import sources and stray folders under the data folder.
	for _, k := range []string{"data/imports/sales/part-0.parquet", "data/year=2024/part-1", "data//x", "data///y",
		"data/README", "data/imports/x.csv"} {
		if r.IntN(2) == 0 {
			put(k, false)
		}
	}
	// Nested repositories, in a slice's folder, in a folder of their own,
	// and deeper.
	for _, ns := range append(slices.Clone(folders), "data/inner/", "data/imports/nested/") {
		if r.IntN(3) != 0 {
			continue
		}
		put(ns+"_lakefs/dummy", false)
		put(ns+"_lakefs/refs/branch/main", false)
		put(ns+"data/"+oldSlices[0]+"/"+randXID(r, t0), false)
		put(ns+randFrom(r, "0123456789abcdef", 32), false)
	}
	// Sometimes the operator includes the import folder: its keys are the
	// repository's, walls aside.
	if r.IntN(3) == 0 {
		w.include = []string{"data/imports/"}
		for k := range w.objects {
			if strings.HasPrefix(k, "data/imports/") {
				w.own[k] = true
			}
		}
	}
	// The keep set: some of everything, and some absent keys.
	for k := range w.objects {
		if r.IntN(3) == 0 {
			w.keep = append(w.keep, k)
		}
	}
	for range r.IntN(5) {
		w.keep = append(w.keep, "data/"+oldSlices[0]+"/"+randXID(r, t0))
	}
	slices.Sort(w.keep)
	return w
}

// listed reports whether Mark lists key: a top-level object but lakeFS's
// marker, or an object under the data folder outside the newer slices.
func (w *idWorld) listed(key string) bool {
	if !strings.Contains(key, "/") {
		return key != "dummy"
	}
	if !strings.HasPrefix(key, "data/") {
		return false
	}
	for _, s := range w.newer {
		if strings.HasPrefix(key, "data/"+s+"/") {
			return false
		}
	}
	return true
}

// walls are the folders P below the data folder's root such that a listed
// key starts with P + "_lakefs/".
func (w *idWorld) walls() []string {
	var out []string
	for k := range w.objects {
		if i := strings.Index(k, "/_lakefs/"); i >= 0 && w.listed(k) {
			out = append(out, k[:i+1])
		}
	}
	return out
}

// model returns the candidates, the unrecognized listed objects and the
// walled ones: a plain set computation.
func (w *idWorld) model() (cands, unrec []string, walled int64) {
	walls := w.walls()
	keep := map[string]bool{}
	for _, k := range w.keep {
		keep[k] = true
	}
	for k, mod := range w.objects {
		if !w.listed(k) {
			continue
		}
		if !w.own[k] {
			unrec = append(unrec, k)
			continue
		}
		if mod.IsZero() || !mod.Before(w.cutoff) {
			continue
		}
		underWall := slices.ContainsFunc(walls, func(p string) bool { return strings.HasPrefix(k, p) })
		switch {
		case underWall:
			walled++
		case !keep[k]:
			cands = append(cands, k)
		}
	}
	slices.Sort(cands)
	slices.Sort(unrec)
	return cands, unrec, walled
}

// TestMarkNamesOnlyOwnGarbage marks random namespaces that mix the
// repository's own objects with what it did not write: the candidates are
// exactly the repository's own unreferenced objects older than the cutoff,
// outside the walls, and Sweep deletes exactly them.
func TestMarkNamesOnlyOwnGarbage(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(propertyRounds(t)) {
		r := rand.New(rand.NewPCG(seed, 21))
		w := newIDWorld(r)
		// The generator's labels agree with the recognizer.
		for k := range w.objects {
			if !strings.HasPrefix(k, "data/imports/") {
				require.Equal(t, w.own[k], layout.Recognize(k, "data") != layout.Unrecognized, "%q", k)
			}
		}
		var base *blob.Bucket
		if seed%5 == 4 {
			var err error
			base, err = fileblob.OpenBucket(t.TempDir(), nil)
			require.NoError(t, err)
		} else {
			base = memblob.OpenBucket(nil)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			for k := range w.objects {
				require.NoError(t, base.WriteAll(ctx, k, []byte("ab"), nil))
			}
			b := newTestBucket(base, &testDriver{modTime: func(k string) time.Time { return w.objects[k] }})
			opts := []MarkOption{WithClock(fixedClock), WithInclude(w.include...), WithListConcurrency(1 + int(seed%4))}
			sum, err := Mark(ctx, b, "run", Inputs{Uncommitted: seqOf(w.keep), Committed: seqOf(nil), ExportStart: t0},
				append(opts, WithTempDir(t.TempDir()), WithMemoryBudget(int64(4<<10)<<(seed%8)))...)
			require.NoError(t, err)
			cands, unrec, walled := w.model()
			require.Equal(t, nonNil(cands), nonNil(collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run"))))
			require.Equal(t, int64(len(unrec)), sum.NumUnrecognizedObjects)
			require.Equal(t, 2*int64(len(unrec)), sum.UnrecognizedBytes)
			require.Equal(t, unrec[:min(len(unrec), maxSample)], sum.UnrecognizedSample)
			require.Equal(t, walled, sum.NumWalledObjects)
			require.Equal(t, nonNil(unrec), nonNil(readUnrecognized(t, b, "run")))

			res, err := Sweep(ctx, b, "run", sweepOpts(opts)...)
			require.NoError(t, err)
			require.Equal(t, Result{Deleted: int64(len(cands))}, *res)
			for k := range w.objects {
				ok, err := b.Exists(ctx, k)
				require.NoError(t, err)
				_, cand := slices.BinarySearch(cands, k)
				require.Equal(t, !cand, ok, "%q", k)
			}
		})
	}
}

// readUnrecognized returns the addresses of a run's unrecognized/, sorted,
// checking each row's size and time against the listing.
func readUnrecognized(t *testing.T, b *blob.Bucket, runID string) []string {
	t.Helper()
	ctx := context.Background()
	data, err := b.ReadAll(ctx, reportDir(DefaultStoragePrefix, runID)+"unrecognized/"+partName)
	require.NoError(t, err)
	rows, err := parquet.Read[unrecognizedRow](bytesReaderAt(data), int64(len(data)))
	require.NoError(t, err)
	var out []string
	for _, row := range rows {
		a, err := b.Attributes(ctx, row.Address)
		require.NoError(t, err)
		require.Equal(t, a.Size, row.Size)
		if a.ModTime.IsZero() {
			require.Nil(t, row.LastModified)
		} else {
			require.NotNil(t, row.LastModified)
			require.Equal(t, a.ModTime.UnixMilli(), *row.LastModified)
		}
		out = append(out, row.Address)
	}
	slices.Sort(out)
	return out
}

// TestCanaryRefusesParentRootedBucket: a bucket rooted above the
// repository, with a keep set large enough to judge: the listing found none
// of it, and Mark fails with the figures, leaving no candidates.
func TestCanaryRefusesParentRootedBucket(t *testing.T) {
	ctx := context.Background()
	slice := descendingName(t0.Add(-100 * time.Hour))
	var stored, keep []string
	for i := range 1200 {
		stored = append(stored, "repo1/data/"+slice+"/"+objID(i))
		keep = append(keep, "data/"+slice+"/"+objID(i))
	}
	b := oldBucket(t, append(stored, "README.txt", "backup.tar", flatName(1)))
	_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(keep), Committed: seqOf(nil), ExportStart: t0},
		WithClock(fixedClock), WithTempDir(t.TempDir()))
	require.ErrorIs(t, err, ErrImplausibleMark)
	require.ErrorContains(t, err, "names 1200 keys this run could list other than young objects, and the listing found 0")
	requireFailedRun(t, b, "run1")
	sum, err := ReadSummary(ctx, b, DefaultStoragePrefix, "run1")
	require.NoError(t, err)
	require.Equal(t, int64(2), sum.NumUnrecognizedObjects)
	require.Equal(t, []string{"README.txt", "backup.tar"}, sum.UnrecognizedSample)
	// The unrecognized objects' report is there, to see what was listed.
	require.Equal(t, []string{"README.txt", "backup.tar"}, readUnrecognized(t, b, "run1"))
}

// canaryWorld writes n old objects in a slice and returns the bucket and
// their keys.
func canaryWorld(t *testing.T, n int) (*blob.Bucket, []string) {
	keys := canaryKeys(n)
	return oldBucket(t, keys), keys
}

// canaryKeys returns n keys of one old slice.
func canaryKeys(n int) []string {
	slice := descendingName(t0.Add(-100 * time.Hour))
	var keys []string
	for i := range n {
		keys = append(keys, "data/"+slice+"/"+objID(i))
	}
	return keys
}

// TestCanaryRuleA: of 2000 keep keys in scope, the listing finds found; the
// canary fires below 1 % (20), and not at it.
func TestCanaryRuleA(t *testing.T) {
	ctx := context.Background()
	slice := descendingName(t0.Add(-100 * time.Hour))
	var absent []string
	for i := range 2000 {
		absent = append(absent, "data/"+slice+"/"+objID(100000+i))
	}
	for _, tc := range []struct {
		found  int
		canary []MarkOption
		fires  bool
	}{
		{0, nil, true},
		{19, nil, true},
		{20, nil, false},
		{19, []MarkOption{WithCanary(Canary{MinFound: 0.005})}, false},
		{10, []MarkOption{WithCanary(Canary{MinFound: 0.005})}, false},
		{9, []MarkOption{WithCanary(Canary{MinFound: 0.005})}, true},
		{0, []MarkOption{WithCanary(Canary{MinKeep: 2001})}, false},
		{0, []MarkOption{WithCanary(Canary{Off: true})}, false},
	} {
		t.Run(fmt.Sprintf("found=%d/%v", tc.found, tc.canary != nil), func(t *testing.T) {
			keys := canaryKeys(100)
			// found of the keep keys are listed old, the rest absent; ten
			// more are listed young, and count in neither.
			keep := slices.Concat(keys[:tc.found], keys[90:], absent[:2000-tc.found])
			young := map[string]bool{}
			for _, k := range keys[90:] {
				young[k] = true
			}
			b := newTestBucket(writeKeys(t, keys), &testDriver{modTime: func(k string) time.Time {
				if young[k] {
					return t0
				}
				return monthOld
			}})
			slices.Sort(keep)
			sum, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(keep), Committed: seqOf(nil), ExportStart: t0},
				append([]MarkOption{WithClock(fixedClock), WithTempDir(t.TempDir())}, tc.canary...)...)
			if tc.fires {
				require.ErrorIs(t, err, ErrImplausibleMark)
				require.ErrorContains(t, err, fmt.Sprintf("names 2000 keys this run could list other than young objects, and the listing found %d of them", tc.found))
				requireFailedRun(t, b, "run1")
				return
			}
			require.NoError(t, err)
			require.Equal(t, int64(90-tc.found), sum.NumDeletedObjects)
		})
	}
}

// TestCanaryRuleB: a keep set of 1500 keys outside what the run lists (so
// rule A does not count them), and 1000 old objects of which kept are
// referenced: the canary fires when the candidates are 99 % of the listed
// objects or more.
func TestCanaryRuleB(t *testing.T) {
	ctx := context.Background()
	var elsewhere []string
	for i := range 1500 {
		elsewhere = append(elsewhere, fmt.Sprintf("repo1/data/x/%05d", i))
	}
	for _, tc := range []struct {
		kept   int
		canary []MarkOption
		fires  bool
	}{
		{0, nil, true},
		{10, nil, true},
		{11, nil, false},
		{0, []MarkOption{WithCanary(Canary{MaxMarked: 1})}, false},
		{0, []MarkOption{WithCanary(Canary{MinKeep: 1600})}, false},
		{0, []MarkOption{WithCanary(Canary{Off: true})}, false},
		{100, []MarkOption{WithCanary(Canary{MaxMarked: 0.9})}, true},
		{101, []MarkOption{WithCanary(Canary{MaxMarked: 0.9})}, false},
	} {
		t.Run(fmt.Sprintf("kept=%d/%v", tc.kept, tc.canary != nil), func(t *testing.T) {
			b, keys := canaryWorld(t, 1000)
			keep := slices.Concat(keys[:tc.kept], elsewhere)
			slices.Sort(keep)
			sum, err := Mark(ctx, b, "run1", Inputs{Uncommitted: seqOf(keep), Committed: seqOf(nil), ExportStart: t0},
				append([]MarkOption{WithClock(fixedClock), WithTempDir(t.TempDir())}, tc.canary...)...)
			if tc.fires {
				require.ErrorIs(t, err, ErrImplausibleMark)
				require.ErrorContains(t, err, fmt.Sprintf("%d candidates of 1000 recognized objects listed older than the cutoff", 1000-tc.kept))
				requireFailedRun(t, b, "run1")
				return
			}
			require.NoError(t, err)
			require.Equal(t, int64(1000-tc.kept), sum.NumDeletedObjects)
		})
	}
}

// TestCanaryCountsOnlyThisShard: the keep keys of other shards' slices are
// not this shard's to find.
func TestCanaryCountsOnlyThisShard(t *testing.T) {
	ctx := context.Background()
	var keys []string
	for s := range 8 {
		slice := descendingName(t0.Add(-time.Duration(100+s) * time.Hour))
		for i := range 300 {
			keys = append(keys, "data/"+slice+"/"+objID(i))
		}
	}
	slices.Sort(keys)
	b := oldBucket(t, keys)
	var marked int64
	for i := range 4 {
		sum, err := Mark(ctx, b, fmt.Sprint("shard-", i), Inputs{Uncommitted: seqOf(keys[:len(keys)*3/4]), Committed: seqOf(nil), ExportStart: t0},
			WithClock(fixedClock), WithTempDir(t.TempDir()), WithShard(i, 4))
		require.NoError(t, err)
		marked += sum.NumDeletedObjects
	}
	require.Equal(t, int64(len(keys)/4), marked)
}

// TestWallsWithInclude: the operator includes the whole data folder, where
// repositories are nested, one in a slice's folder whose marker sorts in
// the middle of its listing ('_' between digits and letters): nothing under
// a wall is marked, the rest of the data folder is.
func TestWallsWithInclude(t *testing.T) {
	ctx := context.Background()
	slice := descendingName(t0.Add(-100 * time.Hour))
	other := descendingName(t0.Add(-101 * time.Hour))
	walled := []string{
		"data/" + slice + "/0" + objID(1)[1:], "data/" + slice + "/_lakefs/dummy", "data/" + slice + "/" + objID(2),
		"data/" + slice + "/z", "data/inner/_lakefs/dummy", "data/inner/data/x", "data/inner/0", "data/imports/a/_lakefs/x",
		"data/imports/a/b",
	}
	free := []string{"data/" + other + "/" + objID(3), "data/imports/b", "data/inner0", "data/innerx/y", "data/imports/a0"}
	b := oldBucket(t, slices.Concat(walled, free))
	include := WithInclude("data/")
	sum, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()), include)
	require.NoError(t, err)
	slices.Sort(free)
	require.Equal(t, free, collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
	require.Equal(t, []string{"data/" + slice + "/", "data/imports/a/", "data/inner/"}, sum.Walls)
	require.Equal(t, int64(len(walled)), sum.NumWalledObjects)
	require.Zero(t, sum.NumUnrecognizedObjects)
	res, err := Sweep(ctx, b, "run1", include)
	require.NoError(t, err)
	require.Equal(t, int64(len(free)), res.Deleted)
	requireExist(t, b, walled)
}

// TestWallOfStoragePrefix: a configured storage prefix marks walls too.
func TestWallOfStoragePrefix(t *testing.T) {
	ctx := context.Background()
	b := oldBucket(t, []string{"data/a/meta/x", "data/a/b", "data/c/_lakefs/d", "data/c/e", "data/f"})
	sum, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()),
		WithInclude("data/"), WithStoragePrefix("meta"))
	require.NoError(t, err)
	require.Equal(t, []string{"data/a/", "data/c/"}, sum.Walls)
	require.Equal(t, []string{"data/f"}, collect(t, Candidates(ctx, b, "meta", "run1")))
}

// TestRecognizerOption: a host's recognizer replaces the default one, and
// Sweep refuses what it does not accept.
func TestRecognizerOption(t *testing.T) {
	ctx := context.Background()
	slice := descendingName(t0.Add(-100 * time.Hour))
	own := "data/" + slice + "/" + objID(1)
	b := oldBucket(t, []string{own, "data/host/obj-1", "data/host/obj-2", "data/other"})
	rec := func(k string) bool { return strings.HasPrefix(k, "data/host/obj-") || DefaultRecognizer("")(k) }
	sum, err := Mark(ctx, b, "run1", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()), WithRecognizer(rec))
	require.NoError(t, err)
	require.Equal(t, []string{own, "data/host/obj-1", "data/host/obj-2"}, collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
	require.Equal(t, int64(1), sum.NumUnrecognizedObjects)
	// Swept without the host's recognizer, its keys are refused.
	res, err := Sweep(ctx, b, "run1")
	require.NoError(t, err)
	require.Equal(t, Result{Deleted: 1, Refused: 2}, *res)
	res, err = Sweep(ctx, b, "run1", WithRecognizer(rec))
	require.NoError(t, err)
	require.Equal(t, Result{Deleted: 2, AlreadyGone: 1}, *res)
}

// TestSweepRefusesUnrecognizedUnlessIncluded: a hand-written report naming
// an unrecognized key is refused, unless the operator includes its prefix.
func TestSweepRefusesUnrecognizedUnlessIncluded(t *testing.T) {
	ctx := context.Background()
	keys := []string{"README.txt", "data/imports/x.csv"}
	for _, include := range []bool{false, true} {
		b := memblob.OpenBucket(nil)
		for _, k := range keys {
			require.NoError(t, b.WriteAll(ctx, k, []byte("x"), nil))
		}
		writeRun(t, b, "run1", t0, keys)
		var opts []MarkOption
		if include {
			opts = append(opts, WithInclude("README.txt", "data/imports/"))
		}
		res, err := Sweep(ctx, b, "run1", sweepOpts(opts)...)
		require.NoError(t, err)
		if include {
			require.Equal(t, Result{Deleted: 2}, *res)
			continue
		}
		require.Equal(t, Result{Refused: 2}, *res)
		failed := readFailed(t, b, "run1")
		for _, k := range keys {
			require.Equal(t, "refused: unrecognized key", failed[k])
		}
		requireExist(t, b, keys)
	}
}

func TestIdentifyOptionsValidated(t *testing.T) {
	for _, opts := range [][]MarkOption{
		{WithInclude("")},
		{WithInclude("/data/x")},
		{WithInclude("s3://bucket/data/")},
		{WithInclude("file:/srv/lake/data/")}, // a full address in the file adapters' spelling
		{WithInclude("_lakefs/x")},
		{WithInclude("_lak")},
		{WithInclude("data/", "_lakefs")},
		{WithInclude("meta/"), WithStoragePrefix("meta")},
		{WithCanary(Canary{MinKeep: -1})},
		{WithCanary(Canary{MinFound: -0.1})},
		{WithCanary(Canary{MinFound: 1.5})},
		{WithCanary(Canary{MaxMarked: -1})},
	} {
		err := CheckOptions(Options{Mark: opts}, Options{})
		require.ErrorIs(t, err, ErrInvalidInput)
		_, err = Mark(context.Background(), memblob.OpenBucket(nil), "run1", noInputs(), opts...)
		require.ErrorIs(t, err, ErrInvalidInput)
	}
	require.NoError(t, CheckOptions(Options{Mark: []MarkOption{WithInclude("data/x/", "top-", "_lakefs2/"), WithCanary(Canary{MaxMarked: 2})}}, Options{}))
}

// TestOptimizedRunAfterRecognizerChange: a run whose include list or
// recognizer differs from the previous run's runs clean, and a carried key
// must pass the current recognizer.
func TestOptimizedRunAfterRecognizerChange(t *testing.T) {
	ctx := context.Background()
	slice := descendingName(t0.Add(-200 * time.Hour))
	recent := "data/" + descendingName(t0.Add(-30*time.Hour)) + "/" + objID(9) // kept: the newest listed slice
	own := "data/" + slice + "/" + objID(1)
	host := "data/" + slice + "/host-1"
	b := oldBucket(t, []string{own, host, recent})
	all := Inputs{Uncommitted: seqOf([]string{own, host, recent}), Committed: seqOf(nil), ExportStart: t0}
	none := Inputs{Uncommitted: seqOf([]string{recent}), Committed: seqOf(nil), ExportStart: t0.Add(time.Hour)}
	clock := func(d time.Duration) MarkOption { return WithClock(func() time.Time { return t0.Add(d) }) }
	mark := func(id string, in Inputs, opts ...MarkOption) *Summary {
		t.Helper()
		sum, err := Mark(ctx, b, id, in, append(opts, WithTempDir(t.TempDir()))...)
		require.NoError(t, err)
		return sum
	}
	mark("prev", all, clock(0), WithInclude("data/"+slice+"/host-"))
	st, err := readState(ctx, b, reportDir(DefaultStoragePrefix, "prev"))
	require.NoError(t, err)
	require.Equal(t, []string{"data/" + slice + "/host-"}, st.Include)
	require.Equal(t, int64(3), st.LiveKeys)

	sum := mark("next", none, clock(time.Hour), WithPrevious("prev"))
	require.Equal(t, RunClean, sum.RunKind)
	require.Contains(t, sum.CleanReason, "include prefixes")
	require.Equal(t, []string{own}, collect(t, Candidates(ctx, b, DefaultStoragePrefix, "next")))

	// Same include list: optimized; the slice is judged from the records.
	sum = mark("next2", none, clock(time.Hour), WithPrevious("prev"), WithInclude("data/"+slice+"/host-"))
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Equal(t, int64(1), sum.SlicesSkipped)
	require.Equal(t, []string{own, host}, collect(t, Candidates(ctx, b, DefaultStoragePrefix, "next2")))

	// Custom recognizers on both sides: optimized, and the carried keys pass
	// the current one.
	mark("prev3", all, clock(0), WithRecognizer(func(string) bool { return true }))
	sum = mark("next3", none, clock(time.Hour), WithPrevious("prev3"), WithRecognizer(DefaultRecognizer("data")))
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Equal(t, int64(1), sum.SlicesSkipped)
	require.Equal(t, []string{own}, collect(t, Candidates(ctx, b, DefaultStoragePrefix, "next3")))
}

// TestSummaryListsAreBounded: the sample and the walls stay small whatever
// the keys.
func TestSummaryListsAreBounded(t *testing.T) {
	var u unrecognized
	var want []string
	for i := range 100 {
		k := fmt.Sprintf("k%03d", 99-i)
		u.addSample(k)
		want = append(want, k)
	}
	u.addSample(strings.Repeat("a", maxListedKey+1))
	slices.Sort(want)
	require.Equal(t, want[:maxSample], u.sample)
	long := []string{strings.Repeat("b", maxListedKey+1), "c"}
	require.Equal(t, []string{"c"}, capList(long))
	require.Len(t, capList(want), maxSample)
}

// TestCanaryQuietOnHealthyRuns: a fresh repository whose objects are all
// young, and an optimized run that judges most of the keep set from the
// previous run's records, both with keep sets large enough to judge: the
// canary stays quiet.
func TestCanaryQuietOnHealthyRuns(t *testing.T) {
	ctx := context.Background()
	fresh := canaryKeys(2000)
	b := newTestBucket(writeKeys(t, fresh), &testDriver{modTime: func(string) time.Time { return t0 }})
	sum, err := Mark(ctx, b, "fresh", Inputs{Uncommitted: seqOf(fresh), Committed: seqOf(nil), ExportStart: t0},
		WithClock(fixedClock), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	require.Zero(t, sum.NumDeletedObjects)
	require.Equal(t, int64(len(fresh)), sum.NumYoungObjects)

	var keys []string
	older, recent := descendingName(t0.Add(-200*time.Hour)), descendingName(t0.Add(-30*time.Hour))
	for i := range 3000 {
		slice := older
		if i%3 == 0 {
			slice = recent
		}
		keys = append(keys, "data/"+slice+"/"+objID(i))
	}
	slices.Sort(keys)
	b = oldBucket(t, keys)
	keep := slices.Clone(keys[10:])
	mark := func(id string, d time.Duration, opts ...MarkOption) *Summary {
		sum, err := Mark(ctx, b, id, Inputs{Uncommitted: seqOf(keep), Committed: seqOf(nil), ExportStart: t0.Add(d)},
			append(opts, WithClock(func() time.Time { return t0.Add(d) }), WithTempDir(t.TempDir()))...)
		require.NoError(t, err)
		return sum
	}
	require.Equal(t, int64(10), mark("prev", 0).NumDeletedObjects)
	sum = mark("next", time.Hour, WithPrevious("prev"))
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Equal(t, int64(1), sum.SlicesSkipped)
	require.Equal(t, int64(10), sum.NumDeletedObjects)
}
