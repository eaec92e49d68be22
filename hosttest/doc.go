// Package hosttest races a host's versioned store against lakegc.Collect:
// writers put, overwrite, unstage and commit objects, create and delete
// branches, and upload-then-link through pathprovider and linkaddr with
// slow staging writes, while GC cycles (Collect with Sweep) run in between
// and during their exports, all on one simulated clock. After every cycle,
// and after every staging write, an oracle checks that no live object is
// gone. A host plugs in its store with one call:
//
//	func TestWritersVersusGC(t *testing.T) {
//		res, err := hosttest.Run(context.Background(), newStore(), hosttest.Options{Seed: 1})
//		if err != nil {
//			t.Fatal(err) // a loss names the seed, the cycle, the object and its history
//		}
//		t.Log(res)
//	}
//
// # The oracle
//
// The oracle keeps its own model of the store, written by the same
// operations, and judges by the documented GC model (package lakegc, "The
// host contract"): an object is live when it is staged on a branch, in the
// tree of a branch's HEAD or of a first-parent ancestor newer than the
// branch's retention, or uploaded to an address whose link will still be
// staged (verified, or to be verified in time, and in checked mode staged by
// its deadline). That is a subset of what a correct GC keeps, so every
// object the oracle finds missing is a loss. A loss is the host's store
// disagreeing with its model (an adapter that skips, loses or rewrites
// something), or a break of the contract on the library's side.
//
// # The writers
//
// Each cycle interval holds Options.Ops writer operations at random times:
// direct puts (the host writes the object and stages it at once), linked
// puts (an address handed out and signed, the client's upload some minutes
// to hours later or never, VerifyOnce later still — a third of them just before the
// TTL less linkaddr.StagingMargin runs out, some too late — and the staging
// write up to Options.MaxStagingDelay after the verification), unstages,
// commits, and branches created from another branch's HEAD and deleted;
// one branch, "ingest", is written rarely and never committed, so its
// entries stay staged for days. After the first call of a cycle's export,
// the clock moves a few minutes, and due writes and a few new ones land
// while the rest of the export runs.
//
// Staging goes through linkaddr's Signer.Stage, which undoes a write past
// the link's deadline, as the README shows. Options.UncheckedStaging stages
// without it, as a host that verifies and then writes does: then only the
// staging margin of Verify and of the cutoff stands between a slow write
// and a loss.
//
// # Bounds
//
// A run is deterministic for a seed, stops after Options.Cycles cycles or
// Options.MaxDuration of wall time, whichever comes first, and stops at the
// first loss. Objects live in a fileblob bucket in a temporary directory,
// their modification times set to the simulated clock. The store must keep
// every commit it is given: the oracle's model does.
//
// The harness's own tests prove that a store that drops or skips what it
// should keep is caught. examples/minihost runs it in CI for 150 cycles
// (about 60 simulated hours, a few seconds); BENCHMARKS.md has the figures of a long run, which its test in
// this package runs when LAKEGC_HOSTTEST_CYCLES is set:
//
//	LAKEGC_HOSTTEST_CYCLES=3000 go test -run TestLongRun -timeout 1h ./hosttest/
package hosttest
