package inventory

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// The model test: random namespaces on a local store (fileblob, whose
// listing gives each file's modification time, which the test sets),
// churned after a report is taken, marked twice on the same store state:
// listing every slice, and taking the older ones from an S3 Inventory
// report written as S3 writes it. The exact equality it checks:
//
//	candidates(inventory) = candidates(LIST) ∪ gone
//
// where gone are the objects the report names that were deleted after it,
// in the slices taken from the report (started before the report's time
// less the slice margin, and before the cutoff), recognized, older than
// the cutoff, in no keep set and in no other repository's folder: the
// candidates a report may add, all already gone, so that deleting them is
// a no-op. And never a live key: no candidate is in the keep set or young
// in the store. The counts of the summaries differ by the gone objects'
// only, and the shards of an inventory run are disjoint and make up the
// whole run.

const (
	modelMinAge = 24 * time.Hour
	modelMargin = sweep.DefaultSliceInterval + sweep.DefaultLinkTTL + sweep.DefaultClockSkew
)

type modelObject struct {
	key     string
	mod     time.Time
	slice   time.Time // zero: not in a slice
	plain   bool      // data/<slice>/<xid>, in no wall
	walled  bool
	gone    bool // deleted after the report
	kept    bool
	foreign bool // never recognized
}

type namespaceModel struct {
	now, report, cutoff time.Time
	objects             []*modelObject
	keepExtra           []string // keep keys of no object
}

func newModel(rng *rand.Rand) *namespaceModel {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	m := &namespaceModel{
		now:    now,
		report: now.Add(-time.Hour - time.Duration(rng.Int64N(int64(7*24*time.Hour)))).Truncate(time.Millisecond),
		cutoff: now.Add(-modelMinAge - sweep.DefaultClockSkew - sweep.StagingMargin),
	}
	add := func(o *modelObject) {
		if !o.mod.After(m.now) {
			m.objects = append(m.objects, o)
		}
	}
	randMod := func(from time.Time, span time.Duration) time.Time {
		return from.Add(time.Duration(rng.Int64N(int64(span)))).Truncate(time.Second)
	}
	for range 6 + rng.IntN(14) {
		start := now.Add(-time.Duration(rng.Int64N(int64(10 * 24 * time.Hour)))).Truncate(time.Second)
		name := layout.DescendingID(start).String()
		wall := rng.IntN(8) == 0
		if wall {
			add(&modelObject{key: "data/" + name + "/_lakefs/dummy", mod: randMod(start, time.Hour), slice: start, foreign: true})
		}
		for range rng.IntN(16) {
			mod := randMod(start, modelMargin-time.Minute)
			o := &modelObject{key: "data/" + name + "/" + xid.NewWithTime(mod).String(), mod: mod, slice: start, plain: !wall, walled: wall}
			o.kept = rng.IntN(2) == 0
			o.gone = !wall && o.mod.Before(m.report) && rng.IntN(6) == 0
			add(o)
		}
		if rng.IntN(3) == 0 { // unrecognized, with bytes the CSV must encode
			add(&modelObject{key: "data/" + name + "/a b+c%2B,\"é", mod: randMod(start, time.Hour), slice: start, foreign: true})
		}
		if rng.IntN(5) == 0 { // another repository below the slice
			add(&modelObject{key: "data/" + name + "/sub/_lakefs/x", mod: randMod(start, time.Hour), slice: start, foreign: true})
			add(&modelObject{key: "data/" + name + "/sub/" + xid.NewWithTime(start).String(), mod: randMod(start, time.Hour), slice: start, foreign: true})
		}
	}
	// What lies outside the slices: the flat layout's objects, loose
	// objects under data/, a folder that is no slice, foreign files.
	for range rng.IntN(5) {
		mod := randMod(now.Add(-20*24*time.Hour), 20*24*time.Hour)
		add(&modelObject{key: fmt.Sprintf("%032x", rng.Uint64()), mod: mod, kept: rng.IntN(2) == 0})
		add(&modelObject{key: "data/" + xid.NewWithTime(mod).String(), mod: mod})
		add(&modelObject{key: "data/notaslice/" + xid.NewWithTime(mod).String(), mod: mod, kept: rng.IntN(2) == 0})
		add(&modelObject{key: "README " + xid.New().String(), mod: mod, foreign: true})
	}
	for range rng.IntN(4) {
		m.keepExtra = append(m.keepExtra, "data/"+layout.DescendingID(m.now.Add(-72*time.Hour)).String()+"/"+xid.New().String())
	}
	return m
}

