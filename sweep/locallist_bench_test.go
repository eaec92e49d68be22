package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/retry"
)

// BenchmarkListFolder lists one folder of 50,000 one-byte files (a full
// lakeFS slice of the local blockstore, DefaultDataPartitionSize) the ways
// Mark can: through fileblob a page of 1,000 keys at a time (the pager, as
// Mark without WithLocalListing), through fileblob 10,000 at a time, and
// read once by the local pager (WithLocalListing); and the listing of the
// data folder with a delimiter, which fileblob answers by walking every file
// of the folder too, and the local pager by reading it to its first file. fileblob's ways take seconds an iteration: run it with
// -benchtime 1x.
func BenchmarkListFolder(b *testing.B) {
	const n = 50000
	dir := b.TempDir()
	slice := filepath.Join(dir, "data", "slice")
	if err := os.MkdirAll(slice, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(slice, objID(i)), []byte{'x'}, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	bucket := openFileblob(b, dir)
	defer bucket.Close()
	ctx := context.Background()
	opts := &blob.ListOptions{Prefix: "data/slice/"}
	drain := func(b *testing.B, next func(context.Context) (*blob.ListObject, error)) {
		got := 0
		for {
			_, err := next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != n {
			b.Fatalf("listed %d, want %d", got, n)
		}
	}
	for _, size := range []int{retry.PageSize, 10 * retry.PageSize} {
		b.Run(fmt.Sprintf("fileblob-%d", size), func(b *testing.B) {
			for b.Loop() {
				p := retry.NewBucketPager(bucket, opts, testWindow(), retry.Backoff{Sleep: retry.Sleep}, nil)
				if size != retry.PageSize {
					// The pager asks retry.PageSize keys; this size needs a
					// ListPage loop of its own.
					var page []*blob.ListObject
					token, i := blob.FirstPageToken, 0
					drain(b, func(ctx context.Context) (*blob.ListObject, error) {
						for i == len(page) {
							if len(token) == 0 {
								return nil, io.EOF
							}
							var err error
							if page, token, err = bucket.ListPage(ctx, token, size, opts); err != nil {
								return nil, err
							}
							i = 0
						}
						i++
						return page[i-1], nil
					})
					continue
				}
				drain(b, p.Next)
			}
		})
	}
	// The data folder's listing with a delimiter: fileblob walks every file
	// of its folders, the local pager reads each folder to its first file.
	b.Run("local-delimiter", func(b *testing.B) {
		for b.Loop() {
			p, _ := newLocalLevelPager(dir, "data/", testWindow(), retry.Backoff{Sleep: retry.Sleep}, nil)
			o, err := p.Next(ctx)
			if err != nil || !o.IsDir || o.Key != "data/slice/" {
				b.Fatal(o, err)
			}
			if _, err := p.Next(ctx); !errors.Is(err, io.EOF) {
				b.Fatal(err)
			}
		}
	})
	b.Run("fileblob-delimiter", func(b *testing.B) {
		for b.Loop() {
			page, next, err := bucket.ListPage(ctx, blob.FirstPageToken, retry.PageSize, &blob.ListOptions{Prefix: "data/", Delimiter: "/"})
			if err != nil || len(next) != 0 || len(page) != 1 {
				b.Fatal(page, next, err)
			}
		}
	})
	b.Run("local", func(b *testing.B) {
		for b.Loop() {
			p, _ := newLocalPager(dir, opts.Prefix, testWindow(), retry.Backoff{Sleep: retry.Sleep}, nil)
			drain(b, p.Next)
		}
	})
}
