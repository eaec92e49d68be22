package clouds_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/azdelete"
	"github.com/lakegc/lakegc/sweep/gcsdelete"
	"github.com/lakegc/lakegc/uncommitted"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
)

// store is one kind of bucket the scenario runs on.
type store struct {
	// ns is the repository's storage namespace, as lakeFS writes it.
	ns string
	// open returns the bucket rooted at ns, empty.
	open func(t *testing.T) *blob.Bucket
	// refuse makes the store refuse to delete key, which exists, and
	// returns part of the error the store will answer.
	refuse func(t *testing.T, b *blob.Bucket, key string) (refusal string)
	// deleter returns the batch deleter for the bucket; nil: Sweep's default.
	deleter func(t *testing.T, b *blob.Bucket) sweep.BatchDeleter
	// deletesGone: deleting a missing object tells it was gone (not S3's
	// DeleteObjects).
	deletesGone bool
	// requests, if set, is called before the first sweep and returns a
	// check of the delete requests the store answered since, for n
	// candidates: each candidate once, refusals not retried.
	requests func(t *testing.T) (check func(n int))
}

// lake is what the scenario writes: keys relative to the namespace.
type lake struct {
	committed, staged, garbage []string
	refused                    string // garbage the store refuses to delete
	fresh                      string // in a slice newer than the cutoff
	stagedFull                 string // staged with its full address
}

// now is the scenario's clock: two days after the objects were written,
// so that the emulators' real modification times are old.
var now = time.Now().UTC().Truncate(time.Second).Add(48 * time.Hour)

func clock() time.Time { return now }

// include makes the scenarios' object names, which say what each object is
// (and trip the stores' failing deletes) rather than follow lakeFS's
// shapes, the repository's own.
var include = sweep.WithInclude("data/", "legacy-")

// classify reads Azure's and GCS's refusals, which gocloud's codes blur,
// as a host of such a bucket gives them to Sweep.
var classify = []sweep.SweepOption{sweep.WithErrorClassifier(azdelete.Classifier{}), sweep.WithErrorClassifier(gcsdelete.Classifier{})}

// oldSlice is the name of a slice made i hours before the scenario's
// cutoff, 100 hours before now.
func oldSlice(i int) string {
	return pathprovider.DescendingID(now.Add(-time.Duration(100+i) * time.Hour)).String()
}

func writeLake(t *testing.T, b *blob.Bucket) lake {
	t.Helper()
	ctx := context.Background()
	old1, old2, old3 := oldSlice(0), oldSlice(1), oldSlice(2)
	var l lake
	for i := range 6 {
		l.committed = append(l.committed, fmt.Sprintf("data/%s/committed-%02d", old1, i))
		l.staged = append(l.staged, fmt.Sprintf("data/%s/staged-%02d", old2, i))
	}
	for i := range 30 {
		l.garbage = append(l.garbage, fmt.Sprintf("data/%s/garbage-%02d", []string{old1, old2}[i%2], i))
	}
	l.garbage = append(l.garbage, "legacy-top-level")
	l.refused = "data/" + old3 + "/refused-garbage" // alone in its slice (a folder on file)
	l.garbage = append(l.garbage, l.refused)
	l.stagedFull = l.staged[0]
	l.fresh = "data/" + pathprovider.DescendingID(now.Add(-time.Hour)).String() + "/fresh"
	for _, k := range slices.Concat(l.committed, l.staged, l.garbage, []string{l.fresh, "dummy"}) {
		require.NoError(t, b.WriteAll(ctx, k, []byte("data of "+k), nil), k)
	}
	slices.Sort(l.garbage)
	return l
}

// staging is the repository's staging area: two branches, one staged
// deletion, one object staged with its full address under the namespace,
// and one imported from outside it.
type staging map[string][]uncommitted.Entry

func (s staging) Branches(_ context.Context, from string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, b := range []string{"dev", "main"} {
			if b >= from && !yield(b, nil) {
				return
			}
		}
	}
}

func (s staging) Uncommitted(_ context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	return func(yield func(uncommitted.Entry, error) bool) {
		for _, e := range s[branch] {
			if e.Key >= from && !yield(e, nil) {
				return
			}
		}
	}
}

func stagingOf(ns string, l lake) staging {
	s := staging{}
	for i, addr := range l.staged {
		e := uncommitted.Entry{Key: fmt.Sprintf("tables/t/part-%02d", i), PhysicalAddress: addr, CreationDate: now.Add(-time.Hour)}
		if addr == l.stagedFull {
			e.PhysicalAddress, e.AddressType = ns+"/"+addr, uncommitted.Full
		}
		branch := []string{"dev", "main"}[i%2]
		s[branch] = append(s[branch], e)
	}
	s["main"] = append(s["main"],
		uncommitted.Entry{Key: "tables/t/zz-deleted", Tombstone: true},
		uncommitted.Entry{Key: "tables/t/zz-imported", PhysicalAddress: "s3://elsewhere/x", AddressType: uncommitted.Full, CreationDate: now})
	return s
}

