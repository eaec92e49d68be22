// Command gccycle runs one garbage collection of a small versioned store
// built on lakegc, and prints what happened in a form a person reads.
//
// The store (branches, commits and staging in memory; object data in a
// bucket) lives through a simulated month: uploads through signed link
// addresses, overwrites, a deleted branch, an upload whose client crashed,
// a rename racing the GC, an upload still in flight. Then it runs one GC
// cycle through lakegc.Collect — the uncommitted export first, then the
// active commits and their CSV, then the mark — and deletes the garbage
// only with -sweep, by sweeping the mark it reported.
//
//	go run ./examples/gccycle                  # a temporary file:// bucket
//	go run ./examples/gccycle -sweep           # and delete the garbage
//	go run ./examples/gccycle -bucket 's3://my-bucket?region=eu-west-1'
//
// -bucket takes s3://, file:// and mem:// URLs (gocloud.dev's drivers for
// gs:// and azblob:// are one import away). With -bucket, everything
// happens under a new folder gccycle-<id>/ of the bucket (under the URL's
// prefix parameter, if any), and nothing outside it is read or deleted.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
)

func main() {
	bucketURL := flag.String("bucket", "", "bucket `URL` (s3://, file://, mem://) to run in, under a new folder (default: a temporary directory)")
	doSweep := flag.Bool("sweep", false, "delete the marked objects (default: only report them)")
	fileSize := flag.Int64("export-file-size", 4<<10, "size budget in `bytes` of one uncommitted export file (lakeFS: 20 MiB; small here to show a run of several files)")
	keep := flag.Bool("keep", false, "keep the temporary directory, to look at the files")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := start(ctx, os.Stdout, *bucketURL, *doSweep, *fileSize, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "gccycle:", err)
		os.Exit(1)
	}
}

// start runs the example in a temporary directory, or in a new folder of
// bucketURL.
func start(ctx context.Context, out io.Writer, bucketURL string, doSweep bool, fileSize int64, keep bool) error {
	cfg := config{
		clock:   newSimClock(time.Now()),
		landing: 200,
		gc:      gcOptions{exportFileSize: fileSize, sweep: doSweep},
		out:     out,
	}
	if term := newProgressLine(os.Stderr); term != nil {
		cfg.gc.progress = term.update
		defer term.close()
	}

	if bucketURL == "" {
		dir, err := os.MkdirTemp("", "gccycle-")
		if err != nil {
			return err
		}
		if !keep {
			defer os.RemoveAll(dir)
		}
		bucket, err := fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite})
		if err != nil {
			return err
		}
		defer bucket.Close()
		cfg.bucket = bucket
		cfg.namespace = "file://" + filepath.ToSlash(dir)
		cfg.where = "a temporary directory"
		if keep {
			cfg.where += ", kept"
		}
		cfg.touch = func(key string, t time.Time) error {
			return os.Chtimes(filepath.Join(dir, filepath.FromSlash(key)), t, t)
		}
	} else {
		bucket, namespace, err := openFolder(ctx, bucketURL)
		if err != nil {
			return err
		}
		defer bucket.Close()
		cfg.bucket, cfg.namespace, cfg.where = bucket, namespace, "a new folder of -bucket"
	}

	res, err := run(ctx, cfg)
	if err != nil {
		return err
	}
	if !res.ok {
		return errors.New("the GC's decisions differ from the story's (see above)")
	}
	return nil
}

// openFolder opens a bucket URL and returns a new folder of it, so the
// example never touches what is already there.
func openFolder(ctx context.Context, bucketURL string) (*blob.Bucket, string, error) {
	u, err := url.Parse(bucketURL)
	if err != nil {
		return nil, "", fmt.Errorf("-bucket: %w", err)
	}
	bucket, err := blob.OpenBucket(ctx, bucketURL)
	if err != nil {
		return nil, "", fmt.Errorf("-bucket: %w", err)
	}
	folder := "gccycle-" + xid.New().String()
	return blob.PrefixedBucket(bucket, folder+"/"), folderURI(u, folder), nil
}

// folderURI is the URI of a folder at the root of the bucket a URL opens.
// gocloud.dev applies the URL's prefix parameter to every key; the path of
// a URL is the directory for file:// and ignored by the other drivers.
func folderURI(u *url.URL, folder string) string {
	root := u.Host
	if u.Scheme == "file" {
		root += u.Path
	}
	return u.Scheme + "://" + strings.TrimSuffix(root, "/") + "/" + u.Query().Get("prefix") + folder
}

// config is one run of the example.
type config struct {
	bucket    *blob.Bucket // rooted at the repository's storage namespace
	namespace string       // the bucket's URI
	where     string       // what the namespace is, for the reader
	clock     *simClock
	// touch, if set, dates an object with the simulated time it is written
	// (the bucket's own clock otherwise).
	touch   func(key string, t time.Time) error
	landing int // objects staged on the ingest branch
	gc      gcOptions
	out     io.Writer
}