// fromReport is whether the object lies in a slice Mark takes from the
// report.
func (m *namespaceModel) fromReport(o *modelObject) bool {
	return !o.slice.IsZero() && o.slice.Before(m.cutoff) && o.slice.Before(m.report.Add(-modelMargin))
}

// write writes the store's state now: every object not gone.
func (m *namespaceModel) write(t *testing.T, dir string) {
	for _, o := range m.objects {
		if o.gone {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(o.key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(o.key), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, o.mod, o.mod); err != nil {
			t.Fatal(err)
		}
	}
}

// reportRows are the rows of a report taken at m.report of the bucket
// "src", whose namespace is under "ns/": every object that existed then,
// versions that are not current, and objects of the bucket outside the
// namespace.
func (m *namespaceModel) reportRows(rng *rand.Rand, root string) []s3Row {
	var rows []s3Row
	for _, o := range m.objects {
		if !o.mod.After(m.report) {
			rows = append(rows, s3Row{Key: root + "ns/" + o.key, Size: int64(len(o.key)), Mod: o.mod})
		}
	}
	for range 3 {
		mod := m.report.Add(-48 * time.Hour).Truncate(time.Second)
		garbage := "ns/data/" + layout.DescendingID(mod).String() + "/" + xid.NewWithTime(mod).String()
		rows = append(rows,
			s3Row{Key: root + garbage, Size: 1, Mod: mod, Noncurr: true},
			s3Row{Key: root + garbage + "x", Mod: mod, DelMarker: true},
			s3Row{Key: root + "other/" + garbage, Size: 1, Mod: mod},
			s3Row{Key: root + "ns" + garbage, Size: 1, Mod: mod})
	}
	rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return rows
}

func (m *namespaceModel) inputs() sweep.Inputs {
	var unc, com []string
	for i, o := range m.objects {
		if o.kept {
			if i%3 == 0 {
				unc = append(unc, o.key)
			} else {
				com = append(com, o.key)
			}
		}
	}
	com = append(com, m.keepExtra...)
	return sweep.Inputs{Uncommitted: seq(unc), Committed: seq(com), ExportStart: m.now}
}

func seq(keys []string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, k := range keys {
			if !yield(k, nil) {
				return
			}
		}
	}
}

