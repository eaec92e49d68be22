package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lakegc/lakegc/tests/faults"
)

func main() {
	duration := flag.Duration("duration", time.Minute, "how long to run")
	seed := flag.Uint64("seed", 1, "the first world's seed")
	verbose := flag.Bool("v", false, "log every cycle's faults")
	flag.Parse()
	os.Exit(run(os.Stdout, *duration, *seed, *verbose))
}

// fatal is the panic of reporter.Fatalf.
type fatal struct{ msg string }

// reporter stands in for a *testing.T in faults.RunWorld, for one world.
type reporter struct {
	out      io.Writer
	seed     uint64
	verbose  bool
	errors   int
	cleanups []func()
}

func (r *reporter) Errorf(format string, args ...any) {
	r.errors++
	fmt.Fprintf(r.out, "VIOLATION (seed %d): %s\n", r.seed, fmt.Sprintf(format, args...))
}

func (r *reporter) Fatalf(format string, args ...any) { panic(fatal{fmt.Sprintf(format, args...)}) }
func (r *reporter) Fatal(args ...any)                 { panic(fatal{fmt.Sprint(args...)}) }

func (r *reporter) Logf(format string, args ...any) {
	if r.verbose {
		fmt.Fprintf(r.out, "seed %d: %s\n", r.seed, fmt.Sprintf(format, args...))
	}
}

func (r *reporter) TempDir() string {
	dir, err := os.MkdirTemp("", "lakegc-soak-")
	if err != nil {
		r.Fatal(err)
	}
	r.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func (r *reporter) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// world runs one world, turning a Fatal into an error.
func (r *reporter) world(ctx context.Context, st *faults.Stats) {
	defer func() {
		for _, f := range slices.Backward(r.cleanups) {
			f()
		}
		if p := recover(); p != nil {
			f, ok := p.(fatal)
			if !ok {
				panic(p)
			}
			r.errors++
			fmt.Fprintf(r.out, "FATAL (seed %d): %s\n", r.seed, f.msg)
		}
	}()
	faults.RunWorld(ctx, r, r.seed, st, r.verbose)
}

func run(out io.Writer, duration time.Duration, seed uint64, verbose bool) int {
	ctx := context.Background()
	st := &faults.Stats{Counts: map[string]int64{}}
	start := time.Now()
	lastReport := start
	worlds, errors := 0, 0 // errors: every violation, panic or fatal error reported
	report := func(final bool) {
		what := "so far"
		if final {
			what = "done"
		}
		fmt.Fprintf(out, "%s after %v: %d worlds (seeds %d-%d), %d cycles (%d failed with an error), %d objects written, %d deleted, %d failed/ entries, %d faults injected, %d violations\n",
			what, time.Since(start).Round(time.Second), worlds, seed, seed+uint64(max(worlds, 1))-1, st.Cycles, st.Failed,
			st.Written, st.Deleted, st.FailedEntries, st.Faults, errors)
	}
	for worlds == 0 || time.Since(start) < duration {
		r := &reporter{out: out, seed: seed + uint64(worlds), verbose: verbose}
		r.world(ctx, st)
		errors += r.errors
		worlds++
		if time.Since(lastReport) >= 30*time.Second {
			report(false)
			lastReport = time.Now()
		}
	}
	report(true)
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(st.Counts)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, st.Counts[k]))
	}
	fmt.Fprintf(out, "faults by kind: %s\n", strings.Join(kinds, ", "))
	if errors > 0 {
		return 1
	}
	return 0
}
