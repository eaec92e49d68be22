// Package crash holds crash tests of lakegc: a GC step killed with SIGKILL
// at a chosen bucket operation, then run again until it finishes. It has
// no API: everything is in its tests.
//
// # What runs
//
// Each chain builds a world — a small versioned store (three branches with
// staging areas and commits over five simulated days, retention rules, a
// few hundred objects in a fileblob bucket in a temporary folder, dated by
// their simulated upload times, one of them in the old flat layout) — and
// runs one step on it in a child process, a re-exec of the test binary
// (os.Args[0] -test.run=^TestCrashChild$), so that the bucket, the spill
// folders and the host's own records survive the kill:
//
//   - export: the uncommitted export as a host drives it — it names the
//     run, then calls uncommitted.Preparer.Prepare with a size budget of a
//     few rows, recording the continuation token after each call in its own
//     file, and after a crash continues from the last token it recorded;
//   - mark: sweep.Mark of a finished export and the branches' heads, with
//     the smallest memory budget (so that it spills), rerun with the same
//     run ID (ErrRunExists means a kill came after its summary);
//   - sweep: sweep.Sweep of a finished mark, one batch at a time, rerun;
//   - resweep: the same, of a mark swept once already through a deleter
//     that was refused a fifth of the deletes (so that failed/ and
//     sweep.json exist when the second sweep is killed);
//   - collect: the whole cycle, lakegc.Collect with Sweep, the host keeping
//     the run IDs its Progress reports, and after a crash resuming as the
//     root package documents: ResumeMark when that mark's summary says
//     success, else ResumeExport when an export was reported, else a new
//     cycle;
//   - quarantine: sweep.Sweep with the quarantine's Mover of a finished mark,
//     one batch at a time, rerun; restore: quarantine.Restore of a finished
//     quarantine, rerun; purge: quarantine.Purge of a finished quarantine, rerun.
//
// The child wraps the bucket in a driver that counts operations — listing
// pages, reads, Attributes, each Write of an object (after its bytes
// reached the store: a partial object), each Close (before it commits),
// each commit (after Close, before the caller hears of it), deletes — and
// at the operation named by CRASH_KILL writes what it was doing to a file
// and sends itself SIGKILL. So kills land inside a write before Close,
// between the mark's deleted/ part and its summary.json, between delete
// batches (the first delete of each batch after the first is a kind of its
// own), between an export's last file and its manifest, and anywhere else
// the step touches the bucket. The first kill of a chain picks a kind of
// operation (op and file: "close mark-summary", "delete data", ...), the
// chains of a step taking the kinds in turn, then one operation of that
// kind in a trace of the step run in the test process on a copy of the
// world; the later kills of the chain (up to -crash.kills-per-chain,
// default 4) pick an operation in the first half of that trace, and the
// last child runs to the end. Every choice is drawn from the chain's seed:
// a chain is reproducible, up to the order in which concurrent listings,
// deletes and uploads (the five a mark closes at once: the candidates,
// three records and the unrecognized objects' report) reach the counter.
// The whole cycle, with the most kinds of operation, gets two chains for
// every one of the other steps.
//
// # What is checked
//
// After every child, killed or not, against the world's model:
//
//   - no live object deleted: staged, in a branch's head, or younger than
//     the cutoff;
//   - no partial object visible: every file under the storage prefix is
//     whole (a Parquet file with its footer, whole JSON, a whole commits
//     report), no fileblob temporary file is in the bucket, and an object
//     whose write the kill interrupted is not there unless it was before;
//   - no export reads as complete unless it is: uncommitted.ReadRun of
//     every export run either fails with ErrIncomplete (or ErrNoRun) or
//     yields every staged address exactly once, and a run the host or
//     Collect recorded as done reads back;
//   - no mark reads as succeeded unless it is: sweep.ReadSummary either
//     finds no summary, or one that parses; one that says success has
//     readable candidates, none live, as many as it says (for the mark step,
//     exactly the model's); a sweep.json beside it accounts for them, and
//     its failed and refused counts are the rows of failed/;
//   - for the quarantine steps: every candidate of the mark at its place or
//     in the quarantine (after a purge, none back at its place), and no
//     object left in a quarantine without its record, which a rerun of the
//     purge needs.
//
// After the child that finishes: the export is recorded done; the mark's
// summary says success; every candidate of the sweep is gone; every
// candidate is in the quarantine and none at its place, or after a restore
// the reverse, or after a purge nothing is left of the quarantine; the cycle's
// export and mark are done and every old garbage object is gone; and no
// spill folder (lakegc-mark-<pid>-<random>) is left in the mark's temporary
// folder, though the killed children left some. (A cycle whose rerun only
// swept a finished mark, ResumeMark, runs no Mark: the folder of the Mark
// killed after its summary is left to the next Mark, so then the test runs
// a new cycle and checks that it removed it.)
//
// The tests found two bugs, each fixed with a regression test in package
// sweep: a Mark rerun after a kill that came after its summary returned
// ErrRunExists before removing the killed Mark's spill folder; and a second
// Sweep killed after it had removed failed/ left the first sweep's
// sweep.json, whose counts no longer matched failed/. Planting the export's
// old file naming (a name per attempt) makes the export and collect chains
// report duplicate rows; writing the summary before the candidates makes
// the mark and collect chains report a summary that says success beside
// candidates that do not match it.
//
// # Running it
//
// TestCrash aims at 320 kills (80 with -short), spread over the eight steps
// in chains of four; it logs how many kills landed on each kind of
// operation of each step, and the kinds no kill reached:
//
//	go test -race -run 'TestCrash$' -v ./tests/crash/
//	CRASH_KILLS=2000 go test -run 'TestCrash$' -v ./tests/crash/
//	go test -run 'TestCrash$' -v ./tests/crash/ -args -crash.kills=2000 -crash.kills-per-chain=8
//	go test -run 'TestCrash/chains/collect/seed=7$' -v ./tests/crash/  # replay one chain
//
// The worlds are made in $CRASH_TMPDIR, else in /dev/shm where the system
// has it (a chain creates thousands of small files: on a virtual machine's
// disk a file can take 5 ms to create, on tmpfs 0.1 ms), else in the test's
// temporary folder. The tests need a Unix system (SIGKILL, flock).
package crash
