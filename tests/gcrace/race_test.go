package gcrace

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// runConfig sizes one seeded run.
type runConfig struct {
	steps   int     // writer steps outside GC cycles
	gcEvery float64 // probability that a GC cycle starts after a step
	// concurrent adds a writer goroutine that runs up to 15 steps while a
	// cycle runs, truly in parallel with it (the hooks interleave steps at
	// chosen points; this one lands anywhere a lock is free).
	concurrent bool
	// optimized makes two marks in three start from the latest run
	// (sweep.WithPrevious): clean and optimized runs mix.
	optimized bool
}

var defaultRun = runConfig{steps: 220, gcEvery: 1.0 / 12}

// runStats counts what a run exercised.
type runStats struct {
	steps, cycles, prepareCalls, deleted, marked, legacy int64
	optimized, skipped                                   int64 // optimized marks, and the slices they skipped
	points                                               map[string]int
}

// runSeed runs one seeded schedule and returns the first failure (with the
// seed, the step and the tail of the schedule), or "" when every invariant
// held.
func runSeed(t testing.TB, seed uint64, cfg runConfig, wire wiring) (string, runStats) {
	ctx := context.Background()
	var st runStats
	w, err := newWorld(ctx, seed)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	if cfg.optimized {
		// Its own source, so that the schedule of a seed stays the one the
		// mutation tests search.
		w.optRNG = rand.New(rand.NewPCG(seed, 0x0b7))
	}
	fail := func(what string) string {
		w.mu.Lock()
		defer w.mu.Unlock()
		tail := w.log
		if len(tail) > 40 {
			tail = tail[len(tail)-40:]
		}
		var b strings.Builder
		fmt.Fprintf(&b, "seed %d, step %d (replay: GCRACE_SEED=%d): %s\n", seed, w.step, seed, what)
		for _, v := range w.violations {
			fmt.Fprintf(&b, "  violation: %s\n", v)
		}
		fmt.Fprintf(&b, "  rules: %+v, concurrent writer: %v, wiring: %+v\n  last steps of the schedule:\n", w.rules, cfg.concurrent, wire)
		for _, l := range tail {
			fmt.Fprintf(&b, "    %s\n", l)
		}
		return b.String()
	}
	for i := 0; i < cfg.steps; i++ {
		w.writerStep()
		w.mu.Lock()
		startGC := w.rng.Float64() < cfg.gcEvery
		w.mu.Unlock()
		if !startGC {
			if len(w.violations) > 0 {
				return fail("writer step failed"), st
			}
			continue
		}
		w.mu.Lock()
		w.logf("GC cycle %d starts", st.cycles+1)
		w.mu.Unlock()
		stop := make(chan struct{})
		var bg sync.WaitGroup
		if cfg.concurrent {
			bg.Add(1)
			go func() {
				defer bg.Done()
				for range 15 {
					select {
					case <-stop:
						return
					default:
					}
					w.writerStepFrom(concurrentWriter)
					runtime.Gosched()
				}
			}()
		}
		rep, err := w.gcCycle(ctx, wire, t.TempDir())
		close(stop)
		bg.Wait()
		if err != nil {
			return fail(err.Error()), st
		}
		w.checkCycle(rep)
		st.cycles++
		st.prepareCalls += int64(rep.prepareCalls)
		st.deleted += rep.swept.Deleted
		st.marked += rep.summary.NumDeletedObjects
		w.mu.Lock()
		w.logf("GC cycle %d done: export start %s, cutoff %s, %d Prepare calls, %d deleted",
			st.cycles, rep.exportStart.Format("01-02T15:04:05"), rep.summary.CutoffTime.Format("01-02T15:04:05"),
			rep.prepareCalls, rep.swept.Deleted)
		n := len(w.violations)
		w.mu.Unlock()
		if n > 0 {
			return fail(fmt.Sprintf("invariant broken in GC cycle %d", st.cycles)), st
		}
	}
	w.mu.Lock()
	st.steps = int64(w.step)
	st.legacy = int64(w.legacyDeleted)
	st.optimized, st.skipped = int64(w.optimized), w.skipped
	st.points = maps.Clone(w.points)
	w.mu.Unlock()
	return "", st
}

