package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// result is what a run did, for the tests.
type result struct {
	story *story
	gc    *gcRun
	ok    bool // the mark matched the story, and the sweep kept every live object
}

// run plays the story, runs one GC cycle and prints both.
func run(ctx context.Context, cfg config) (*result, error) {
	log := &journal{w: cfg.out, clock: cfg.clock}
	l, err := newLake(cfg.bucket, cfg.namespace, cfg.clock, cfg.touch, log)
	if err != nil {
		return nil, err
	}
	s := &story{lake: l, fates: map[string]fate{}, landing: cfg.landing}

	log.printf("gccycle: one garbage collection of a small versioned store, built on lakegc\n")
	log.printf("  namespace  %s (%s)\n", cfg.namespace, cfg.where)
	log.printf("  time       simulated: day 0 is %s; the GC runs on day 30\n\n", cfg.clock.start.Format("2006-01-02 15:04 MST"))
	log.printf("A month of history\n")
	if err := s.history(ctx); err != nil {
		return nil, err
	}

	cfg.clock.set(30, 0, 0)
	log.printf("\nGC preparation, %s, while the store keeps working\n", strings.TrimSpace(cfg.clock.label(cfg.clock.Now())))
	gc, err := l.collect(ctx, cfg.gc, func(next *uncommitted.Checkpoint) error {
		return s.duringExport(ctx, next)
	})
	if err != nil {
		return nil, err
	}
	res := &result{story: s, gc: gc}
	res.ok = printGC(log, cfg, s, gc)
	if gc.swept != nil {
		res.ok = printSweep(ctx, log, l, s, gc) && res.ok
	}
	return res, log.err
}

// printGC prints the GC cycle and returns whether its mark matches the
// story.
func printGC(log *journal, cfg config, s *story, gc *gcRun) bool {
	printPreparation(log, cfg.clock, s, gc)
	printCandidates(log, s, gc)
	printKept(log, s)
	return printCheck(log, s, gc)
}

// printPreparation prints the steps of the cycle, in the order they ran.
func printPreparation(log *journal, clock *simClock, s *story, gc *gcRun) {
	log.printf("  1. uncommitted export  run %s: %d files, %d rows (%d from copy records)\n",
		gc.exportRunID, gc.exportFiles, gc.exportRows, gc.copyRecords)
	log.printf("                         %s\n", gc.exportDir)
	log.printf("  2. GC rules            %s\n", describeRules(gc))
	ids := make([]string, len(gc.active))
	for i, a := range gc.active {
		ids[i] = a.CommitID
	}
	log.printf("  3. active commits      %d of %d: %s\n", len(gc.active), gc.commits, strings.Join(ids, " "))
	log.printf("                         %s\n", gc.commitCSV)
	log.printf("  4. mark                run %s: listed %d objects in %d of %d slices, kept %d, marked %d\n",
		gc.runID, gc.counts.Listed, gc.slices-gc.slicesSkipped, gc.slices, gc.counts.Kept, gc.summary.NumDeletedObjects)
	margin := gc.exportStart.Sub(gc.summary.CutoffTime)
	log.printf("                         cutoff %s: the export's start (%s) − %s minimum age − %s clock skew − %s staging margin;\n",
		clock.label(gc.summary.CutoffTime), clock.label(gc.exportStart), duration(gc.minAge), duration(margin-gc.minAge-sweep.StagingMargin), duration(sweep.StagingMargin))
	log.printf("                         the %d slices from then on hold only newer objects and were not listed\n", gc.slicesSkipped)
	if late, ok := s.fates[s.inFlightAddress]; ok {
		markCutoff := gc.summary.StartTime.Add(-margin)
		if addr, err := pathprovider.Parse(s.inFlightAddress); err == nil && addr.SliceTime.Before(markCutoff) {
			log.printf("                         (anchored at the mark's start, %s, the cutoff would be %s,\n", clock.label(gc.summary.StartTime), clock.label(markCutoff))
			log.printf("                         and %s would be deleted)\n", late.what)
		}
	}
	log.printf("                         report: %s (summary.json, deleted/)\n", namespace.ReportFolder(namespace.DefaultStoragePrefix, gc.runID))
}

