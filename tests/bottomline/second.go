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
	bn.second = true
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
	clone := bn.store.Clone()
	if sec.Clean, err = bn.cycle(ctx, clone, false); err != nil {
		return nil, fmt.Errorf("clean second cycle: %w", err)
	}
	sec.CleanCheck = checkDeleted(bn.h, ch, clone)
	// Let the clone go, and the export it holds in memory: the optimized
	// cycle's resident set is then measured as the clean one's was, beside
	// one store.
	sec.Clean.Store = nil
	if optimized {
		if sec.Optimized, err = bn.cycle(ctx, bn.store, true); err != nil {
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
