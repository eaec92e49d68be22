package lakegc_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// gcTime is when the tests' GC runs.
var gcTime = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// world is a repository whose GC has a known answer: a host, its bucket (a
// directory, so objects can be dated) and which objects are garbage.
type world struct {
	t       *testing.T
	dir     string
	bucket  *blob.Bucket
	ns      string
	host    *memHost
	garbage map[string]string // key → why it is garbage
	live    map[string]string // key → why it is live
}

// newWorld builds the repository:
//
//   - main: c1 (60 days old), c2 (50), c3 (1); main keeps 30 days, so c1
//     expires and c2, the last commit before the threshold, stays;
//   - dev, from c2: d1 (40 days old), then dev is deleted: d1 dangles,
//     and the default 7 days expire it;
//   - staged: on main, and 12 objects on feature; one object staged and
//     unstaged again;
//   - in no reference: an old object (garbage) and a young one (kept by
//     its age); a commit that holds a full address under the namespace.
func newWorld(t *testing.T) *world {
	t.Helper()
	dir := t.TempDir()
	bucket, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bucket.Close() })
	w := &world{
		t: t, dir: dir, bucket: bucket, ns: "file://" + filepath.ToSlash(dir), host: newMemHost(),
		garbage: map[string]string{}, live: map[string]string{},
	}
	ctx := context.Background()
	rules := &retention.Rules{DefaultRetentionDays: 7, BranchRetentionDays: map[string]int32{"main": 30}}
	if err := retention.NewRulesStore(bucket).Save(ctx, rules); err != nil {
		t.Fatal(err)
	}
	// The namespace's marker as lakeFS before v0.108 wrote it, with its words.
	w.object("dummy", 100*24*time.Hour, true, "this is dummy data - created by lakeFS in order to check accessibility ")
	h := w.host
	h.createBranch("main", "")

	a1 := w.object("data/old/a1", 60*24*time.Hour, false, "only in c1, expired")
	h.stage("main", entry("a", a1))
	h.commit("main", w.commitAt("c1", 60))
	a2 := w.object("data/old/a2", 50*24*time.Hour, true, "in c2, kept as the last commit before the threshold")
	b := w.object("data/old/b", 50*24*time.Hour, true, "in c2 and c3")
	h.stage("main", entry("a", a2))
	h.stage("main", entry("b", b))
	h.commit("main", w.commitAt("c2", 50))

	h.createBranch("dev", "main")
	d := w.object("data/old/d", 40*24*time.Hour, false, "only in d1, dangling and expired")
	h.stage("dev", entry("d", d))
	h.commit("dev", w.commitAt("d1", 40))
	h.deleteBranch("dev")

	c := w.object("data/old/c", 24*time.Hour, true, "in c3, HEAD of main")
	full := w.object("data/old/full", 24*time.Hour, true, "in c3 by its full address")
	h.stage("main", entry("c", c))
	h.stage("main", uncommitted.Entry{Key: "full", PhysicalAddress: w.ns + "/" + full, AddressType: uncommitted.Full})
	h.stage("main", uncommitted.Entry{Key: "b", Tombstone: true})
	w.live[b] = "in c2; deleted in c3"
	h.commit("main", w.commitAt("c3", 1))

	s1 := w.object("data/old/s1", 10*24*time.Hour, true, "staged on main")
	h.stage("main", entry("s1", s1))
	s2 := w.object("data/old/s2", 10*24*time.Hour, false, "staged, then unstaged")
	h.stage("main", entry("s2", s2))
	h.unstage("main", "s2")
	h.createBranch("feature", "main")
	for i := range stagedRows - 1 {
		f := w.object(fmt.Sprintf("data/old/f%02d", i), 10*24*time.Hour, true, "staged on feature")
		h.stage("feature", entry(fmt.Sprintf("part-%02d.json", i), f))
	}
	w.object("data/old/orphan", 10*24*time.Hour, false, "in no reference")
	w.object("data/old/young", time.Hour, true, "in no reference, but younger than the cutoff")
	return w
}

// stagedRows is the number of rows of the world's export: the objects
// staged on main and feature.
const stagedRows = 13

func entry(path, address string) uncommitted.Entry {
	return uncommitted.Entry{Key: path, PhysicalAddress: address, CreationDate: gcTime.Add(-time.Hour)}
}