func candidates(t *testing.T, bucket *blob.Bucket, run string) []string {
	t.Helper()
	var out []string
	for k, err := range sweep.Candidates(context.Background(), bucket, "_lakefs", run) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestModelInventoryMatchesList(t *testing.T) {
	seeds := 16
	if testing.Short() {
		seeds = 6
	}
	for seed := range seeds {
		kind := []string{"s3", "azure", "gcs"}[seed/2%3]
		format := []string{"CSV", "Parquet"}[seed%2]
		if kind == "gcs" {
			format = "CSV" // GCS's Parquet is not read yet
		}
		t.Run(fmt.Sprintf("seed%d-%s-%s", seed, kind, format), func(t *testing.T) {
			checkModel(t, uint64(seed), kind, format)
		})
	}
}

func checkModel(t *testing.T, seed uint64, kind, format string) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 29))
	m := newModel(rng)
	dir := t.TempDir()
	m.write(t, filepath.Join(dir, "src", "ns"))
	store, err := fileblob.OpenBucket(filepath.Join(dir, "src", "ns"), &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dest := memblob.OpenBucket(nil)
	defer dest.Close()
	var open func() (*Report, error)
	clock := WithClock(func() time.Time { return m.now })
	if kind == "s3" {
		mkey := writeS3(t, dest, "inv/", s3Report{Source: "src", Time: m.report, Format: format, Files: 1 + rng.IntN(3), Rows: m.reportRows(rng, ""), Version: true})
		open = func() (*Report, error) { return OpenS3(ctx, dest, mkey, "s3://src/ns", clock) }
	} else if kind == "gcs" {
		mkey := writeGCS(t, dest, gcsReport{Source: "src", Time: m.report, Files: 1 + rng.IntN(3), Rows: m.reportRows(rng, ""), Count: -1, Shards: -1})
		open = func() (*Report, error) { return OpenGCS(ctx, dest, mkey, "gs://src/ns", clock) }
	} else {
		rows := m.reportRows(rng, "src/")
		mkey := writeAzure(t, dest, azReport{Account: "acct", Time: m.report, Format: strings.ToLower(format), Files: 1 + rng.IntN(3), Rows: rows, Prefix: []string{"src"}, Count: -1})
		open = func() (*Report, error) {
			return OpenAzure(ctx, dest, mkey, "https://acct.blob.core.windows.net/src/ns", clock)
		}
	}

	opts := func(more ...sweep.MarkOption) []sweep.MarkOption {
		return append([]sweep.MarkOption{sweep.WithClock(func() time.Time { return m.now }), sweep.WithTempDir(t.TempDir())}, more...)
	}
	runL, runI := xid.New().String(), xid.New().String()
	sumL, err := sweep.Mark(ctx, store, runL, m.inputs(), opts()...)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := open()
	if err != nil {
		t.Fatal(err)
	}
	sumI, err := sweep.Mark(ctx, store, runI, m.inputs(), opts(sweep.WithInventory(rep))...)
	if err != nil {
		t.Fatal(err)
	}
	candL, candI := candidates(t, store, runL), candidates(t, store, runI)

	want := slices.Clone(candL)
	var goneYoung, goneKept int64
	for _, o := range m.objects {
		if !o.gone || !o.plain || !m.fromReport(o) {
			continue
		}
		switch {
		case !o.mod.Before(m.cutoff):
			goneYoung++
		case o.kept:
			goneKept++
		default:
			want = append(want, o.key)
		}
	}
	slices.Sort(want)
	if !slices.Equal(candI, want) {
		t.Fatalf("report at %v (cutoff %v): inventory candidates\n%q\nwant LIST's and the gone ones\n%q\n%+v\n%+v", m.report, m.cutoff, candI, want, sumI, sumL)
	}
	live := map[string]bool{}
	for _, k := range m.keepExtra {
		live[k] = true
	}
	for _, o := range m.objects {
		if o.kept || !o.gone && !o.mod.Before(m.cutoff) {
			live[o.key] = true
		}
	}
	for _, k := range candI {
		if live[k] {
			t.Fatalf("live key %q marked", k)
		}
	}
	unrecognized := sumL.NumUnrecognizedObjects
	if kind == "gcs" { // OpenGCS skips names with a '%'
		for _, o := range m.objects {
			if strings.Contains(o.key, "%") && !o.gone && m.fromReport(o) && !o.mod.After(m.report) {
				unrecognized--
			}
		}
	}
	if sumI.NumUnrecognizedObjects != unrecognized || sumI.NumWalledObjects != sumL.NumWalledObjects ||
		sumI.NumYoungObjects != sumL.NumYoungObjects+goneYoung || sumI.NumKeptObjects != sumL.NumKeptObjects+goneKept {
		t.Fatalf("summaries: inventory %+v, LIST %+v, gone young %d, kept %d", sumI, sumL, goneYoung, goneKept)
	}
	wantTime := m.report.Truncate(time.Second)
	if kind == "s3" {
		wantTime = m.report.Truncate(time.Minute) // the folder's name
	}
	if sumI.InventorySource != rep.Source() || !sumI.InventoryTime.Equal(wantTime) || sumI.InventoryObjects == 0 {
		t.Fatalf("summary says inventory %q at %v, %d objects", sumI.InventorySource, sumI.InventoryTime, sumI.InventoryObjects)
	}

	// Shards of an inventory run: disjoint, and together the run.
	var union []string
	for i := range 3 {
		run := xid.New().String()
		if _, err := sweep.Mark(ctx, store, run, m.inputs(), opts(sweep.WithInventory(rep), sweep.WithShard(i, 3))...); err != nil {
			t.Fatal(err)
		}
		union = append(union, candidates(t, store, run)...)
	}
	slices.Sort(union)
	if !slices.Equal(union, candI) {
		t.Fatalf("shards' candidates %q, the whole run's %q", union, candI)
	}
}
