package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/tests/internal/maphost"
)

// T is what RunWorld reports to: a *testing.T, or the soak command's
// stand-in. Fatalf must not return.
type T interface {
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Fatal(args ...any)
	Logf(format string, args ...any)
	TempDir() string
	Cleanup(func())
}

const (
	minAge    = 48 * time.Hour
	faultRuns = 3 // faulty cycles per world, before one without faults
)

// store is the host's metadata. Collect reads it from one goroutine at a
// time and nothing writes it during a cycle.
type store = maphost.Store

// world is a store and its bucket, its history written up to now.
type world struct {
	s      *store
	dir    string
	bucket *blob.Bucket // the fileblob, without faults
	now    time.Time
}

// newWorld writes five simulated days of history: uploads to the staging
// areas of two branches (new paths and overwrites), unstaged paths, and
// commits.
func newWorld(ctx context.Context, t T, rng *rand.Rand) *world {
	dir := t.TempDir()
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bucket.Close() })
	// The host marks the repository's folder when it creates it.
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: "file://" + dir}); err != nil {
		t.Fatal(err)
	}
	w := &world{dir: dir, bucket: bucket, now: time.Now().UTC().Truncate(time.Second), s: maphost.New()}
	w.s.Staged["main"], w.s.Staged["dev"] = map[string]string{}, map[string]string{}
	at := w.now.Add(-5 * 24 * time.Hour)
	paths, err := pathprovider.New(pathprovider.WithClock(func() time.Time { return at }))
	if err != nil {
		t.Fatal(err)
	}
	steps := 30 + rng.IntN(50)
	for range steps {
		at = at.Add(time.Duration(rng.Int64N(int64(5 * 24 * time.Hour / time.Duration(steps) * 2))))
		if at.After(w.now) {
			at = w.now
		}
		b := []string{"main", "dev"}[rng.IntN(2)]
		switch r := rng.IntN(10); {
		case r < 8: // upload
			addr := paths.NewPath()
			if err := bucket.WriteAll(ctx, addr, []byte(addr), nil); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(addr)), at, at); err != nil {
				t.Fatal(err)
			}
			w.s.Created[addr] = at
			w.s.Staged[b]["p"+strconv.Itoa(rng.IntN(12))] = addr
		case r < 9: // unstage
			for p := range w.s.Staged[b] {
				delete(w.s.Staged[b], p)
				break
			}
		case rng.IntN(2) == 0:
			w.s.Commit(b, at)
		}
	}
	if err := retention.NewRulesStore(bucket).Save(ctx, &retention.Rules{DefaultRetentionDays: 1}); err != nil {
		t.Fatal(err)
	}
	return w
}

// cutoff is the cutoff of every cycle: Collect's clock stands at now.
func (w *world) cutoff() time.Time { return w.now.Add(-minAge - sweep.DefaultClockSkew) }

// live is what no cycle may delete (maphost.Store.Live at the cutoff).
func (w *world) live() map[string]string { return w.s.Live(w.cutoff()) }

// garbage is what the GC must delete (maphost.Store.Garbage), older than
// the cutoff with a day's margin.
func (w *world) garbage() map[string]bool { return w.s.Garbage(w.cutoff().Add(-24 * time.Hour)) }

func (w *world) exists(ctx context.Context, t T, key string) bool {
	ok, err := w.bucket.Exists(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// collect runs one cycle over bucket, turning a panic into an error.
func (w *world) collect(ctx context.Context, t T, bucket *blob.Bucket) (r *lakegc.Report, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("PANIC: %v", p)
			t.Errorf("Collect panicked: %v", p)
		}
	}()
	return lakegc.Collect(ctx, lakegc.Host{Staging: w.s, Commits: w.s, Committed: w.s}, lakegc.Config{
		Bucket: bucket, Namespace: "file://" + w.dir, Repository: "faults", Sweep: true,
		MinAge: minAge, TempDir: t.TempDir(), Clock: func() time.Time { return w.now },
		// Retries in milliseconds: the faults are a share of calls, not a
		// store that needs seconds to recover.
		MarkOptions:  []sweep.MarkOption{sweep.WithBackoff(time.Millisecond, 20*time.Millisecond)},
		SweepOptions: []sweep.SweepOption{sweep.WithBackoff(time.Millisecond, 20*time.Millisecond)},
	})
}

// Stats are the figures of the worlds run so far.
type Stats struct {
	Cycles, Failed, Faults, Violations, Deleted, FailedEntries int64
	StagedOld                                                  int64            // live only as staged, and old
	Written                                                    int64            // objects the worlds uploaded
	Counts                                                     map[string]int64 // faults injected by "op/kind"
}

