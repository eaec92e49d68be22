package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lakegc/lakegc/sweep"
)

// The phases a round runs.
const (
	phaseDuck          = "duck"
	phaseMarkParquet   = "mark-parquet"
	phaseMarkGen       = "mark-gen"
	phaseInputsParquet = "inputs-parquet"
	phaseInputsGen     = "inputs-gen"
)

var allPhases = []string{phaseDuck, phaseMarkParquet, phaseMarkGen, phaseInputsParquet, phaseInputsGen}

// config is what every phase of one benchmark shares.
type config struct {
	dir    string // inputs, and out/<phase>/ for each phase's output
	layout *layout
	memory int64 // bytes, both sides
	duck   duckOptions
}

func (c *config) out(phase string) string { return filepath.Join(c.dir, "out", phase) }

// runPhase sets a phase up, times its work and tears it down, in this
// process.
func runPhase(ctx context.Context, c *config, phase string) (stats, error) {
	out := c.out(phase)
	var (
		run     func() (int64, error)
		closeFn = func() error { return nil }
		err     error
	)
	switch phase {
	case phaseDuck:
		run, closeFn, err = setupDuck(ctx, c.dir, filepath.Join(out, "result.parquet"), filepath.Join(out, "tmp"), c.duck)
	case phaseMarkParquet, phaseMarkGen:
		src := strings.TrimPrefix(phase, "mark-")
		run, err = setupMark(ctx, c.dir, src, c.layout, filepath.Join(out, "report"), filepath.Join(out, "tmp"), c.memory)
	case phaseInputsParquet, phaseInputsGen:
		run, err = setupInputs(ctx, c.dir, strings.TrimPrefix(phase, "inputs-"), c.layout, filepath.Join(out, "report"))
	default:
		err = fmt.Errorf("duckbench: unknown phase %q", phase)
	}
	if err != nil {
		return stats{}, err
	}
	if err := os.MkdirAll(filepath.Join(out, "tmp"), 0o755); err != nil {
		return stats{}, err
	}
	st, err := measure(phase, run)
	return st, errors.Join(err, closeFn())
}

// model is the expected candidate set.
type model struct {
	count int64
	sum   string
}

