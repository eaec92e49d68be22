package s3test_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/s3test"
)

func writeKeys(t *testing.T, b *blob.Bucket, keys []string) {
	t.Helper()
	ctx := context.Background()
	for _, k := range keys {
		if err := b.WriteAll(ctx, k, []byte("body of "+k), nil); err != nil {
			t.Fatalf("write %s: %v", k, err)
		}
	}
}

func listKeys(t *testing.T, b *blob.Bucket, prefix string) []string {
	t.Helper()
	var keys []string
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		keys = append(keys, obj.Key)
	}
}

func TestListingSpansPages(t *testing.T) {
	srv := s3test.Start(t, s3test.WithMaxKeys(7))
	b := srv.Bucket(t, "pages")

	var want []string
	for i := range 100 {
		want = append(want, fmt.Sprintf("data/slice-%d/obj-%03d", i%3, i))
	}
	writeKeys(t, b, append(want, "other/x", "top"))
	before := srv.Counts().ListPages

	got := listKeys(t, b, "data/")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d keys, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
	}
	if pages := srv.Counts().ListPages - before; pages < 100/7 {
		t.Errorf("listing took %d pages, want at least %d with 7 keys a page", pages, 100/7)
	}
}

func TestDefaultPageSize(t *testing.T) {
	srv := s3test.Start(t)
	b := srv.Bucket(t, "default")
	var want []string
	for i := range 30 {
		want = append(want, fmt.Sprintf("k%02d", i))
	}
	writeKeys(t, b, want)
	before := srv.Counts().ListPages
	if got := listKeys(t, b, ""); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if pages := srv.Counts().ListPages - before; pages != 1 {
		t.Errorf("listing 30 keys took %d pages, want 1", pages)
	}
}

func TestReadBackAndDelete(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	b := srv.Bucket(t, "readwrite")
	writeKeys(t, b, []string{"a", "dir/b"})

	body, err := b.ReadAll(ctx, "dir/b")
	if err != nil || string(body) != "body of dir/b" {
		t.Fatalf("ReadAll = %q, %v", body, err)
	}
	if err := b.Delete(ctx, "dir/b"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := b.Delete(ctx, "dir/b"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("second Delete = %v, want NotFound", err)
	}
	if got := listKeys(t, b, ""); !slices.Equal(got, []string{"a"}) {
		t.Errorf("after delete, listed %q", got)
	}
	if c := srv.Counts(); c.DeleteObject != 1 || c.DeletedKeys != 1 {
		t.Errorf("counts = %+v, want one DeleteObject", c)
	}
}

func TestFailingDeleteObject(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, s3test.WithFailingDeletes(func(key string) bool { return strings.HasPrefix(key, "keep/") }))
	b := srv.Bucket(t, "fail1")
	writeKeys(t, b, []string{"keep/1", "gone/1"})

	err := b.Delete(ctx, "keep/1")
	if gcerrors.Code(err) != gcerrors.PermissionDenied {
		t.Errorf("Delete(keep/1) = %v (code %v), want PermissionDenied", err, gcerrors.Code(err))
	}
	if err := b.Delete(ctx, "gone/1"); err != nil {
		t.Errorf("Delete(gone/1) = %v", err)
	}
	if got := listKeys(t, b, ""); !slices.Equal(got, []string{"keep/1"}) {
		t.Errorf("after deletes, listed %q, want only keep/1", got)
	}
	if c := srv.Counts(); c.RefusedKeys != 1 || c.DeletedKeys != 1 {
		t.Errorf("counts = %+v, want 1 refused and 1 deleted", c)
	}
}

func TestFailingDeleteObjects(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t, s3test.WithFailingDeletes(func(key string) bool { return strings.HasSuffix(key, "7") }))
	b := srv.Bucket(t, "failmany")
	var keys []string
	for i := range 30 {
		keys = append(keys, fmt.Sprintf("data/%02d", i))
	}
	writeKeys(t, b, keys)

	var ids []types.ObjectIdentifier
	for _, k := range keys {
		ids = append(ids, types.ObjectIdentifier{Key: aws.String(k)})
	}
	out, err := srv.Client().DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: aws.String("failmany"),
		Delete: &types.Delete{Objects: ids},
	})
	if err != nil {
		t.Fatalf("DeleteObjects: %v", err)
	}
	var failed []string
	for _, e := range out.Errors {
		if aws.ToString(e.Code) != "AccessDenied" {
			t.Errorf("error for %s has code %q, want AccessDenied", aws.ToString(e.Key), aws.ToString(e.Code))
		}
		failed = append(failed, aws.ToString(e.Key))
	}
	slices.Sort(failed)
	want := []string{"data/07", "data/17", "data/27"}
	if !slices.Equal(failed, want) {
		t.Errorf("failed keys = %q, want %q", failed, want)
	}
	if len(out.Deleted) != len(keys)-len(want) {
		t.Errorf("deleted %d keys, want %d", len(out.Deleted), len(keys)-len(want))
	}
	if got := listKeys(t, b, ""); !slices.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}
	if c := srv.Counts(); c.DeleteObjects != 1 || c.RefusedKeys != 3 || c.DeletedKeys != 27 {
		t.Errorf("counts = %+v", c)
	}
}

func TestClock(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2020, 5, 17, 10, 0, 0, 0, time.UTC)
	srv := s3test.Start(t, s3test.WithClock(func() time.Time { return now }))
	b := srv.Bucket(t, "clock")
	writeKeys(t, b, []string{"old"})
	now = now.Add(48 * time.Hour)
	writeKeys(t, b, []string{"new"})

	it := b.List(nil)
	got := map[string]time.Time{}
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[obj.Key] = obj.ModTime
	}
	if want := time.Date(2020, 5, 17, 10, 0, 0, 0, time.UTC); !got["old"].Equal(want) {
		t.Errorf("old ModTime = %v, want %v", got["old"], want)
	}
	if !got["new"].Equal(now) {
		t.Errorf("new ModTime = %v, want %v", got["new"], now)
	}
}

func TestBucketsAreSeparate(t *testing.T) {
	srv := s3test.Start(t)
	one, two := srv.Bucket(t, "bucket-one"), srv.Bucket(t, "bucket-two")
	writeKeys(t, one, []string{"x"})
	if got := listKeys(t, two, ""); len(got) != 0 {
		t.Errorf("bucket two lists %q", got)
	}
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Errorf("URL = %q, want loopback", srv.URL())
	}
}

func TestBucketURL(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	u := srv.BucketURL(t, "by-url")
	b, err := blob.OpenBucket(ctx, u)
	if err != nil {
		t.Fatalf("OpenBucket(%q): %v", u, err)
	}
	defer b.Close()
	writeKeys(t, b, []string{"through/url"})
	out, err := srv.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("by-url")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Contents) != 1 || aws.ToString(out.Contents[0].Key) != "through/url" {
		t.Errorf("bucket holds %v, want through/url", out.Contents)
	}
}
