// Package faults holds a test of lakegc's GC cycle over a store that
// fails. Its one function, RunWorld, runs and checks one world; the test
// runs it, and so does the soak command (tests/soak), for as long as
// asked.
//
// Each world is a small versioned store (two branches with staging areas
// and commits spread over five simulated days, retention rules, objects in
// a fileblob bucket whose modification times are set to their simulated
// upload times) and a faultblob wrapper around its bucket that fails, by
// a seeded PRNG, on a share of the calls of each operation: throttling and
// permanent errors, stalls, truncated reads and listings cut short. Three
// cycles of lakegc.Collect with Sweep run through the wrapper, then one
// without faults. After every cycle the test checks that:
//
//   - Collect returned (a panic fails the test);
//   - no live object was deleted: staged, in a branch head, or younger
//     than the cycle's cutoff;
//   - a cycle that returned no error accounted for every candidate
//     (deleted, already gone, or counted failed or refused, as failed/
//     lists them), left none of the uncounted ones in the bucket, and
//     marked all the old garbage still there;
//   - the cycle without faults deleted every old garbage object: a faulty
//     run leaves nothing that blocks the next.
//
// TestCollectWithFaults runs 40 worlds (160 cycles; 10 with -short);
// run longer locally with
//
//	go test -run CollectWithFaults -faults.worlds=2000 ./tests/faults/
//	FAULTS_WORLDS=2000 go test -run CollectWithFaults ./tests/faults/
//	go test -run CollectWithFaults -faults.seed=17 -v ./tests/faults/  # replay one world
package faults
