package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lakegc/lakegc"
)

// Second is the figures of a first cycle and of the second cycles after a
// churn: a clean one, against a clone of the store as the churn left it,
// and an optimized one (if asked), against the store itself, from the
// first cycle's records.
type Second struct {
	First, Clean, Optimized *Result
	Churn                   float64
	ch                      *churn
	// CleanCheck and OptimizedCheck are checkDeleted's verdicts on the
	// stores after each second cycle: nil when exactly the garbage of both
	// cycles is gone.
	CleanCheck, OptimizedCheck error
}

// runSecond runs a first cycle, the churn, and the second cycles.
func runSecond(ctx context.Context, sc Scale, o Options, c float64, optimized bool) (*Second, error) {
	bn, err := newBench(ctx, sc, o)
	if err != nil {
		return nil, err
	}
	bn.second, bn.churn = true, c
	ch, err := newChurn(bn.h, c)
	if err != nil {
		return nil, err
	}
	sec := &Second{Churn: c, ch: ch}
	if sec.First, err = bn.cycle(ctx, bn.store, false); err != nil {
		return nil, fmt.Errorf("first cycle: %w", err)
	}
	if err := checkDeleted(bn.h, nil, bn.store); err != nil {
		return nil, fmt.Errorf("first cycle: %w", err)
	}
	if err := ch.apply(ctx, bn.store); err != nil {
		return nil, fmt.Errorf("churn: %w", err)
	}
	cycle := bn.cycle
	if bn.o.OwnMemory {
		cycle = bn.childCycle
	}
	clone := bn.store.Clone()
	if sec.Clean, err = cycle(ctx, clone, false); err != nil {
		return nil, fmt.Errorf("clean second cycle: %w", err)
	}
	sec.CleanCheck = checkDeleted(bn.h, ch, clone)
	// Let the clone go, and the export it holds in memory: the optimized
	// cycle's resident set is then measured as the clean one's was, beside
	// one store.
	sec.Clean.Store = nil
	if optimized {
		if sec.Optimized, err = cycle(ctx, bn.store, true); err != nil {
			return nil, fmt.Errorf("optimized second cycle: %w", err)
		}
		sec.OptimizedCheck = checkDeleted(bn.h, ch, bn.store)
	}
	return sec, nil
}

// err is the first of the checks' errors.
func (sec *Second) err() error {
	if sec.CleanCheck != nil {
		return fmt.Errorf("clean second cycle: %w", sec.CleanCheck)
	}
	if sec.OptimizedCheck != nil {
		return fmt.Errorf("optimized second cycle: %w", sec.OptimizedCheck)
	}
	// A child's peak is the GC's own (-own-memory): over the budget + 64
	// MiB fails the run as a live object deleted does.
	for _, c := range []struct {
		name string
		r    *Result
	}{{"clean", sec.Clean}, {"optimized", sec.Optimized}} {
		if r := c.r; r != nil && r.Child && r.Total.PeakRSS > r.Opts.MemoryBudget+budgetSlack {
			return fmt.Errorf("%s second cycle: the GC's own peak RSS %d MiB is over the budget + 64 MiB (%d MiB)", c.name, r.Total.PeakRSS>>20, (r.Opts.MemoryBudget+budgetSlack)>>20)
		}
	}
	return nil
}

// markWall is the time of the mark's phases.
func markWall(r *Result) time.Duration {
	var d time.Duration
	for _, p := range r.Phases {
		if strings.HasPrefix(p.Name, lakegc.PhaseMark) {
			d += p.Wall
		}
	}
	return d
}