// verify checks a phase's output against the model: the candidates it
// wrote (read back from its Parquet output), or the keys it read.
func verify(ctx context.Context, c *config, st stats, want model) error {
	var (
		n   int64
		sum string
		err error
	)
	switch st.Phase {
	case phaseDuck:
		n, sum, err = digest(readAddresses(filepath.Join(c.out(st.Phase), "result.parquet")))
	case phaseMarkParquet, phaseMarkGen:
		bucket := newBenchBucket(nil, filepath.Join(c.out(st.Phase), "report"))
		var s *sweep.Summary
		if s, err = sweep.ReadSummary(ctx, bucket, sweep.DefaultStoragePrefix, runID); err == nil && !s.Success {
			err = fmt.Errorf("summary says failure")
		}
		if err == nil && s.NumUnrecognizedObjects != 0 {
			// Mark never marks a key it does not recognize as lakeFS's:
			// the model's candidates would not be Mark's.
			err = fmt.Errorf("sweep.Mark did not recognize %d generated keys (%q the smallest): not of lakeFS's shape", s.NumUnrecognizedObjects, s.UnrecognizedSample[:min(1, len(s.UnrecognizedSample))])
		}
		if err == nil {
			n, sum, err = digest(sweep.Candidates(ctx, bucket, sweep.DefaultStoragePrefix, runID))
		}
	case phaseInputsParquet, phaseInputsGen:
		total := int64(c.layout.total())
		if kept := total - (total+3)/4; st.Rows != total+kept {
			return fmt.Errorf("duckbench: %s read %d keys, want %d listed and %d kept", st.Phase, st.Rows, total, kept)
		}
		return nil
	}
	switch {
	case err != nil:
		return fmt.Errorf("duckbench: %s: read the result: %w", st.Phase, err)
	case n != want.count || sum != want.sum:
		return fmt.Errorf("duckbench: %s wrote %d candidates (sha256 %.16s), want %d (%.16s)", st.Phase, n, sum, want.count, want.sum)
	case st.Rows != n:
		return fmt.Errorf("duckbench: %s reported %d candidates and wrote %d", st.Phase, st.Rows, n)
	}
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("duckbench", flag.ContinueOnError)
	keys := flags.Int("keys", 20_000_000, "listed keys; a quarter are candidates")
	nSlices := flags.Int("slices", 400, "slices the keys spread over (must divide -keys)")
	dir := flags.String("dir", "", "folder of the inputs and outputs (default: $TMPDIR/duckbench-<keys>); inputs already there for the same layout are reused")
	rounds := flags.Int("rounds", 3, "rounds; odd rounds run the phases in reverse order")
	memMiB := flags.Int64("mem", 256, "memory limit of both sides in MiB: Mark's WithMemoryBudget, DuckDB's memory_limit")
	threads := flags.Int("threads", 2, "DuckDB's threads")
	procs := flags.Int("procs", 2, "GOMAXPROCS of the processes that run the phases")
	phases := flags.String("phases", strings.Join(allPhases, ","), "phases of a round")
	duckSet := flags.String("duck-set", "", "further DuckDB settings, name=value[,name=value...], e.g. preserve_insertion_order=false")
	duckFilter := flags.Bool("duck-filter", true, "DuckDB applies the cutoff to last_modified, as Mark does (all keys are old enough, so the result is the same either way)")
	child := flags.String("child", "", "run one phase in this process and print its figures as JSON (used by the parent)")
	cpuProfile := flags.String("cpuprofile", "", "write each phase's CPU profile to this path followed by .<phase>")
	if err := flags.Parse(args); err != nil {
		return err
	}
	l, err := newLayout(*keys, *nSlices)
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = filepath.Join(os.TempDir(), "duckbench-"+strconv.Itoa(*keys))
	}
	c := &config{dir: *dir, layout: l, memory: *memMiB << 20,
		duck: duckOptions{memory: *memMiB << 20, threads: *threads, filter: *duckFilter}}
	if *duckSet != "" {
		c.duck.set = strings.Split(*duckSet, ",")
	}
	ctx := context.Background()
	if *child != "" {
		if *cpuProfile != "" {
			f, err := os.Create(*cpuProfile + "." + *child)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		st, err := runPhase(ctx, c, *child)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(st)
	}

	list := strings.Split(*phases, ",")
	for _, p := range list {
		if !slices.Contains(allPhases, p) {
			return fmt.Errorf("duckbench: unknown phase %q (phases: %s)", p, strings.Join(allPhases, ","))
		}
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	start := time.Now()
	reused, err := writeInputs(c.dir, l)
	if err != nil {
		return err
	}
	what := "written"
	if reused {
		what = "reused"
	}
	fmt.Fprintf(stdout, "inputs %s in %s (%.1fs, not timed): %d listed keys in %d slices, %d kept\n",
		what, c.dir, time.Since(start).Seconds(), l.total(), l.Slices, l.total()-(l.total()+3)/4)
	var want model
	if want.count, want.sum, err = digest(l.candidates()); err != nil {
		return err
	}
	version, err := duckVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "expected: %d candidates, sha256 %.16s\n", want.count, want.sum)
	fmt.Fprintf(stdout, "memory %d MiB both; DuckDB %s, threads %d, settings %q, cutoff filter %v; GOMAXPROCS %d; %d cores; load before %s\n\n",
		*memMiB, version, *threads, *duckSet, *duckFilter, *procs, runtime.NumCPU(), loadavg())

	exe, err := os.Executable()
	if err != nil {
		return err
	}
	const row = "%5v  %-14s  %7v  %7v  %10v  %10v  %9v  %8v  %s\n"
	fmt.Fprintf(stdout, row, "round", "phase", "wall s", "CPU s", "RSS0 MiB", "peak MiB", "rows", "verified", "loadavg after")
	var all []stats
	var failed error
	for r := range *rounds {
		order := slices.Clone(list)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, p := range order {
			if err := os.RemoveAll(c.out(p)); err != nil {
				return err
			}
			cmd := exec.Command(exe, "-child", p, "-keys", strconv.Itoa(*keys), "-slices", strconv.Itoa(*nSlices),
				"-dir", c.dir, "-mem", strconv.FormatInt(*memMiB, 10), "-threads", strconv.Itoa(*threads),
				"-duck-set", *duckSet, "-duck-filter="+strconv.FormatBool(*duckFilter), "-cpuprofile", *cpuProfile)
			cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(*procs))
			cmd.Stderr = os.Stderr
			var buf bytes.Buffer
			cmd.Stdout = &buf
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("duckbench: phase %s: %w", p, err)
			}
			var st stats
			if err := json.Unmarshal(buf.Bytes(), &st); err != nil {
				return fmt.Errorf("duckbench: phase %s printed %q: %w", p, buf.String(), err)
			}
			st.Round = r
			ok := "ok"
			if err := verify(ctx, c, st, want); err != nil {
				ok = "NO"
				failed = errors.Join(failed, err)
			}
			all = append(all, st)
			fmt.Fprintf(stdout, row, r, p, fmt.Sprintf("%.2f", st.Wall), fmt.Sprintf("%.2f", st.cpu()),
				fmt.Sprintf("%.0f", mib(st.RSSStart)), fmt.Sprintf("%.0f", mib(st.PeakRSS)), st.Rows, ok, st.Load)
		}
	}
	os.RemoveAll(filepath.Join(c.dir, "out"))
	fmt.Fprintln(stdout)
	summarize(stdout, list, all)
	return failed
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// summarize prints each phase's median wall and CPU time and its highest
// peak RSS over the rounds, and Mark's own work: a Mark phase's median less
// its inputs' median.
func summarize(w io.Writer, list []string, all []stats) {
	med := func(phase string, f func(stats) float64) (float64, bool) {
		var v []float64
		for _, s := range all {
			if s.Phase == phase {
				v = append(v, f(s))
			}
		}
		if len(v) == 0 {
			return 0, false
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2], true
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
	}
	wall := func(s stats) float64 { return s.Wall }
	cpu := func(s stats) float64 { return s.cpu() }
	peak := func(s stats) float64 { return mib(s.PeakRSS) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tmedian wall s\tmedian CPU s\tmedian peak RSS MiB\t")
	for _, p := range list {
		mw, _ := med(p, wall)
		mc, _ := med(p, cpu)
		mp, _ := med(p, peak)
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.0f\t\n", p, mw, mc, mp)
	}
	tw.Flush()
	for _, src := range []string{fromParquet, fromGen} {
		mw, ok1 := med("mark-"+src, wall)
		iw, ok2 := med("inputs-"+src, wall)
		mc, _ := med("mark-"+src, cpu)
		ic, _ := med("inputs-"+src, cpu)
		if ok1 && ok2 {
			fmt.Fprintf(w, "Mark's own work with inputs from %s: %.2f s wall, %.2f s CPU (mark-%s less inputs-%s)\n", src, mw-iw, mc-ic, src, src)
		}
	}
	if dw, ok := med(phaseDuck, wall); ok {
		for _, src := range []string{fromParquet, fromGen} {
			if mw, ok := med("mark-"+src, wall); ok {
				fmt.Fprintf(w, "mark-%s / duck wall time: %.2f\n", src, mw/dw)
			}
		}
	}
}
