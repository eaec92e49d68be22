package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lakegc/lakegc/sweep"
	"gocloud.dev/blob"
)

// runID is the run Mark writes its report under.
const runID = "bench"

// Where Mark's inputs come from.
const (
	fromParquet = "parquet" // the listing and keep files DuckDB reads
	fromGen     = "gen"     // the generator that wrote them
)

// markInputs returns the bucket whose data folder lists the namespace, with
// Mark's report written under root, and the keep set, from src.
func markInputs(dir, src string, l *layout, root string) (*blob.Bucket, sweep.Inputs, error) {
	in := sweep.Inputs{ExportStart: t0}
	switch src {
	case fromParquet:
		ps, err := newParquetSource(filepath.Join(dir, listingDir))
		if err != nil {
			return nil, in, err
		}
		in.Uncommitted = readAddresses(filepath.Join(dir, uncommittedFile))
		in.Committed = readAddresses(filepath.Join(dir, committedFile))
		return newBenchBucket(ps, root), in, nil
	case fromGen:
		in.Uncommitted = l.keepSeq(isUncommitted)
		in.Committed = l.keepSeq(isCommitted)
		return newBenchBucket(genSource{l}, root), in, nil
	}
	return nil, in, fmt.Errorf("duckbench: unknown source %q", src)
}

// setupMark returns the timed work of Mark over the inputs from src, with
// its report under root and its spill files in tmp.
func setupMark(ctx context.Context, dir, src string, l *layout, root, tmp string, budget int64) (func() (int64, error), error) {
	bucket, in, err := markInputs(dir, src, l, root)
	if err != nil {
		return nil, err
	}
	return func() (int64, error) {
		sum, err := sweep.Mark(ctx, bucket, runID, in,
			sweep.WithClock(func() time.Time { return t0 }),
			sweep.WithMemoryBudget(budget),
			sweep.WithTempDir(tmp))
		if err != nil {
			return 0, err
		}
		return sum.NumDeletedObjects, nil
	}, nil
}

// setupInputs returns the work of reading Mark's inputs from src without
// Mark: the keep set read to its end, and the namespace listed through the
// same bucket, as many slices at once as Mark lists. Its time is what the
// inputs cost inside a Mark run; it returns the keys read, keep and listed.
func setupInputs(ctx context.Context, dir, src string, l *layout, root string) (func() (int64, error), error) {
	bucket, in, err := markInputs(dir, src, l, root)
	if err != nil {
		return nil, err
	}
	return func() (int64, error) {
		// As Mark does, the keep set is read on this goroutine while the
		// namespace is listed on others.
		var n atomic.Int64
		listed := make(chan error, 1)
		go func() { listed <- listNamespace(ctx, bucket, &n) }()
		var readErr error
	read:
		for _, seq := range []iter.Seq2[string, error]{in.Uncommitted, in.Committed} {
			for _, err := range seq {
				if err != nil {
					readErr = err
					break read
				}
				n.Add(1)
			}
		}
		if err := cmp.Or(<-listed, readErr); err != nil {
			return 0, err
		}
		return n.Load(), nil
	}, nil
}

// listNamespace lists every slice of the data folder, as many at once as
// Mark lists by default, counting the objects in n.
func listNamespace(ctx context.Context, bucket *blob.Bucket, n *atomic.Int64) error {
	var folders []string
	it := bucket.List(&blob.ListOptions{Prefix: "data/", Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		folders = append(folders, o.Key)
	}
	next := make(chan string)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range sweep.DefaultListConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for prefix := range next {
				if err := listAll(ctx, bucket, prefix, n); err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, f := range folders {
		next <- f
	}
	close(next)
	wg.Wait()
	return firstErr
}

// listAll lists every object under prefix, counting them in n.
func listAll(ctx context.Context, bucket *blob.Bucket, prefix string, n *atomic.Int64) error {
	it := bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		_, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		n.Add(1)
	}
}
