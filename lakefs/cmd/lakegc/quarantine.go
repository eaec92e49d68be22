package main

import "flag"

// addQuarantineFlag adds --quarantine to a command that sweeps (gc --sweep,
// and sweep): its candidates are moved into the run's quarantine instead of
// deleted, for restore to put back and purge to delete later.
func addQuarantineFlag(fs *flag.FlagSet, quarantine *bool) {
	fs.BoolVar(quarantine, "quarantine", false, "with a sweep, move each candidate into the run's quarantine instead of deleting it: \"lakegc restore\" puts objects back, \"lakegc purge\" deletes old quarantines")
}
