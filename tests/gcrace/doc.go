// Package gcrace holds a model-based test of lakegc's garbage collection
// racing writers. It has no API: everything is in its tests.
//
// The test builds a small versioned store in memory: branches with staging
// areas, commits with parents and creation dates, merges in both parent
// orders (lakeFS's commit versions), an imported root commit of the old flat
// layout, uploads through linkaddr (get-address, upload, VerifyOnce and
// link) into paths from pathprovider, shallow copies and renames recorded
// with copytrack (ForgetBranch on commit, reset and branch deletion),
// deletes, branch creation and deletion, and retention rules with a longer
// main. Every component reads one simulated clock, and the bucket (memblob
// through internal/faultblob, its times checked) stamps objects with it, so
// link TTLs, copy TTLs, retention days and the GC's cutoff are measured in
// simulated days while a run takes milliseconds.
//
// A seeded random schedule interleaves writer steps with full GC cycles —
// copy records expired, the uncommitted export (resumed from its mark, with
// copytrack's addresses as the trailer), retention's active commits and
// their addresses, sweep.Mark (anchored at the export's start) and
// sweep.Sweep — and runs writers inside the cycle: between Prepare calls,
// between the branches and the entries the export scans, while the copy
// records are read, between the branches retention reads, while Mark reads
// the committed addresses and lists the namespace, between Mark and Sweep,
// and between the deletes of Sweep. Even seeds add a writer goroutine that
// runs truly in parallel with the cycle. The test fails if any of these
// points saw no writer step, and logs how many each saw.
//
// In TestGCRacesWriters two marks in three start from the latest run
// (sweep.WithPrevious with sweep.LatestRun, the slice margin set to the
// world's pathprovider interval plus the link TTL and the clock skew), so
// clean and optimized runs mix; the log says how many were optimized and
// how many slices they skipped. The liveness check spares one kind of
// garbage after an optimized run: an object uploaded after its address's
// link TTL, into a slice such a run may not list again, which the next
// clean run deletes. The safety check spares nothing.
//
// An oracle, written from the SPEC's GC model, says at any instant which
// objects are reachable: staged on a branch, in a commit that retention
// keeps, copied less than the copy TTL ago, or uploaded to an address
// handed out less than the link TTL ago. The bucket checks every delete
// against it; after each cycle the test also checks that garbage
// unreachable since before the cycle's cutoff is gone, that nothing outside
// what the GC scans (dummy, other folders, _lakefs/) was touched, and that no
// object vanished without a delete.
//
// TestMutationsAreCaught wires the cycle wrongly on purpose and asserts that
// the invariant catches each: for safety, dropping the copy trailer,
// anchoring the cutoff at Mark or after the first Prepare call, reading
// committed data before the export, skipping a branch, ignoring per-branch
// retention, a minimum age below the link TTL; for liveness, keeping expired
// commits and a deleter that silently deletes nothing.
//
// # Running it
//
//	go test -race ./tests/gcrace/                           # 5 seeds (1 with -short)
//	GCRACE_SEEDS=300 go test -run GCRaces ./tests/gcrace/   # a longer run, minutes
//	GCRACE_SEED=17 go test -run GCRaces -v ./tests/gcrace/  # replay one seed
//
// A failure prints the seed, the step, the violated invariant with the
// reason the object was reachable, and the last 40 steps of the schedule,
// each tagged with the point of the GC cycle it ran in. A seed fixes every
// random choice, but a replay follows the schedule only until the
// process-specific bits of the xids change an export file's size enough to
// move where the size budget splits the export (or, for even seeds, until
// the concurrent writer lands elsewhere): that is why the failure message
// carries the schedule itself.
package gcrace
