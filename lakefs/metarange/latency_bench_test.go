package metarange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// slowBucket is a driver over a real bucket whose every read and write
// first waits a store's latency: the benchmarks' model of a cloud store's
// round trip, the bucket below (memblob) doing the work.
type slowBucket struct {
	b       *blob.Bucket
	latency time.Duration
}

func (s *slowBucket) wait(ctx context.Context) error {
	t := time.NewTimer(s.latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type slowReader struct {
	*blob.Reader
	attrs driver.ReaderAttributes
}

func (r *slowReader) Attributes() *driver.ReaderAttributes { return &r.attrs }

func (s *slowBucket) NewRangeReader(ctx context.Context, key string, offset, length int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	r, err := s.b.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		return nil, err
	}
	return &slowReader{Reader: r, attrs: driver.ReaderAttributes{ContentType: r.ContentType(), ModTime: r.ModTime(), Size: r.Size()}}, nil
}

type slowWriter struct{ *blob.Writer }

func (w slowWriter) Upload(r io.Reader) error { _, err := w.ReadFrom(r); return err }

func (s *slowBucket) NewTypedWriter(ctx context.Context, key, contentType string, _ *driver.WriterOptions) (driver.Writer, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	w, err := s.b.NewWriter(ctx, key, &blob.WriterOptions{ContentType: contentType})
	return slowWriter{w}, err
}

func (s *slowBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	a, err := s.b.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{ContentType: a.ContentType, ModTime: a.ModTime, Size: a.Size, ETag: a.ETag, MD5: a.MD5}, nil
}

func (s *slowBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	objs, next, err := s.b.ListPage(ctx, opts.PageToken, max(opts.PageSize, 1000), &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter})
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir})
	}
	return page, nil
}

func (s *slowBucket) Delete(ctx context.Context, key string) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.b.Delete(ctx, key)
}

var errSlowUnsupported = errors.New("slowBucket: unsupported")

func (s *slowBucket) Copy(context.Context, string, string, *driver.CopyOptions) error {
	return errSlowUnsupported
}
func (s *slowBucket) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", errSlowUnsupported
}
func (s *slowBucket) ErrorCode(err error) gcerrors.ErrorCode {
	if err == errSlowUnsupported {
		return gcerrors.Unimplemented
	}
	return gcerrors.Code(err)
}
func (s *slowBucket) As(any) bool             { return false }
func (s *slowBucket) ErrorAs(error, any) bool { return false }
func (s *slowBucket) Close() error            { return nil }

// BenchmarkCleanPartsLatency compares, on a store answering each request
// after a latency and with every range cached, a clean run's reads of the
// committed keep set as the lakeFS host makes them: "flat", Addresses
// through the cache (WithConcurrency ranges at once); "parts", the host's
// parts (RangeIDs, every range's ReadEntryStats at once for the re-upload
// check, then each range opened twice, one after the other, as Collect
// and a clean Mark open parts):
//
//	go test -run XXX -bench CleanPartsLatency -benchtime 1x ./lakefs/metarange/
//
// 64 ranges of 500 entries: flat 5 ms, 55 ms and 192 ms at no latency, 5
// ms and 20 ms a request; parts 15 ms, 767 ms and 2,850 ms (BENCHMARKS.md).
func BenchmarkCleanPartsLatency(b *testing.B) {
	const ranges, entries = 64, 500
	repo := newFixtureRepo(b, lakeFSOptions)
	var rs []fixtureRange
	for i := range ranges {
		es := make([]fixtureEntry, entries)
		for j := range es {
			es[j] = fixtureEntry{path: fmt.Sprintf("r%03d/%06d", i, j), address: fmt.Sprintf("data/g%03d/k%06d", i, j)}
		}
		rs = append(rs, repo.addRange(es))
	}
	mr := repo.addMetaRange(rs...)
	ctx := context.Background()
	// Cache every range (a warm cache: the second run and later).
	for _, err := range Addresses(ctx, repo.bucket, testNamespace, []string{mr}, WithRangeCache()) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, latency := range []time.Duration{0, 5 * time.Millisecond, 20 * time.Millisecond} {
		slow := blob.NewBucket(&slowBucket{b: repo.bucket, latency: latency})
		b.Run(fmt.Sprintf("flat/latency=%v", latency), func(b *testing.B) {
			for b.Loop() {
				n := 0
				for _, err := range Addresses(ctx, slow, testNamespace, []string{mr}, WithRangeCache()) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != ranges*entries {
					b.Fatalf("%d keys", n)
				}
			}
		})
		b.Run(fmt.Sprintf("parts/latency=%v", latency), func(b *testing.B) {
			for b.Loop() {
				ids, err := RangeIDs(ctx, slow, []string{mr})
				if err != nil {
					b.Fatal(err)
				}
				sums, err := NewCache(slow, testNamespace, WithEntryStats(func(int64, []byte) {}))
				if err != nil {
					b.Fatal(err)
				}
				var wg sync.WaitGroup
				work := make(chan string)
				for range DefaultConcurrency {
					wg.Go(func() {
						for id := range work {
							if _, err := sums.ReadEntryStats(ctx, id); err != nil {
								b.Error(err)
							}
						}
					})
				}
				for _, id := range ids {
					work <- id
				}
				close(work)
				wg.Wait()
				keys, err := NewCache(slow, testNamespace)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for _, id := range ids {
					for range 2 {
						for _, err := range keys.Open(ctx, id) {
							if err != nil {
								b.Fatal(err)
							}
							n++
						}
					}
				}
				if n != 2*ranges*entries {
					b.Fatalf("%d keys", n)
				}
			}
		})
		slow.Close()
	}
}