// RunWorld builds the world of seed, runs its faulty cycles and the clean
// one, checks each, and adds its figures to st; with verbose it logs each
// cycle's faults. Violations are reported with t.Errorf and counted in
// st.Violations.
func RunWorld(ctx context.Context, t T, seed uint64, st *Stats, verbose bool) {
	rng := rand.New(rand.NewPCG(seed, 0x1a4e))
	w := newWorld(ctx, t, rng)
	st.Written += int64(len(w.s.Created))
	live, ever := w.live(), w.s.EverCommitted()
	for a, why := range live {
		if why[:6] == "staged" && !ever[a] && w.s.Created[a].Before(w.now.Add(-minAge)) {
			st.StagedOld++
		}
	}
	violate := func(cycle int, format string, args ...any) {
		st.Violations++
		t.Errorf("seed %d cycle %d: %s", seed, cycle, fmt.Sprintf(format, args...))
	}
	for cycle := range faultRuns + 1 {
		bucket := w.bucket
		var fb *faultblob.Bucket
		if cycle < faultRuns {
			opts := []faultblob.Option{faultblob.WithSeed(seed*10 + uint64(cycle)),
				faultblob.WithMaxStall(2 * time.Millisecond), faultblob.WithMaxPageSize(1 + rng.IntN(8))}
			for _, op := range []faultblob.Op{faultblob.Attributes, faultblob.List, faultblob.Write, faultblob.Copy} {
				opts = append(opts, faultblob.WithRate(op, []float64{0, 0.01, 0.03, 0.1}[rng.IntN(4)]))
			}
			opts = append(opts, faultblob.WithRate(faultblob.Read, []float64{0, 0.03, 0.1, 0.3}[rng.IntN(4)]))
			if rng.IntN(2) == 0 { // spare the reads of the export, to fault the mark's
				opts = append(opts, faultblob.WithSpare(faultblob.Read, rng.IntN(12)))
			}
			opts = append(opts, faultblob.WithRate(faultblob.Delete, []float64{0, 0.1, 0.3, 0.6}[rng.IntN(4)]))
			var err error
			if fb, err = faultblob.New(w.bucket, opts...); err != nil {
				t.Fatal(err)
			}
			bucket = fb.Bucket()
		}
		before := map[string]bool{}
		for a := range w.garbage() {
			before[a] = w.exists(ctx, t, a)
		}
		r, err := w.collect(ctx, t, bucket)
		st.Cycles++
		if fb != nil {
			st.Faults += fb.Total()
			for k, n := range fb.Counts() {
				st.Counts[k] += n
			}
		}
		for a, why := range live {
			if !w.exists(ctx, t, a) {
				violate(cycle, "live object %s (%s) deleted; Collect said %v", a, why, err)
				delete(live, a) // reported once
			}
		}
		if verbose {
			var counts map[string]int64 // none in the cycle without faults
			if fb != nil {
				counts = fb.Counts()
			}
			t.Logf("cycle %d: faults %v; error %v", cycle, counts, err)
		}
		if err != nil {
			st.Failed++
			if fb == nil {
				violate(cycle, "the cycle without faults failed: %v", err)
			}
			continue
		}
		if r.Sweep == nil || r.Mark == nil || r.Mark.Summary == nil {
			violate(cycle, "no error but no sweep or mark in the report %+v", r)
			continue
		}
		sw, n := r.Sweep, r.Mark.Summary.NumDeletedObjects
		st.Deleted += sw.Deleted
		st.FailedEntries += sw.Failed + sw.Refused
		if sw.Deleted+sw.AlreadyGone+sw.Failed+sw.Refused != n {
			violate(cycle, "sweep %+v does not account for %d candidates", *sw, n)
		}
		var remaining int64
		marked := map[string]bool{}
		for k, err := range sweep.Candidates(ctx, w.bucket, lakegc.DefaultStoragePrefix, r.RunID) {
			if err != nil {
				t.Fatalf("seed %d: reading the candidates: %v", seed, err)
			}
			marked[k] = true
			if w.exists(ctx, t, k) {
				remaining++
			}
		}
		if remaining > sw.Failed+sw.Refused {
			violate(cycle, "%d candidates still stored, but only %d failed or refused", remaining, sw.Failed+sw.Refused)
		}
		for a, was := range before {
			if was && !marked[a] {
				violate(cycle, "garbage %s was not marked by a cycle that succeeded", a)
			}
			if fb == nil && w.exists(ctx, t, a) {
				violate(cycle, "garbage %s is still stored after the cycle without faults", a)
			}
		}
	}
}
