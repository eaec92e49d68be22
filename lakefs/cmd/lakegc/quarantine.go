package main

import (
	"flag"

	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/azdelete"
	"github.com/lakegc/lakegc/sweep/gcsdelete"
	"github.com/lakegc/lakegc/sweep/quarantine"
)

// addQuarantineFlag adds --quarantine to a command that sweeps (gc --sweep,
// and sweep): its candidates are moved into the run's quarantine instead of
// deleted, for restore to put back and purge to delete later.
func addQuarantineFlag(fs *flag.FlagSet, quarantine *bool) {
	fs.BoolVar(quarantine, "quarantine", false, "with a sweep, move each candidate into the run's quarantine instead of deleting it: \"lakegc restore\" puts objects back, \"lakegc purge\" deletes old quarantines")
}

// quarantineOptions are the options a command that calls sweep.Sweep
// itself adds for --quarantine.
func quarantineOptions(on bool) []sweep.SweepOption {
	if !on {
		return nil
	}
	return []sweep.SweepOption{sweep.WithMover(quarantine.Mover{})}
}

// classifierOptions read Azure's and GCS's refusals, which gocloud's codes
// blur, for restore and purge as package host does for gc and sweep.
func classifierOptions() []sweep.SweepOption {
	return []sweep.SweepOption{
		sweep.WithErrorClassifier(azdelete.Classifier{}),
		sweep.WithErrorClassifier(gcsdelete.Classifier{}),
	}
}
