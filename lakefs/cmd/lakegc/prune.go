package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/lakegc/lakegc"
)

// addKeepRunsFlag adds --keep-runs to gc.
func addKeepRunsFlag(fs *flag.FlagSet, keep *int) {
	fs.IntVar(keep, "keep-runs", lakegc.DefaultKeepRuns, "after a run that succeeded, remove the files of older runs (exports, commits reports, GC reports), keeping this many of each kind and what the next optimized run or a pending sweep needs; 0 keeps everything")
}

// summarizePruned prints what a run pruned, for people.
func summarizePruned(w io.Writer, p *lakegc.PruneReport) {
	if p == nil || len(p.Runs) == 0 {
		return
	}
	fmt.Fprintf(w, "pruned %d old run folders: %d objects, %d bytes (%d kept)\n", len(p.Runs), p.Objects, p.Bytes, p.Kept)
}
