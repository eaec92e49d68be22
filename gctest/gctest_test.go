package gctest_test

import (
	"context"
	"io"
	"iter"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/gctest"
	"github.com/lakegc/lakegc/hostkit"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/uncommitted"
)

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func buckets(t *testing.T) map[string]*blob.Bucket {
	fb, err := fileblob.OpenBucket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*blob.Bucket{"memblob": memblob.OpenBucket(nil), "fileblob": fb}
}

func listTimes(t *testing.T, b *blob.Bucket) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	it := b.List(nil)
	for {
		o, err := it.Next(context.Background())
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[o.Key] = o.ModTime
	}
}

// Objects written and copied through the wrapper have the clock's time in
// listings, attributes and readers; others have none.
func TestModTimesFollowTheClock(t *testing.T) {
	ctx := context.Background()
	for name, inner := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			clock := gctest.NewClock(start)
			b := clock.Bucket(inner)
			defer b.Close()
			if err := b.WriteAll(ctx, "data/a", []byte("a"), nil); err != nil {
				t.Fatal(err)
			}
			t1 := clock.Advance(time.Hour)
			if err := b.Copy(ctx, "data/b", "data/a", nil); err != nil {
				t.Fatal(err)
			}
			t2 := clock.Advance(30 * time.Hour)
			if err := b.WriteAll(ctx, "data/a", []byte("a2"), nil); err != nil { // overwritten
				t.Fatal(err)
			}
			if err := inner.WriteAll(ctx, "foreign", []byte("f"), nil); err != nil {
				t.Fatal(err)
			}
			want := map[string]time.Time{"data/a": t2, "data/b": t1, "foreign": {}}
			got := listTimes(t, b)
			for k, w := range want {
				if !got[k].Equal(w) {
					t.Errorf("listing: %s at %v, want %v", k, got[k], w)
				}
				a, err := b.Attributes(ctx, k)
				if err != nil || !a.ModTime.Equal(w) {
					t.Errorf("Attributes(%s): %v, %v; want %v", k, a, err, w)
				}
				r, err := b.NewReader(ctx, k, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !r.ModTime().Equal(w) {
					t.Errorf("reader of %s: %v, want %v", k, r.ModTime(), w)
				}
				r.Close()
			}
			if err := b.Delete(ctx, "data/b"); err != nil {
				t.Fatal(err)
			}
			if err := inner.WriteAll(ctx, "data/b", []byte("again"), nil); err != nil {
				t.Fatal(err)
			}
			if a, err := b.Attributes(ctx, "data/b"); err != nil || !a.ModTime.IsZero() {
				t.Errorf("an object deleted through the wrapper, then written around it, has time %v (%v); want none", a.ModTime, err)
			}
		})
	}
}

// A write that fails leaves no time behind.
func TestFailedWriteHasNoTime(t *testing.T) {
	ctx := context.Background()
	clock := gctest.NewClock(start)
	b := clock.Bucket(memblob.OpenBucket(nil))
	defer b.Close()
	if err := b.WriteAll(ctx, "k", []byte("1"), nil); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if err := b.WriteAll(ctx, "k", []byte("2"), &blob.WriterOptions{IfNotExist: true}); err == nil {
		t.Fatal("a conditional write over an object succeeded")
	}
	if a, _ := b.Attributes(ctx, "k"); !a.ModTime.Equal(start) {
		t.Errorf("time %v after a failed write, want %v", a.ModTime, start)
	}
}

// host is a staging area of one branch, and no commits.
type host map[string]string // path → address

func (h host) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	return hostkit.Keys(ctx, map[string]bool{"main": true}, from)
}

func (h host) Uncommitted(ctx context.Context, b, from string) iter.Seq2[uncommitted.Entry, error] {
	return hostkit.Map(ctx, h, from, func(p, a string) uncommitted.Entry { return uncommitted.Entry{Key: p, PhysicalAddress: a} })
}

func (h host) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	return hostkit.Slice[retention.Branch](ctx, nil, nil)
}

func (h host) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return hostkit.Slice[retention.Commit](ctx, nil, nil)
}

func (h host) Get(ctx context.Context, id string) (retention.Commit, error) {
	return hostkit.Get(ctx, map[string]retention.Commit{}, id)
}

func (h host) CommittedAddresses(ctx context.Context, _ []retention.ActiveCommit) iter.Seq2[string, error] {
	return hostkit.Slice[string](ctx, nil, nil)
}

