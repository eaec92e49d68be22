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
// -export-file-size sets the export's size budget per file (4 KiB by
// default, so the run spans several files; lakeFS uses 20 MiB), and -keep
// keeps the temporary directory to look at the files.
//
// # The story
//
// Every package does its real job. An upload goes through linkaddr: the
// server hands out a fresh pathprovider address signed for repository,
// branch and path, the client writes the data there, and the server links
// it with VerifyOnce; an address linked after it expired is refused. A
// rename is a shallow copy recorded with copytrack plus a delete, and a
// commit forgets its branch's copy records. The GC rules (7 days, main 21)
// are saved and read back with retention's RulesStore.
//
// The store keeps working during the GC: between two calls of the export a
// client links an upload the export has already passed, a staged file is
// renamed, and main is committed. Each is a race the GC must survive, and
// the output says why each object survives: the copy record in the export's
// trailer, the age of the upload's slice (the cutoff is anchored at the
// export's start, and the output shows what a cutoff anchored at the mark
// would have deleted), the active commits being read after the export.
//
// One simulated clock drives every package, and objects' modification times
// follow it (os.Chtimes on the temporary file:// bucket), so days of history
// run in a second.
//
// # Output
//
// It prints the month of history, the four steps of the GC with where each
// wrote its files, each object a sweep deletes with the reason it is
// garbage, and each object kept with the reason it is live (abridged):
//
//	...
//	4. mark    run fsdams1ksdubr8fj4nig: listed 209 objects in 8 of 10 slices, kept 205, marked 4
//	           cutoff day 28 23:40: the export's start (day 30 00:00) − 24 h minimum age − 5 min clock skew − 15 min staging margin;
//	           the 2 slices from then on hold only newer objects and were not listed
//	...
//	     1  ingest:archive/part-0199.json (renamed during the export)
//	        in neither scanned path: kept by its copy record, the export's trailer
//
// The program checks its own result: the marked set must be exactly the
// garbage the story made, and after -sweep every live object must still be
// there; otherwise it exits with status 1. On a terminal it shows a progress
// line for listing and deleting on stderr; piped output stays clean. On an
// s3:// bucket the sweep deletes through sweep/s3delete, 1000 keys a
// DeleteObjects request, and says so.
//
// Its tests run the whole story against fileblob, against the S3-protocol
// server of internal/s3test (listing pages of 7 keys, the export
// in at least 5 files, the sweep in one DeleteObjects request), and once
// through -bucket s3://…, checking that objects placed outside the
// program's folder, where a GC of the bucket's root would look, are still
// there afterwards.
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
