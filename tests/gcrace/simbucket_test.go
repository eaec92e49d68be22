package gcrace

import (
	"context"
	"io"
	"sync"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/faultblob"
)

// simBucket is a memblob bucket, through internal/faultblob, whose
// modification times come from the simulated clock, so that the ages the
// GC computes (cutoff, link TTL, slices) are ages in simulated time. memblob
// stamps the wall clock, which a simulation that moves days ahead in
// milliseconds cannot use: each write and copy takes the simulated time of
// its Close (set before the object commits, so that no listing sees a new
// object with memblob's older wall-clock time).
//
// Two hooks let the race test interleave writers with the GC inside storage
// calls: onList runs before every listing page, beforeDelete before every
// delete (it may veto the delete by returning an error). Neither runs with
// the bucket's lock held.
type simBucket struct {
	now   func() time.Time
	inner *blob.Bucket

	mu    sync.Mutex
	times map[string]time.Time // the simulated modification time of each key written

	hookMu       sync.Mutex
	onList       func(prefix string)
	beforeDelete func(key string) error
}

func newSimBucket(now func() time.Time) (*simBucket, *blob.Bucket) {
	d := &simBucket{now: now, inner: memblob.OpenBucket(nil), times: map[string]time.Time{}}
	stamp := func(_ context.Context, c *faultblob.Call) error {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.times[c.Key] = d.now()
		return nil
	}
	fb, err := faultblob.New(d.inner,
		faultblob.WithModTime(func(key string, stored time.Time) time.Time {
			d.mu.Lock()
			defer d.mu.Unlock()
			if t, ok := d.times[key]; ok {
				return t
			}
			return stored
		}),
		faultblob.WithHook(faultblob.Close, stamp),
		faultblob.WithHook(faultblob.Copy, stamp),
		faultblob.WithHook(faultblob.List, func(_ context.Context, c *faultblob.Call) error {
			if onList, _ := d.hooks(); onList != nil {
				onList(c.Key)
			}
			return nil
		}),
		faultblob.WithHook(faultblob.Delete, func(_ context.Context, c *faultblob.Call) error {
			if _, before := d.hooks(); before != nil {
				return before(c.Key)
			}
			return nil
		}))
	if err != nil {
		panic(err) // the options are valid
	}
	return d, fb.Bucket()
}

func (d *simBucket) setHooks(onList func(string), beforeDelete func(string) error) {
	d.hookMu.Lock()
	defer d.hookMu.Unlock()
	d.onList, d.beforeDelete = onList, beforeDelete
}

func (d *simBucket) hooks() (func(string), func(string) error) {
	d.hookMu.Lock()
	defer d.hookMu.Unlock()
	return d.onList, d.beforeDelete
}

// put stores a small object with the given modification time (for
// objects that predate the simulation).
func (d *simBucket) put(key string, mod time.Time) {
	d.mu.Lock()
	d.times[key] = mod
	d.mu.Unlock()
	if err := d.inner.WriteAll(context.Background(), key, []byte(key), nil); err != nil {
		panic(err) // memblob fails no write
	}
}

// exists reports whether key is stored, for the test's checks.
func (d *simBucket) exists(key string) bool {
	ok, err := d.inner.Exists(context.Background(), key)
	if err != nil {
		panic(err)
	}
	return ok
}

// keys returns every stored key with the prefix, sorted.
func (d *simBucket) keys(prefix string) []string {
	var out []string
	it := d.inner.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(context.Background())
		if err == io.EOF {
			return out
		}
		if err != nil {
			panic(err)
		}
		out = append(out, o.Key)
	}
}