// export runs the uncommitted export to the end, in pages, and returns the
// run ID and when it started.
func export(t *testing.T, b *blob.Bucket, ns string, l lake) (string, time.Time) {
	t.Helper()
	ctx := context.Background()
	p := must(uncommitted.NewPreparer(b, uncommitted.WithClock(clock), uncommitted.WithMaxFileSize(1)))
	repo := uncommitted.Repository{ID: "repo1", StorageNamespace: ns}
	start := clock()
	var mark *uncommitted.Checkpoint
	var runID string
	for range 100 {
		res, err := p.Prepare(ctx, repo, stagingOf(ns, l), mark)
		require.NoError(t, err)
		runID = res.RunID
		if res.Location != "" {
			require.True(t, strings.HasPrefix(res.Location, ns+"/_lakefs/retention/gc/uncommitted/"+runID+"/"), res.Location)
		}
		if mark = res.Checkpoint; mark == nil {
			return runID, start
		}
	}
	t.Fatal("the export never finished")
	return "", time.Time{}
}

func addresses(ctx context.Context, rows iter.Seq2[uncommitted.Row, error]) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for r, err := range rows {
			if !yield(r.PhysicalAddress, err) {
				return
			}
		}
	}
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

// runScenario exports, marks and sweeps, and checks every object.
func runScenario(t *testing.T, s store) {
	ctx := context.Background()
	b := s.open(t)
	l := writeLake(t, b)
	refusal := s.refuse(t, b, l.refused)

	runID, exportStart := export(t, b, s.ns, l)
	var exported []string
	for addr, err := range addresses(ctx, uncommitted.ReadRun(ctx, b, "_lakefs", runID)) {
		require.NoError(t, err)
		exported = append(exported, addr)
	}
	slices.Sort(exported)
	require.Equal(t, l.staged, exported, "the export holds the staged addresses, the full one made relative")

	sum, err := sweep.Mark(ctx, b, "gc-1", sweep.Inputs{
		Uncommitted: addresses(ctx, uncommitted.ReadRun(ctx, b, "_lakefs", runID)),
		Committed:   seq(l.committed),
		ExportStart: exportStart,
	}, sweep.WithClock(clock), sweep.WithTempDir(t.TempDir()), include)
	require.NoError(t, err)
	require.True(t, sum.Success)
	var marked []string
	for k, err := range sweep.Candidates(ctx, b, "_lakefs", "gc-1") {
		require.NoError(t, err)
		marked = append(marked, k)
	}
	slices.Sort(marked)
	require.Equal(t, l.garbage, marked)

	opts := append([]sweep.SweepOption{include}, classify...)
	if s.deleter != nil {
		opts = append(opts, sweep.WithBatchDeleter(s.deleter(t, b)))
	}
	check := func(int) {}
	if s.requests != nil {
		check = s.requests(t)
	}
	res, err := sweep.Sweep(ctx, b, "gc-1", opts...)
	require.NoError(t, err)
	require.Equal(t, sweep.Result{Deleted: int64(len(l.garbage) - 1), Failed: 1}, *res)
	failed := readFailed(t, b, "gc-1")
	require.Len(t, failed, 1)
	require.Contains(t, failed[l.refused], refusal, "failed/ holds the store's error")
	check(len(l.garbage))

	want := slices.Concat(l.committed, l.staged, []string{l.refused, l.fresh, "dummy"})
	slices.Sort(want)
	require.Equal(t, want, listData(t, b), "every live object, and only those, is left")

	// A second sweep deletes nothing more and says what it found.
	res, err = sweep.Sweep(ctx, b, "gc-1", opts...)
	require.NoError(t, err)
	again := sweep.Result{AlreadyGone: int64(len(l.garbage) - 1), Failed: 1}
	if !s.deletesGone {
		again = sweep.Result{Deleted: int64(len(l.garbage) - 1), Failed: 1}
	}
	require.Equal(t, again, *res)
	require.Equal(t, want, listData(t, b))

	runQuarantine(t, b, l, runID, exportStart, opts)
	runLease(t, b)
}

// listData lists the bucket, but lakeFS's and the GC's own files.
func listData(t *testing.T, b *blob.Bucket) []string {
	t.Helper()
	var out []string
	for _, k := range listAll(t, b, "") {
		if !strings.HasPrefix(k, "_lakefs/") {
			out = append(out, k)
		}
	}
	return out
}

func listAll(t *testing.T, b *blob.Bucket, prefix string) []string {
	t.Helper()
	var out []string
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, o.Key)
	}
}

type failedRow struct {
	Address string `parquet:"address"`
	Error   string `parquet:"error"`
}

func readFailed(t *testing.T, b *blob.Bucket, runID string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, key := range listAll(t, b, "_lakefs/retention/gc/unified/"+runID+"/failed/") {
		data, err := b.ReadAll(context.Background(), key)
		require.NoError(t, err)
		rows, err := parquet.Read[failedRow](bytes.NewReader(data), int64(len(data)))
		require.NoError(t, err)
		for _, r := range rows {
			out[r.Address] = r.Error
		}
	}
	return out
}

// must returns v, and panics on an error: for constructors given valid
// options.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