// seeds returns the seeds to run: GCRACE_SEED replays one, GCRACE_SEEDS
// sets how many (default n, or 1/4 of it with -short).
//
// A seed fixes every random choice of the schedule. A replay follows it
// until the process-specific bits of the xids (machine, pid, counter) make
// an export file a few bytes larger or smaller and move where the size
// budget splits the export, or, for even seeds, until the concurrent
// writer lands elsewhere; so a failure message carries the schedule itself
// (its last 40 steps), not only the seed.
func seeds(t *testing.T, n int) []uint64 {
	if s := os.Getenv("GCRACE_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("GCRACE_SEED: %v", err)
		}
		return []uint64{v}
	}
	if s := os.Getenv("GCRACE_SEEDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("GCRACE_SEEDS: %q", s)
		}
		n = v
	} else if testing.Short() {
		n = max(1, n/4)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

// TestGCRacesWriters is the model-based test: seeded random schedules of
// writers with GC cycles interleaved between (and inside) their steps. No
// reachable object is ever deleted, and garbage older than a cycle's cutoff
// is gone after it. A longer run: GCRACE_SEEDS=500 go test -race -run GCRaces.
func TestGCRacesWriters(t *testing.T) {
	start := time.Now()
	var (
		mu            sync.Mutex
		total         = runStats{points: make(map[string]int)}
		ranConcurrent bool // an even seed ran, with its concurrent writer
	)
	t.Run("seeds", func(t *testing.T) {
		for _, seed := range seeds(t, 5) {
			ranConcurrent = ranConcurrent || seed%2 == 0
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				t.Parallel()
				cfg := defaultRun
				cfg.concurrent = seed%2 == 0
				cfg.optimized = true
				msg, st := runSeed(t, seed, cfg, wiring{})
				if msg != "" {
					t.Fatal(msg)
				}
				mu.Lock()
				defer mu.Unlock()
				total.steps += st.steps
				total.cycles += st.cycles
				total.prepareCalls += st.prepareCalls
				total.deleted += st.deleted
				total.marked += st.marked
				total.legacy += st.legacy
				total.optimized += st.optimized
				total.skipped += st.skipped
				for p, n := range st.points {
					total.points[p] += n
				}
			})
		}
	})
	if t.Failed() {
		return
	}
	t.Logf("%d writer steps, %d GC cycles (%d Prepare calls), %d objects deleted (%d of the flat layout), in %s",
		total.steps, total.cycles, total.prepareCalls, total.deleted, total.legacy, time.Since(start).Round(time.Millisecond))
	t.Logf("%d of the marks were optimized runs, which skipped %d slices", total.optimized, total.skipped)
	for _, p := range slices.Sorted(maps.Keys(total.points)) {
		t.Logf("  %5d writer steps %s", total.points[p], p)
	}
	if total.cycles == 0 || total.deleted == 0 || total.legacy == 0 || total.optimized == 0 {
		t.Fatalf("the schedule exercised nothing: %+v", total)
	}
	// Every point of the cycle where writers can run must have seen some:
	// a cycle that never yields to writers would pass without racing them.
	for _, p := range racePoints {
		if total.points[p] == 0 {
			t.Errorf("no writer step ran at %q: the GC cycles raced nothing there", p)
		}
	}
	if ranConcurrent && total.points[concurrentWriter] == 0 {
		t.Errorf("the concurrent writer never ran a step during a cycle")
	}
}

// racePoints are the points of a GC cycle where the hooks run writers
// (see writerStepFrom for how a point is named).
var racePoints = []string{
	"export: scanning",
	"export: before next branch",
	"export: between Prepare calls",
	"export: reading copy records",
	"after the export",
	"retention: before next branch",
	"before Mark",
	"Mark: listing",
	"Mark: reading committed",
	"between Mark and Sweep",
	"Sweep: between deletes",
}

// concurrentWriter names the steps of the writer goroutine that runs in
// parallel with a cycle.
const concurrentWriter = "concurrent writer"

// The failure messages of the two invariants.
const (
	deletedLive = "GC deleted reachable object"
	survived    = "survived a cycle"
)

// TestMutationsAreCaught proves the race test's power: each sub-test wires
// the GC cycle wrongly, the way a host could, and asserts that the
// invariant catches it (a safety mutation must be caught by the
// deleted-a-reachable-object check, a liveness mutation by the
// garbage-survived check), searching seeds until one does. Most mutations
// are caught by the first seed or two; the rename race of the copy trailer
// by about every other seed.
func TestMutationsAreCaught(t *testing.T) {
	mutations := []struct {
		name  string
		wire  wiring
		catch string // the invariant that must catch it
	}{
		// Without copy records, a rename that moves an object from a path
		// the export has not reached to one it has passed hides it.
		{"DropCopyTrailer", wiring{noTrailer: true}, deletedLive},
		// An address handed out just under the link TTL before the export,
		// linked after its branch was scanned, is protected only by age
		// measured from the export's start.
		{"CutoffAnchoredAtMark", wiring{cutoffAtMark: true}, deletedLive},
		// The same, anchored late: after each Prepare call, so at the
		// export's end, when its calls may already have passed the path of
		// a later link. (Anchored after the first call only, the shift is
		// mostly within the staging margin, and the schedules catch it too
		// rarely to prove anything.)
		{"ExportStartAfterPrepare", wiring{startAfterPrepare: true}, deletedLive},
		// A commit made during the export moves staged objects into a
		// commit the early committed listing did not see.
		{"CommittedBeforeUncommitted", wiring{committedFirst: true}, deletedLive},
		// Objects staged only on the skipped branch are unprotected.
		{"SkipOneBranch", wiring{skipMain: true}, deletedLive},
		// main's longer retention is what keeps its older commits.
		{"IgnorePerBranchRetention", wiring{ignoreBranchDays: true}, deletedLive},
		// MinAge under the link TTL deletes uploads not yet linked.
		{"MinAgeBelowLinkTTL", wiring{unsafeMinAge: true}, deletedLive},
		// Liveness: keeping expired commits keeps their garbage.
		{"KeepExpiredCommits", wiring{keepAllCommits: true}, survived},
		// Liveness: deletes that silently do nothing leave the garbage.
		{"LostDeletes", wiring{lostDeletes: true}, survived},
	}
	const tries = 40
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1); seed <= tries; seed++ {
				msg, _ := runSeed(t, seed, defaultRun, m.wire)
				if msg != "" {
					if !strings.Contains(msg, m.catch) {
						t.Fatalf("caught, but not by the %q invariant:\n%s", m.catch, msg)
					}
					lines := strings.SplitN(msg, "\n", 3)
					t.Logf("caught: %s", strings.Join(lines[:min(2, len(lines))], " |"))
					return
				}
			}
			t.Fatalf("mutation %s went unnoticed for seeds 1..%d", m.name, tries)
		})
	}
}
