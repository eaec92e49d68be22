package sweeps3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/lakegc/lakegc/internal/s3test"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/s3delete"
	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
)

// t0 is Mark's "now"; the server stamps objects written before it as old.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func seq(keys []string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, k := range keys {
			if !yield(k, nil) {
				return
			}
		}
	}
}

// namespace writes n objects over a few slices, a few of them with "deny" in
// their names, eight writers at once with plain PutObject calls (s3blob's
// uploader costs more per small object), and returns their keys sorted.
// include makes the test's object names, which carry "deny" for the failing
// deleter rather than lakeFS's shapes, the repository's own.
var include = sweep.WithInclude("data/", "legacy-")

func namespace(t *testing.T, srv *s3test.Server, bucket string, n int) []string {
	t.Helper()
	var slicesOf []string
	for i := range 4 {
		slicesOf = append(slicesOf, pathprovider.DescendingID(t0.Add(-time.Duration(50+i)*time.Hour)).String())
	}
	keys := make([]string, n)
	for i := range keys {
		name := fmt.Sprintf("obj-%05d", i)
		if i%97 == 5 {
			name += "-deny"
		}
		keys[i] = "data/" + slicesOf[i%4] + "/" + name
	}
	keys = append(keys, "legacy-top-level", "legacy-deny")
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	work := make(chan string)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				_, err := srv.Client().PutObject(context.Background(), &s3.PutObjectInput{
					Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader(k),
				})
				errs <- err
			}
		}()
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	slices.Sort(keys)
	return keys
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

// TestMarkSweepS3 marks a namespace listed in pages of 100 keys and sweeps
// it with DeleteObjects: 1000 keys a request, refused keys in failed/.
func TestMarkSweepS3(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t,
		s3test.WithClock(func() time.Time { return t0.Add(-100 * time.Hour) }),
		s3test.WithMaxKeys(100),
		s3test.WithFailingDeletes(func(key string) bool { return strings.Contains(key, "deny") }))
	b := srv.Bucket(t, "lake")
	n := 1400 // more than 1000 candidates
	keys := namespace(t, srv, "lake", n)
	kept := keys[:len(keys)/5]
	candidates := keys[len(keys)/5:]

	sum, err := sweep.Mark(ctx, b, "run-s3", sweep.Inputs{Uncommitted: seq(kept[:10]), Committed: seq(kept[10:]), ExportStart: t0},
		sweep.WithClock(func() time.Time { return t0 }), sweep.WithMemoryBudget(64<<10), sweep.WithTempDir(t.TempDir()), include)
	require.NoError(t, err)
	require.True(t, sum.Success)
	require.Equal(t, int64(len(candidates)), sum.NumDeletedObjects)
	require.Greater(t, srv.Counts().ListPages, int64(len(keys)/100), "the listing spans many pages")
	var marked []string
	for k, err := range sweep.Candidates(ctx, b, "_lakefs", "run-s3") {
		require.NoError(t, err)
		marked = append(marked, k)
	}
	slices.Sort(marked)
	require.Equal(t, candidates, marked)

	d, err := s3delete.FromBucket(b)
	require.NoError(t, err)
	res, err := sweep.Sweep(ctx, b, "run-s3", sweep.WithBatchDeleter(d), include)
	require.NoError(t, err)
	var denied []string
	for _, k := range candidates {
		if strings.Contains(k, "deny") {
			denied = append(denied, k)
		}
	}
	require.NotEmpty(t, denied)
	require.Equal(t, sweep.Result{Deleted: int64(len(candidates) - len(denied)), Failed: int64(len(denied))}, *res)

	counts := srv.Counts()
	require.Zero(t, counts.DeleteObject, "no single deletes")
	require.Equal(t, int64((len(candidates)+999)/1000), counts.DeleteObjects, "1000 keys a request")
	failed := readFailed(t, b, "run-s3")
	require.Len(t, failed, len(denied))
	for _, k := range denied {
		require.Contains(t, failed[k], "AccessDenied")
	}
	remaining := slices.DeleteFunc(listAll(t, b, ""), func(k string) bool { return strings.HasPrefix(k, "_lakefs/") })
	want := append(slices.Clone(kept), denied...)
	slices.Sort(want)
	require.Equal(t, want, remaining)
}

// TestSweepS3DefaultDeleter sweeps with bucket.Delete key by key: a refused
// key fails, the others are deleted, and a second sweep finds them gone.
func TestSweepS3DefaultDeleter(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t,
		s3test.WithClock(func() time.Time { return t0.Add(-100 * time.Hour) }),
		s3test.WithFailingDeletes(func(key string) bool { return strings.Contains(key, "deny") }))
	b := srv.Bucket(t, "lake")
	keys := namespace(t, srv, "lake", 150)
	_, err := sweep.Mark(ctx, b, "run-1", sweep.Inputs{Uncommitted: seq(nil), Committed: seq(keys[:50]), ExportStart: t0},
		sweep.WithClock(func() time.Time { return t0 }), include)
	require.NoError(t, err)
	var denied int64
	for _, k := range keys[50:] {
		if strings.Contains(k, "deny") {
			denied++
		}
	}
	res, err := sweep.Sweep(ctx, b, "run-1", include)
	require.NoError(t, err)
	require.Equal(t, sweep.Result{Deleted: int64(len(keys)-50) - denied, Failed: denied}, *res)
	require.Zero(t, srv.Counts().DeleteObjects)
	res, err = sweep.Sweep(ctx, b, "run-1", include)
	require.NoError(t, err)
	require.Equal(t, sweep.Result{AlreadyGone: int64(len(keys)-50) - denied, Failed: denied}, *res)
}
