package uncommitted_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

const runPrefix = "_lakefs/retention/gc/uncommitted/"

// drain reads seq to its end or its first error, and returns what was
// yielded before.
func drain[T any](seq iter.Seq2[T, error]) (got []T, err error) {
	for v, err := range seq {
		if err != nil {
			return got, err
		}
		got = append(got, v)
	}
	return got, nil
}

// completeRun exports src to its end in files of about budget bytes and
// returns the run ID and the addresses exported.
func completeRun(t *testing.T, bucket *blob.Bucket, src *memSource, budget int64) (string, []string) {
	t.Helper()
	ctx := context.Background()
	p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(budget))
	runID, _ := runToEnd(t, ctx, p, bucket, src, nil, src.size()+2)
	var want []string
	for _, r := range readAll(t, ctx, bucket, runID) {
		want = append(want, r.PhysicalAddress)
	}
	return runID, want
}

func writeParquet(t *testing.T, bucket *blob.Bucket, key string, rows ...uncommitted.Row) {
	t.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if err := bucket.WriteAll(context.Background(), key, buf.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestAddressesAbsentRun: a run ID or storage prefix that names no run is
// an error, not an empty export, with or without AllowUnverified.
func TestAddressesAbsentRun(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	runID, _ := completeRun(t, bucket, bigSource(2, 10), 1<<10)
	if err := bucket.WriteAll(ctx, runPrefix+"markers-only/uncommitted/_SUCCESS", nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ prefix, runID string }{
		{"_lakefs", runID[:len(runID)-1] + "x"},
		{"lakefs", runID},
		{"_lakefs/_lakefs", runID},
		{"_lakefs", "markers-only"},
	} {
		for _, opts := range [][]uncommitted.ReadOption{nil, {uncommitted.AllowUnverified()}} {
			got, err := drain(uncommitted.Addresses(ctx, bucket, c.prefix, c.runID, opts...))
			if !errors.Is(err, uncommitted.ErrNoRun) || len(got) != 0 {
				t.Errorf("prefix %q, run %q, %d options: %v, %v; want ErrNoRun", c.prefix, c.runID, len(opts), got, err)
			}
		}
	}
	// "" is DefaultStoragePrefix, as everywhere.
	if got, err := drain(uncommitted.Addresses(ctx, bucket, "", runID)); err != nil || len(got) == 0 {
		t.Errorf(`prefix "": %d addresses, %v; want the run under %q`, len(got), err, uncommitted.DefaultStoragePrefix)
	}
	if got := uncommitted.Location("s3://b/ns", "", "r"); got != "s3://b/ns/_lakefs/retention/gc/uncommitted/r/uncommitted/" {
		t.Errorf(`Location with prefix "" = %q`, got)
	}
}

// TestAddressesUnfinishedRun: a host that stops its Prepare loop early has
// no manifest: reading the run fails before any address, unless the host
// vouches for it with AllowUnverified.
func TestAddressesUnfinishedRun(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	src := bigSource(2, 100)
	p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(1<<10))
	first, err := p.Prepare(ctx, repo, src, nil)
	if err != nil || first.Checkpoint == nil {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	got, err := drain(uncommitted.Addresses(ctx, bucket, "_lakefs", first.RunID))
	if !errors.Is(err, uncommitted.ErrIncomplete) || len(got) != 0 {
		t.Fatalf("after the first page: %d addresses, %v; want none and ErrIncomplete", len(got), err)
	}
	got, err = drain(uncommitted.Addresses(ctx, bucket, "_lakefs", first.RunID, uncommitted.AllowUnverified()))
	if err != nil || int64(len(got)) != first.Rows {
		t.Fatalf("unverified: %d addresses, %v; want the first page's %d", len(got), err, first.Rows)
	}
	runToEnd(t, ctx, p, bucket, src, first.Checkpoint, src.size())
	if got, err = drain(uncommitted.Addresses(ctx, bucket, "_lakefs", first.RunID)); err != nil || len(got) != 200 {
		t.Fatalf("complete: %d addresses, %v; want 200", len(got), err)
	}
}

// editManifest rewrites the manifest of a run through a JSON map.
func editManifest(t *testing.T, bucket *blob.Bucket, runID string, edit func(m map[string]any)) {
	t.Helper()
	ctx := context.Background()
	key := runPrefix + runID + "/uncommitted/" + uncommitted.ManifestName
	data, err := bucket.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := bucket.WriteAll(ctx, key, data, nil); err != nil {
		t.Fatal(err)
	}
}

// TestAddressesChangedRun: a folder that differs from its manifest is
// refused before any address is yielded.
func TestAddressesChangedRun(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		change func(t *testing.T, bucket *blob.Bucket, folder string, files []string)
		// unverified: the change removes the manifest, so
		// AllowUnverified reads the files.
		unverified bool
	}{
		{name: "file added", change: func(t *testing.T, b *blob.Bucket, folder string, _ []string) {
			writeParquet(t, b, folder+"part-extra", uncommitted.Row{PhysicalAddress: "data/x"})
		}},
		{name: "file in a subfolder added", change: func(t *testing.T, b *blob.Bucket, folder string, _ []string) {
			writeParquet(t, b, folder+"sub/part-0", uncommitted.Row{PhysicalAddress: "data/x"})
		}},
		{name: "file removed", change: func(t *testing.T, b *blob.Bucket, folder string, files []string) {
			if err := b.Delete(ctx, folder+files[len(files)-1]); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "file replaced", change: func(t *testing.T, b *blob.Bucket, folder string, files []string) {
			writeParquet(t, b, folder+files[len(files)-1], uncommitted.Row{PhysicalAddress: "data/x"})
		}},
		{name: "row count of a file", change: func(t *testing.T, b *blob.Bucket, folder string, files []string) {
			editManifest(t, b, strings.Split(folder, "/")[4], func(m map[string]any) {
				f := m["files"].([]any)[0].(map[string]any)
				f["rows"] = f["rows"].(float64) + 1
				m["rows"] = m["rows"].(float64) + 1
			})
		}},
		{name: "total rows", change: func(t *testing.T, b *blob.Bucket, folder string, _ []string) {
			editManifest(t, b, strings.Split(folder, "/")[4], func(m map[string]any) { m["rows"] = m["rows"].(float64) - 1 })
		}},
		{name: "manifest of another run", change: func(t *testing.T, b *blob.Bucket, folder string, _ []string) {
			editManifest(t, b, strings.Split(folder, "/")[4], func(m map[string]any) { m["run_id"] = "other" })
		}},
		{name: "manifest damaged", change: func(t *testing.T, b *blob.Bucket, folder string, _ []string) {
			if err := b.WriteAll(ctx, folder+uncommitted.ManifestName, []byte(`{"format":`), nil); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "manifest too large", change: func(t *testing.T, b *blob.Bucket, folder string, _ []string) {
			if err := b.WriteAll(ctx, folder+uncommitted.ManifestName, bytes.Repeat([]byte(" "), uncommitted.MaxManifestSize+1), nil); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "manifest removed", unverified: true, change: func(t *testing.T, b *blob.Bucket, folder string, _ []string) {
			if err := b.Delete(ctx, folder+uncommitted.ManifestName); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			runID, want := completeRun(t, bucket, bigSource(2, 200), 2<<10)
			folder := runPrefix + runID + "/uncommitted/"
			var files []string
			for _, k := range listKeys(t, bucket) {
				if name := strings.TrimPrefix(k, folder); !strings.HasPrefix(name, "_") {
					files = append(files, name)
				}
			}
			if len(files) < 3 {
				t.Fatalf("%d files, want several", len(files))
			}
			c.change(t, bucket, folder, files)
			got, err := drain(uncommitted.Addresses(ctx, bucket, "_lakefs", runID))
			if !errors.Is(err, uncommitted.ErrIncomplete) || len(got) != 0 {
				t.Fatalf("%d addresses, then %v; want none and ErrIncomplete", len(got), err)
			}
			got, err = drain(uncommitted.Addresses(ctx, bucket, "_lakefs", runID, uncommitted.AllowUnverified()))
			if c.unverified {
				slices.Sort(got)
				slices.Sort(want)
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("AllowUnverified: %d addresses, %v; want %d", len(got), err, len(want))
				}
			} else if !errors.Is(err, uncommitted.ErrIncomplete) || len(got) != 0 {
				t.Fatalf("AllowUnverified: %d addresses, then %v; want none and ErrIncomplete", len(got), err)
			}
		})
	}
}

// TestManifestRecordsRun: the manifest names every data file of the run,
// with the rows of its footer and its size, and every run has one.
func TestManifestRecordsRun(t *testing.T) {
	ctx := context.Background()
	for _, entries := range []int{0, 1, 700} {
		bucket := memblob.OpenBucket(nil)
		defer bucket.Close()
		src := bigSource(1, entries)
		p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(2<<10))
		var mark *uncommitted.Checkpoint
		var runID string
		var rows int64
		for {
			res, err := p.Prepare(ctx, repo, src, mark)
			if err != nil {
				t.Fatal(err)
			}
			runID, rows, mark = res.RunID, rows+res.Rows, res.Checkpoint
			if mark == nil {
				break
			}
		}
		folder := runPrefix + runID + "/uncommitted/"
		data, err := bucket.ReadAll(ctx, folder+uncommitted.ManifestName)
		if err != nil {
			t.Fatalf("%d entries: %v", entries, err)
		}
		var m struct {
			RunID string `json:"run_id"`
			Rows  int64  `json:"rows"`
			Files []struct {
				Name       string
				Rows, Size int64
			} `json:"files"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		if m.RunID != runID || m.Rows != rows || m.Rows != int64(entries) {
			t.Fatalf("%d entries: manifest %s", entries, data)
		}
		var listed []string
		for _, k := range listKeys(t, bucket) {
			if k != folder+uncommitted.ManifestName {
				listed = append(listed, k)
			}
		}
		if len(listed) != len(m.Files) {
			t.Fatalf("%d entries: %d files listed, %d in the manifest", entries, len(listed), len(m.Files))
		}
		for i, f := range m.Files {
			data, err := bucket.ReadAll(ctx, folder+f.Name)
			if err != nil || listed[i] != folder+f.Name {
				t.Fatalf("%d entries: file %q: %v", entries, f.Name, err)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
			if err != nil || pf.NumRows() != f.Rows || int64(len(data)) != f.Size {
				t.Fatalf("%d entries: %s has %d rows and %d bytes, the manifest says %d and %d", entries, f.Name, pf.NumRows(), len(data), f.Rows, f.Size)
			}
		}
	}
}

// TestPrepareReplayedMarkInvalidatesManifest: a call of a complete run
// (a host replaying an old mark) removes the manifest, so the run reads as
// incomplete until it completes again; the replayed call replaces its file.
func TestPrepareReplayedMarkInvalidatesManifest(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	src := bigSource(2, 100)
	p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(1<<10))
	first, err := p.Prepare(ctx, repo, src, nil)
	if err != nil || first.Checkpoint == nil {
		t.Fatalf("%+v, %v", first, err)
	}
	runToEnd(t, ctx, p, bucket, src, first.Checkpoint, src.size())
	if _, err := drain(uncommitted.Addresses(ctx, bucket, "_lakefs", first.RunID)); err != nil {
		t.Fatal(err)
	}
	again, err := p.Prepare(ctx, repo, src, first.Checkpoint)
	if err != nil || again.Checkpoint == nil {
		t.Fatalf("replay: %+v, %v", again, err)
	}
	if _, err := drain(uncommitted.Addresses(ctx, bucket, "_lakefs", first.RunID)); !errors.Is(err, uncommitted.ErrIncomplete) {
		t.Fatalf("after a replayed call: %v, want ErrIncomplete", err)
	}
	runToEnd(t, ctx, p, bucket, src, again.Checkpoint, src.size())
	got, err := drain(uncommitted.Addresses(ctx, bucket, "_lakefs", first.RunID))
	slices.Sort(got)
	if err != nil || len(got) != 200 || len(slices.Compact(got)) != 200 {
		t.Fatalf("complete again: %d addresses, %v; want 200 distinct", len(got), err)
	}
}

// TestReadRunSkipsHiddenFolders: files under a path element starting with
// '_' or '.' (Spark's and Hadoop's temporary folders) are not the run's,
// with a manifest or without.
func TestReadRunSkipsHiddenFolders(t *testing.T) {
	ctx := context.Background()
	hidden := []string{"_temporary/0/part-1", ".spark-staging-1/part-2", "sub/_tmp/part-3", "sub/.hidden/part-4"}
	stray := uncommitted.Row{PhysicalAddress: "data/stray"}

	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	runID, want := completeRun(t, bucket, bigSource(1, 50), 1<<10)
	for _, h := range hidden {
		writeParquet(t, bucket, runPrefix+runID+"/uncommitted/"+h, stray)
	}
	got, err := drain(uncommitted.Addresses(ctx, bucket, "_lakefs", runID))
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("with a manifest: %d addresses, %v; want the run's %d", len(got), err, len(want))
	}

	lakeFS := memblob.OpenBucket(nil) // a run as lakeFS writes it
	defer lakeFS.Close()
	writeParquet(t, lakeFS, runPrefix+"r1/uncommitted/part-0", uncommitted.Row{PhysicalAddress: "data/a"})
	for _, h := range hidden {
		writeParquet(t, lakeFS, runPrefix+"r1/uncommitted/"+h, stray)
	}
	got, err = drain(uncommitted.Addresses(ctx, lakeFS, "_lakefs", "r1", uncommitted.AllowUnverified()))
	if err != nil || !slices.Equal(got, []string{"data/a"}) {
		t.Fatalf("without a manifest: %q, %v; want [data/a]", got, err)
	}
}

// TestPrepareRemovesManifestBeforeWriting: a call of a complete run (a
// replayed mark) removes the manifest before it writes, so that a call
// that dies after its write leaves no manifest. Here the replay's file has
// the size and row count of the file it replaces but stops earlier (new
// entries were staged before it): a manifest left in place would verify,
// and the rows between the two stops would be in no file.
func TestPrepareRemovesManifestBeforeWriting(t *testing.T) {
	ctx := context.Background()
	base := memblob.OpenBucket(nil)
	defer base.Close()
	src := newMemSource()
	for i := range 300 {
		src.add("main", uncommitted.Entry{Key: fmt.Sprintf("k%03d", i), PhysicalAddress: fmt.Sprintf("data/a%03d", i)})
	}
	opts := []uncommitted.Option{
		uncommitted.WithRunID(func() string { return "r1" }),
		uncommitted.WithMaxFileSize(1 << 10),
		uncommitted.WithCompression(&parquet.Uncompressed), // sizes depend on row counts only
	}
	p := newPreparer(t, base, opts...)
	first, err := p.Prepare(ctx, repo, src, nil)
	if err != nil || first.Checkpoint == nil {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	runToEnd(t, ctx, p, base, src, first.Checkpoint, src.size())
	want, err := drain(uncommitted.Addresses(ctx, base, "_lakefs", "r1"))
	if err != nil || len(want) != 300 {
		t.Fatalf("complete: %d addresses, %v", len(want), err)
	}

	for i := range 5 {
		src.add("main", uncommitted.Entry{Key: fmt.Sprintf("j%03d", i), PhysicalAddress: fmt.Sprintf("data/b%03d", i)})
	}
	// The replay's write commits, and the call dies right after it.
	dies := newPreparer(t, newFlakyBucket(base, func(key string) bool { return !strings.HasSuffix(key, uncommitted.ManifestName) }), opts...)
	if _, err := dies.Prepare(ctx, repo, src, nil); !errors.Is(err, errAmbiguous) {
		t.Fatalf("replay: %v, want it to fail after its write", err)
	}
	folder := runPrefix + "r1/uncommitted/"
	if a, err := base.Attributes(ctx, folder+first.Filename); err != nil || a.Size == 0 {
		t.Fatalf("the replay's file: %v", err)
	}
	got, err := drain(uncommitted.Addresses(ctx, base, "_lakefs", "r1"))
	if !errors.Is(err, uncommitted.ErrIncomplete) {
		slices.Sort(got)
		var lost []string
		for _, a := range want {
			if _, ok := slices.BinarySearch(got, a); !ok {
				lost = append(lost, a)
			}
		}
		t.Fatalf("after a replay that died: %d addresses, %v, missing %q; want ErrIncomplete", len(got), err, lost)
	}
}