// printCandidates prints what the mark picked, with each object's story.
func printCandidates(log *journal, s *story, gc *gcRun) {
	var total int64
	for _, n := range gc.sizes {
		total += max(n, 0)
	}
	verb := "would delete"
	if gc.swept != nil {
		verb = "deletes"
	}
	log.printf("\nWhat a sweep %s: %d objects, %s\n", verb, len(gc.candidates), size(total))
	for _, key := range gc.candidates {
		f, ok := s.fates[key]
		if !ok {
			f = fate{what: "(unknown to the store)"}
		}
		log.printf("  %s %8s  %s\n        %s\n", key, size(gc.sizes[key]), f.what, f.why)
	}
}

// printKept prints the story's live objects, grouped by why they live.
func printKept(log *journal, s *story) {
	byWhy := map[string][]string{}
	kept := 0
	for _, f := range s.fates {
		if !f.garbage {
			byWhy[f.why] = append(byWhy[f.why], f.what)
			kept++
		}
	}
	log.printf("\nWhat it keeps, by the store's account: %d objects, and all of %s/, which a GC never lists\n", kept, namespace.DefaultStoragePrefix)
	whys := slices.SortedFunc(maps.Keys(byWhy), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(byWhy[b]), len(byWhy[a])), strings.Compare(a, b))
	})
	for _, why := range whys {
		whats := byWhy[why]
		slices.Sort(whats)
		what := whats[0]
		if len(whats) > 1 {
			what += " … " + whats[len(whats)-1]
		}
		log.printf("  %4d  %s\n        %s\n", len(whats), what, why)
	}
}

// printCheck compares the mark with the story's garbage and prints the
// outcome; it returns whether they are the same set.
func printCheck(log *journal, s *story, gc *gcRun) bool {
	missed, extra := compareMark(s, gc)
	ok := len(missed) == 0 && len(extra) == 0
	if ok {
		log.printf("\nCheck: the marked set is exactly the story's garbage (%d objects).\n", len(gc.candidates))
	} else {
		log.printf("\nCheck FAILED: the mark differs from the story.\n")
		for _, k := range missed {
			log.printf("  not marked, but garbage: %s (%s)\n", k, s.fates[k].what)
		}
		for _, k := range extra {
			log.printf("  marked, but live:        %s (%s)\n", k, s.fates[k].what)
		}
	}
	if gc.swept == nil {
		log.printf("Dry run: nothing was deleted. Run with -sweep to delete the %d objects.\n", len(gc.candidates))
	}
	return ok
}

// compareMark returns the story's garbage that was not marked, and the
// marked objects that the story keeps.
func compareMark(s *story, gc *gcRun) (missed, extra []string) {
	marked := map[string]bool{}
	for _, k := range gc.candidates {
		marked[k] = true
		if f, ok := s.fates[k]; !ok || !f.garbage {
			extra = append(extra, k)
		}
	}
	for k, f := range s.fates {
		if f.garbage && !marked[k] {
			missed = append(missed, k)
		}
	}
	slices.Sort(missed)
	return missed, extra
}

func printSweep(ctx context.Context, log *journal, l *lake, s *story, gc *gcRun) bool {
	r := gc.swept
	how := "one by one"
	if gc.batchDeletes {
		how = "with S3 DeleteObjects"
	}
	log.printf("\nSweep (%s): deleted %d, already gone %d, failed %d, refused %d (report: sweep.json, failed/)\n",
		how, r.Deleted, r.AlreadyGone, r.Failed, r.Refused)
	var live, gone, wrong int
	for key, f := range s.fates {
		exists, err := l.bucket.Exists(ctx, key)
		if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			log.printf("  cannot check %s: %v\n", key, err)
			wrong++
			continue
		}
		switch {
		case f.garbage && !exists:
			gone++
		case !f.garbage && exists:
			live++
		default:
			log.printf("  unexpected: %s (%s) exists=%v\n", key, f.what, exists)
			wrong++
		}
	}
	if wrong == 0 {
		log.printf("Check: the %d garbage objects are gone; the %d live objects are all still there.\n", gone, live)
	}
	return wrong == 0
}

func describeRules(gc *gcRun) string {
	parts := []string{fmt.Sprintf("default %d days", gc.rules.DefaultRetentionDays)}
	for _, b := range slices.Sorted(maps.Keys(gc.rules.BranchRetentionDays)) {
		parts = append(parts, fmt.Sprintf("%s %d days", b, gc.rules.BranchRetentionDays[b]))
	}
	return strings.Join(parts, ", ") + " (read back from " + namespace.RulesKey(namespace.DefaultStoragePrefix) + ")"
}

// duration prints a whole number of hours or minutes as a person writes it.
func duration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return d.String()
}

// size prints a byte count as a person reads it.
func size(n int64) string {
	switch {
	case n < 0:
		return "?"
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