// One clock drives the paths, the bucket's times and the cycle: three days
// into the simulation, the garbage of the first day goes, the staged
// object and the garbage of the last hour stay.
func TestCycleOnTheClock(t *testing.T) {
	ctx := context.Background()
	for name, inner := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			clock := gctest.NewClock(start)
			bucket := clock.Bucket(inner)
			defer bucket.Close()
			paths, err := clock.Paths()
			if err != nil {
				t.Fatal(err)
			}
			cfg := lakegc.Config{Bucket: bucket, Namespace: "mem://repo", Clock: clock.Now, Sweep: true}
			if err := lakegc.InitNamespace(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			if err := retention.NewRulesStore(bucket).Save(ctx, &retention.Rules{DefaultRetentionDays: 1}); err != nil {
				t.Fatal(err)
			}
			write := func() string {
				k := paths.NewPath()
				if err := bucket.WriteAll(ctx, k, []byte(k), nil); err != nil {
					t.Fatal(err)
				}
				return k
			}
			old, staged := write(), write()
			clock.Advance(71 * time.Hour)
			young := write()
			clock.Advance(time.Hour)
			r, err := lakegc.Collect(ctx, lakegc.Host{Staging: host{"a.csv": staged}, Commits: host{}, Committed: host{}}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range map[string]bool{old: false, staged: true, young: true} {
				if ok, err := bucket.Exists(ctx, k); err != nil || ok != want {
					t.Errorf("%s exists: %t (%v), want %t", k, ok, err, want)
				}
			}
			if r.Sweep == nil || r.Sweep.Deleted != 1 {
				t.Errorf("sweep: %+v", r.Sweep)
			}
		})
	}
}

// An object written through the wrapper and then overwritten around it
// (same size, same key) must not keep the first write's time: it would look
// older than it is, the one direction that deletes a live object. It reports
// no time, in listings, attributes and readers.
func TestOverwriteAroundTheWrapperHasNoTime(t *testing.T) {
	ctx := context.Background()
	for name, inner := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			clock := gctest.NewClock(start)
			b := clock.Bucket(inner)
			defer b.Close()
			if err := b.WriteAll(ctx, "data/a", []byte("v1"), nil); err != nil {
				t.Fatal(err)
			}
			clock.Advance(72 * time.Hour)
			if err := inner.WriteAll(ctx, "data/a", []byte("v2"), nil); err != nil {
				t.Fatal(err)
			}
			if got := listTimes(t, b)["data/a"]; !got.IsZero() {
				t.Errorf("listing: overwritten around the wrapper, at %v; want no time", got)
			}
			if a, err := b.Attributes(ctx, "data/a"); err != nil || !a.ModTime.IsZero() {
				t.Errorf("Attributes: %v (%v); want no time", a.ModTime, err)
			}
			r, err := b.NewReader(ctx, "data/a", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if !r.ModTime().IsZero() {
				t.Errorf("reader: %v; want no time", r.ModTime())
			}
		})
	}
}

// Objects written around the wrapper — a new one, and one the wrapper
// wrote that was then overwritten — survive a cycle long after the
// clock's cutoff: no time reads as unknown, which the mark keeps.
func TestCycleKeepsObjectsWrittenAroundTheWrapper(t *testing.T) {
	ctx := context.Background()
	for name, inner := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			clock := gctest.NewClock(start)
			bucket := clock.Bucket(inner)
			defer bucket.Close()
			paths, err := clock.Paths()
			if err != nil {
				t.Fatal(err)
			}
			cfg := lakegc.Config{Bucket: bucket, Namespace: "mem://repo", Clock: clock.Now, Sweep: true}
			if err := lakegc.InitNamespace(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			if err := retention.NewRulesStore(bucket).Save(ctx, &retention.Rules{DefaultRetentionDays: 1}); err != nil {
				t.Fatal(err)
			}
			garbage, overwritten, around := paths.NewPath(), paths.NewPath(), paths.NewPath()
			for _, k := range []string{garbage, overwritten} {
				if err := bucket.WriteAll(ctx, k, []byte("12"), nil); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range []string{overwritten, around} {
				if err := inner.WriteAll(ctx, k, []byte("34"), nil); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(30 * 24 * time.Hour)
			r, err := lakegc.Collect(ctx, lakegc.Host{Staging: host{}, Commits: host{}, Committed: host{}}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range map[string]bool{garbage: false, overwritten: true, around: true} {
				if ok, err := bucket.Exists(ctx, k); err != nil || ok != want {
					t.Errorf("%s exists: %t (%v), want %t", k, ok, err, want)
				}
			}
			if r.Sweep == nil || r.Sweep.Deleted != 1 {
				t.Errorf("sweep: %+v", r.Sweep)
			}
		})
	}
}