// print writes the three cycles' tables and their comparison.
func (sec *Second) print(w io.Writer) {
	ch := sec.ch
	fmt.Fprintln(w, "== first cycle (clean)")
	sec.First.print(w)
	fmt.Fprintf(w, "== churn %v: %d new objects in %d new slices (%d garbage), %d staged and %d committed objects dropped, %d late objects in recent slices; %d garbage\n",
		sec.Churn, ch.objects, len(ch.slices), ch.objects/period*garbagePer, ch.droppedOf(ch.h.sc.staged()), ch.droppedOf(ch.h.sc.committed()),
		len(ch.late), ch.garbage())
	fmt.Fprintln(w, "== second cycle, clean (a clone of the store)")
	sec.Clean.print(w)
	rows := []*Result{sec.Clean}
	if sec.Optimized != nil {
		fmt.Fprintln(w, "== second cycle, optimized")
		sec.Optimized.print(w)
		rows = append(rows, sec.Optimized)
	}
	fmt.Fprintf(w, "== second cycles\n%-10s %-10s %8s %8s %7s %7s %10s %10s %10s %8s %8s %8s %-13s %6s  %s\n",
		"run", "kind", "lists", "slice", "slices", "skipped", "wall", "floor", "mark", "rss MiB", "marked", "deleted", "keep source", "parts", "check")
	checks := []error{sec.CleanCheck, sec.OptimizedCheck}
	for i, r := range rows {
		sum, check := r.Report.Mark.Summary, "exactly the garbage deleted"
		if checks[i] != nil {
			check = checks[i].Error()
		}
		src := sum.KeepSource
		if src == "" {
			src = "committed"
		}
		fmt.Fprintf(w, "%-10s %-10s %8d %8d %7d %7d %10s %10s %10s %8.0f %8d %8d %-13s %6d  %s\n",
			[]string{"clean", "optimized"}[i], sum.RunKind, r.Total.Requests.ListPages, r.DataList, sum.SlicesListed, sum.SlicesSkipped,
			r.Total.Wall.Round(time.Millisecond), r.Total.Floor.Round(time.Millisecond), markWall(r).Round(time.Millisecond), float64(r.Total.PeakRSS)/(1<<20),
			r.Report.Mark.Marked, r.Report.Sweep.Deleted, src, sum.PartsRead, check)
	}
	for i, r := range rows {
		fmt.Fprintf(w, "%s: %s\n", []string{"clean", "optimized"}[i], ownPeak(r))
	}
	if o, c := sec.Optimized, sec.Clean; o != nil {
		fmt.Fprintf(w, "optimized / clean: lists %.2f%% (slices' pages %.2f%%), wall %.2f%%, mark's wall %.2f%%\n",
			pct(o.Total.Requests.ListPages, c.Total.Requests.ListPages), pct(o.DataList, c.DataList),
			pct(int64(o.Total.Wall), int64(c.Total.Wall)), pct(int64(markWall(o)), int64(markWall(c))))
	}
}

func pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// budgetSlack is what a cycle's resident set may hold past the memory
// budget: the and Mark's bound is the budget + 64 MiB.
const budgetSlack = 64 << 20

// ownPeak says a second cycle's own peak memory against the budget + 64
// MiB (Mark's bound, and the issue's).
func ownPeak(r *Result) string {
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	bound := r.Opts.MemoryBudget + budgetSlack
	if !r.Child {
		return fmt.Sprintf("GC's own peak: not measured (this process holds the store, the clone and the earlier cycles too; "+
			"-own-memory runs each second cycle in a process of its own) (budget+64 = %.0f)", mib(bound))
	}
	verdict := "within"
	if r.Total.PeakRSS > bound {
		verdict = "OVER"
	}
	line := fmt.Sprintf("GC's own peak: %.0f MiB (budget+64 = %.0f): %s; the child's VmHWM, %.0f MiB at its start, heap in use %.0f MiB at most, live %.0f MiB",
		mib(r.Total.PeakRSS), mib(bound), verdict, mib(r.StartRSS), mib(r.Total.PeakHeap), mib(r.Total.PeakLive))
	if a := r.Attributed; a != nil {
		line += fmt.Sprintf("; its heap profile at the peak live heap (%.0f MiB): lakegc %.0f MiB, harness %.0f MiB, other %.0f MiB in use",
			mib(r.Profiled), mib(a[attrLakegc]), mib(a[attrHarness]), mib(a[attrOther]))
	}
	return line
}
