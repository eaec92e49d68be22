package main

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc/internal/s3test"
)

// fileBucket opens a fileblob bucket in a temporary directory, with a touch
// that dates objects by the simulated clock, as the program does.
func fileBucket(t *testing.T) (*blob.Bucket, string, func(string, time.Time) error) {
	dir := t.TempDir()
	b, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	touch := func(key string, at time.Time) error {
		return os.Chtimes(filepath.Join(dir, filepath.FromSlash(key)), at, at)
	}
	return b, "file://" + filepath.ToSlash(dir), touch
}

// checkRun asserts what every run of the story must show: the mark equals
// the story's garbage, the export took several files, and both races
// happened the way the story needs them to (the rename protected only by
// its copy record, the late link only by its age).
func checkRun(t *testing.T, res *result, out string) {
	t.Helper()
	if !res.ok {
		t.Errorf("the run's checks failed; output:\n%s", out)
	}
	missed, extra := compareMark(res.story, res.gc)
	if len(missed) > 0 || len(extra) > 0 {
		t.Errorf("mark differs from the story: missed %q, extra %q", missed, extra)
	}
	garbage := 0
	for _, f := range res.story.fates {
		if f.garbage {
			garbage++
		}
	}
	if garbage != 4 || len(res.gc.candidates) != garbage {
		t.Errorf("%d candidates, story has %d garbage objects; want 4 of each", len(res.gc.candidates), garbage)
	}
	if res.gc.exportFiles < 3 {
		t.Errorf("export wrote %d files, want several", res.gc.exportFiles)
	}
	if res.gc.copyRecords != 1 {
		t.Errorf("export trailer held %d copy records, want 1", res.gc.copyRecords)
	}
	for _, want := range []string{
		"kept by its copy record",   // the rename raced the export
		"kept by its age",           // the link came after the export passed its path
		"read after the export",     // a commit raced the export
		"the 2 slices from then on", // new slices are not listed
		"would be deleted)",         // the cutoff's anchor mattered
		"Check: the marked set is exactly the story's garbage (4 objects).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCycleFileblob(t *testing.T) {
	for _, doSweep := range []bool{false, true} {
		name := "dry-run"
		if doSweep {
			name = "sweep"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			bucket, namespace, touch := fileBucket(t)
			var out bytes.Buffer
			res, err := run(ctx, config{
				bucket: bucket, namespace: namespace, where: "test", touch: touch,
				clock:   newSimClock(time.Now()),
				landing: 200,
				gc:      gcOptions{exportFileSize: 4 << 10, sweep: doSweep},
				out:     &out,
			})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			checkRun(t, res, out.String())
			for key, f := range res.story.fates {
				exists, err := bucket.Exists(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if want := !doSweep || !f.garbage; exists != want {
					t.Errorf("%s (%s): exists=%v, want %v", key, f.what, exists, want)
				}
			}
			if doSweep && (res.gc.swept.Deleted != 4 || res.gc.swept.Failed+res.gc.swept.Refused != 0) {
				t.Errorf("sweep = %+v, want 4 deleted", *res.gc.swept)
			}
		})
	}
}

// The same cycle against an S3-protocol server, through s3blob: listings of
// 7 keys a page, object times set by the server from the simulated clock, an
// export split over more, smaller files.
func TestCycleS3(t *testing.T) {
	ctx := context.Background()
	clock := newSimClock(time.Now())
	srv := s3test.Start(t, s3test.WithMaxKeys(7), s3test.WithClock(clock.Now))
	bucket := srv.Bucket(t, "gccycle")
	var out bytes.Buffer
	res, err := run(ctx, config{
		bucket: bucket, namespace: "s3://gccycle", where: "test",
		clock:   clock,
		landing: 200,
		gc:      gcOptions{exportFileSize: 2 << 10, sweep: true},
		out:     &out,
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	checkRun(t, res, out.String())
	if res.gc.exportFiles < 5 {
		t.Errorf("export wrote %d files, want at least 5 for 200 staged objects in 2 KiB files", res.gc.exportFiles)
	}
	counts := srv.Counts()
	if counts.ListPages < 200/7 {
		t.Errorf("%d listing pages, want at least %d (200 objects, 7 a page)", counts.ListPages, 200/7)
	}
	if counts.DeletedKeys != 4 || counts.DeleteObjects != 1 || counts.DeleteObject != 0 {
		t.Errorf("server counts %+v, want 4 keys deleted in one DeleteObjects request", counts)
	}
	if !strings.Contains(out.String(), "Check: the 4 garbage objects are gone; the 208 live objects are all still there.") {
		t.Errorf("sweep check missing:\n%s", out.String())
	}
}

// The -bucket path: a gocloud URL opened by the program, everything under a
// new folder, the server's own clock (objects look as old as the real time
// they were written, which the simulated clock runs ahead of).
func TestStartWithBucketURL(t *testing.T) {
	srv := s3test.Start(t, s3test.WithMaxKeys(50))
	url := srv.BucketURL(t, "by-url")
	// Objects already in the bucket, where a GC of the bucket's root
	// would look: the example must leave them alone.
	outside := []string{"precious.csv", "data/fsdams1ksdue7jo3tba0/dc6jm41ksdue7jo3t7r0"}
	for _, key := range outside {
		if _, err := srv.Client().PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String("by-url"), Key: aws.String(key), Body: strings.NewReader("keep me"),
		}); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := start(context.Background(), &out, url, true, 4<<10, false); err != nil {
		t.Fatalf("start: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Check: the 4 garbage objects are gone") {
		t.Errorf("output:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "namespace  s3://by-url/gccycle-") {
		t.Errorf("namespace is not a new folder of the bucket:\n%s", out.String())
	}
	for _, key := range outside {
		if _, err := srv.Client().HeadObject(context.Background(), &s3.HeadObjectInput{
			Bucket: aws.String("by-url"), Key: aws.String(key),
		}); err != nil {
			t.Errorf("%s, outside the example's folder: %v", key, err)
		}
	}
}

func TestCancelledRunStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	bucket, namespace, touch := fileBucket(t)
	var out bytes.Buffer
	_, err := run(ctx, config{
		bucket: bucket, namespace: namespace, where: "test", touch: touch,
		clock: newSimClock(time.Now()), landing: 10,
		gc:  gcOptions{exportFileSize: 4 << 10, sweep: true},
		out: &out,
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("run with a cancelled context = %v, want context.Canceled", err)
	}
}

// The namespace the program prints is where its objects are: a bucket URL's
// prefix parameter is part of it, an s3:// URL's path (which s3blob
// ignores) is not.
func TestOpenFolderNamespace(t *testing.T) {
	dir := filepath.ToSlash(t.TempDir())
	bucket, namespace, err := openFolder(context.Background(), "file://"+dir+"?prefix=team/a/")
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	if err := bucket.WriteAll(context.Background(), "dummy", nil, nil); err != nil {
		t.Fatal(err)
	}
	folder, ok := strings.CutPrefix(namespace, "file://")
	if !ok {
		t.Fatalf("namespace %q is not a file:// URI", namespace)
	}
	if _, err := os.Stat(filepath.Join(filepath.FromSlash(folder), "dummy")); err != nil {
		t.Errorf("namespace %q does not hold the object written: %v", namespace, err)
	}
	if !strings.HasPrefix(folder, dir+"/team/a/gccycle-") {
		t.Errorf("namespace %q is not a new folder under %s/team/a/", namespace, dir)
	}

	for _, tc := range []struct{ url, want string }{
		{"s3://b?region=eu-west-1", "s3://b/gccycle-x"},
		{"s3://b/ignored/path?region=eu-west-1", "s3://b/gccycle-x"},
		{"s3://b?prefix=team/", "s3://b/team/gccycle-x"},
		{"mem://", "mem:///gccycle-x"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := folderURI(u, "gccycle-x"); got != tc.want {
			t.Errorf("folderURI(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