func (w *world) commitAt(id string, daysAgo int) retention.Commit {
	return retention.Commit{ID: id, CreationDate: gcTime.AddDate(0, 0, -daysAgo), MetaRangeID: "mr-" + id}
}

// object writes an object aged age at gcTime, and records its fate.
func (w *world) object(key string, age time.Duration, live bool, why string) string {
	w.t.Helper()
	if err := w.bucket.WriteAll(context.Background(), key, []byte(why), nil); err != nil {
		w.t.Fatal(err)
	}
	at := gcTime.Add(-age)
	if err := os.Chtimes(filepath.Join(w.dir, filepath.FromSlash(key)), at, at); err != nil {
		w.t.Fatal(err)
	}
	if live {
		w.live[key] = why
	} else {
		w.garbage[key] = why
	}
	return key
}

// config is the world's GC config: the clock stands at gcTime.
func (w *world) config() lakegc.Config {
	return lakegc.Config{
		Bucket:         w.bucket,
		Namespace:      w.ns,
		Repository:     "repo1",
		Clock:          func() time.Time { return gcTime },
		ExportFileSize: 100,
		MemoryBudget:   64 << 10,
		TempDir:        w.t.TempDir(),
		// The world's objects are named for the reader, not as lakeFS
		// names them: the operator includes their folder.
		Include: []string{"data/old/"},
	}
}

// candidates reads the candidates of a mark.
func (w *world) candidates(runID string) []string {
	w.t.Helper()
	var keys []string
	for k, err := range sweep.Candidates(context.Background(), w.bucket, lakegc.DefaultStoragePrefix, runID) {
		if err != nil {
			w.t.Fatalf("candidates of %s: %v", runID, err)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// expectMarked checks that a mark's candidates are exactly the garbage.
func (w *world) expectMarked(runID string) {
	w.t.Helper()
	got := w.candidates(runID)
	want := slices.Sorted(maps.Keys(w.garbage))
	if !slices.Equal(got, want) {
		w.t.Errorf("mark %s: candidates\n got  %q\n want %q", runID, got, want)
	}
}

// expectLiveKept checks that every live object exists, and returns the
// garbage that is gone.
func (w *world) expectLiveKept() (gone []string) {
	w.t.Helper()
	for key, why := range w.live {
		if !w.exists(key) {
			w.t.Errorf("live object %s (%s) was deleted", key, why)
		}
	}
	for key := range w.garbage {
		if !w.exists(key) {
			gone = append(gone, key)
		}
	}
	slices.Sort(gone)
	return gone
}

// candidatesSize is the size of the candidates' file of run runID.
func (w *world) candidatesSize(runID string) int64 {
	w.t.Helper()
	a, err := w.bucket.Attributes(context.Background(), "_lakefs/retention/gc/unified/"+runID+"/deleted/part-00000.snappy.parquet")
	if err != nil {
		w.t.Fatal(err)
	}
	return a.Size
}

func (w *world) exists(key string) bool {
	w.t.Helper()
	ok, err := w.bucket.Exists(context.Background(), key)
	if err != nil {
		w.t.Fatal(err)
	}
	return ok
}

// marks lists the mark runs that have a report (a summary, successful or
// not, or candidates).
func (w *world) marks() []string {
	w.t.Helper()
	runs := map[string]bool{}
	it := w.bucket.List(&blob.ListOptions{Prefix: "_lakefs/retention/gc/unified/"})
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			w.t.Fatal(err)
		}
		rest := strings.TrimPrefix(obj.Key, "_lakefs/retention/gc/unified/")
		runs[rest[:strings.IndexByte(rest, '/')]] = true
	}
	return slices.Sorted(maps.Keys(runs))
}

// successfulMarks lists the mark runs whose summary says success.
func (w *world) successfulMarks() []string {
	w.t.Helper()
	var ok []string
	for _, run := range w.marks() {
		s, err := sweep.ReadSummary(context.Background(), w.bucket, lakegc.DefaultStoragePrefix, run)
		if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			continue
		}
		if err == nil && s.Success {
			ok = append(ok, run)
		}
	}
	return ok
}

// must returns v, and panics on an error: for constructors given valid
// options.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
