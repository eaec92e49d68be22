// Command bottomline runs the project's target scale end to end through
// lakegc.Collect, against a simulated S3 bucket (package s3sim) that
// answers every request after a latency: 20 M objects in the namespace,
// 5 M of them staged on 1 K branches, 14 M in the active commits of 30 K,
// and 1 M garbage (the objects of the commits the rules expire), marked
// and swept in delete batches of 1000.
//
// The repository is synthetic, so that nothing but the GC holds memory in
// proportion to it: the host generates its staging area (an
// uncommitted.Source), its commits (a chain of Commits/Branches on each
// branch, the oldest of them expired by 30-day rules) and the committed
// addresses of the active commits; the bucket generates its listings from
// a description (one slice folder per 10,000 objects by default) and keeps
// a bit per object of each slice it deleted from.
//
// The host gives the committed keep set as lakeFS's host does, as ranges
// (lakegc.CommittedParts; -keep parts, the default): the committed objects
// are one logical tree cut into ranges of -range-entries objects (50,000,
// lakeFS's range_raggedness_entries), each range's table in the store,
// written as a commit writes it, and each range read through a range cache
// in the store: one GET of its cache object, or, the first time, a GET of
// its table and a PUT of its cache, one range at a time as Mark's merge
// pulls them (see rangeDesc for what the objects hold). -keep flat gives
// every committed address instead (lakegc.Committed alone).
//
// Run the full size (under a minute a cycle at 50 ms, 46 s in
// BENCHMARKS.md; its spill files peaked at 143 MiB under -tmp in
// BENCHMARKS.md's "A mark from an inventory report"):
//
//	go run ./tests/bottomline -objects 20000000 -latency 50ms
//
// and a smaller one with -objects 2000000 -branches 100 -commits 3000.
// It prints, for each phase of the cycle (the export, the rules, the
// active commits, the mark's steps — reading the keep set while the
// listing starts, the rest of the listing, joining, writing the candidates
// — and the sweep's), its wall time, the
// floor its requests set (the requests one at a time, the mark's list
// pages divided by the listing concurrency and the sweep's batches by the
// delete concurrency, the most that sweep's windows reach by default, which
// Collect does not change),
// its requests by kind, and its peak RSS (VmHWM, reset at the start of
// each phase) and sampled peak heap.
//
// With -churn c (and -optimized) it runs a second cycle after churn: once
// the first cycle is done, c of the live objects become garbage (every
// 19/(20c)-th staged object unstaged, as many committed ones left by the
// commits: a contiguous region of the logical tree, rewritten as a table's
// partition is, so that only the ranges over it change), c·objects new
// objects arrive in new slices in the first cycle's proportions (1 in 20
// garbage; the committed ones in the rewritten region), and a few are
// uploaded late into the newest slices. It then runs a clean second cycle
// against a clone of the store (s3sim's Store.Clone) and, with -optimized,
// an optimized one (Config.Optimized) against the store itself, from the
// first cycle's records: both from the same state, one after the other. It
// prints each cycle's table, then both second cycles' LIST requests (and
// the slices' pages among them), slices listed and skipped, wall time and
// floor, the mark's wall time and peak RSS, where the keep set came from
// (Summary.KeepSource) and the parts read, and checks after each that
// exactly the garbage
// of both cycles is gone from the store, no live object, and exits 1 if
// not:
//
//	go run ./tests/bottomline -objects 20000000 -latency 50ms -churn 0.01 -optimized
//
// An optimized run lists the slices that started within the slice margin
// (25 h 5 min by default) of the previous run's newest one, here 26 slices
// an hour apart, and the new ones: 46 of 2020 slices at full size.
//
// With -http the cycles run through gocloud's s3blob and the AWS SDK v2
// against the same store served over loopback HTTP (s3sim's Serve), as the
// lakeFS host runs on S3: the listing decoded by sweep/s3list, deletes by
// sweep/s3delete's DeleteObjects, every other call through s3blob; with
// -sdk-list too, the listing decoded by the SDK (s3blob's own). The
// driver's figures are the request floor, the HTTP ones what a user on
// S3 pays besides the network (the process's CPU includes the server's):
//
//	go run ./tests/bottomline -objects 2000000 -branches 100 -commits 3000 -latency 50ms -http
//
// -cpuprofile writes a CPU profile of the optimized second cycle (of the
// one cycle without -churn).
//
// The GC's own memory in a second cycle: in one process the resident set
// also holds the store, the clone, the first cycle's leftovers, and the
// garbage the Go runtime lets grow in proportion to all of them (GOGC), so
// the tables' "rss MiB" and "-store" say little of the GC's. With
// -own-memory each second cycle runs in a child process of its own (the
// program started again), against the store (or its clone) served by the
// parent over loopback HTTP, through s3blob and the AWS SDK v2 as -http
// runs; the child builds the same synthetic host (generated, a few MiB)
// and holds nothing else. The parent reads and resets the child's VmHWM
// and reads its CPU through /proc/<pid>, and the child sends its heap
// figures and its report, so the cycle's table is the child's, and a line
// per second cycle says "GC's own peak: N MiB (budget+64 = 320)": the
// child's VmHWM over the cycle, which includes the runtime, the host and
// the S3 client (about 22 MiB at the child's start), and a peak over the
// budget + 64 MiB exits 1 as a live object deleted does; its "-store"
// column is the child's resident set sampled. -heapprofile PREFIX
// writes each child's heap profile at its peak live heap (PREFIX.clean,
// PREFIX.optimized; go tool pprof -sample_index=inuse_space) and prints
// its in-use bytes by the innermost frame of this module on the stack:
// lakegc (the library's packages), harness (this program, s3sim), other
// (the runtime, the S3 client, gocloud, Parquet's buffers):
//
//	go run ./tests/bottomline -objects 20000000 -latency 50ms -churn 0.01 -optimized -own-memory -heapprofile /tmp/hp
//
// With -inventory csv or -inventory parquet the (one, clean) cycle runs
// from an inventory report instead of listing every slice: before the
// cycle, the store publishes an S3 Inventory report of the namespace in
// that format (s3sim's AddInventory, its files synthesised when read,
// under inventory/ in the store itself), dated an hour after the objects
// were written, and the cycle's Config.Inventory is that report opened by
// inventory.OpenS3, through the cycle's bucket (the driver, or s3blob with
// -http). The slices that started within the slice margin of the report
// (the 25 newest, an hour apart, with the default margin of 25 h 5 min)
// are listed through the store, the rest read from the report. It prints
// the report's rows, files and bytes, what publishing it cost (not part
// of the cycle), the GETs of its files, the slices listed and taken from
// it, and checks that exactly the garbage is deleted (exit 1 if not).
// With -mark-only the cycle is a dry run (no sweep) and the mark's
// candidates are checked instead: each a garbage object, none twice, as
// many as the garbage. With -compare it runs the cycle from the report,
// then a LIST-based clean cycle against a clone of the store taken before
// (the same state), and prints both and their ratios: LIST requests,
// wall, the mark's wall, CPU, temporary disk.
//
//	go run ./tests/bottomline -objects 20000000 -slices 10000 -latency 50ms -inventory csv -compare
//	go run ./tests/bottomline -objects 1000000000 -slices 10000 -latency 50ms -inventory csv -mark-only -store-on-disk -tmp DIR
//
// Every cycle's spill files go to a folder of its own under -tmp, whose
// disk use the table's last column samples (every 100 ms, the peak of each
// phase); the inventory's Parquet files are copied there while read. The
// "-store" column is the most resident set sampled (every 20 ms) less what
// the simulated store held in memory then (the objects written to it and
// its generated inventory files): an estimate of the GC's own. The store
// holds what the cycle writes (the export, the mark's records of the live
// keys and its candidates: hundreds of MiB at 100 M objects) in memory,
// and each object whole while it is written; -store-on-disk keeps them in
// files of a folder under -tmp instead (s3sim's WithDiskOverlay), so that
// at a billion objects the process holds the GC and little else.
//
// TestBottomLine runs it at 200 K objects and 1 ms a request, and checks
// the request counts, that exactly the garbage is deleted, and the memory
// bound; not the time. TestSecondCycle runs the second cycles at 100 K
// objects in 1000 slices and checks that both delete exactly the garbage
// and that the optimized one lists exactly the slices it should, at most
// 5 % of the clean one's LIST requests, flat and with ranges of 1,000
// objects, where the optimized one reads only the ranges the churn
// changed; and with -own-memory (ranges), that each child's peak RSS is
// within the budget + 64 MiB (8 + 64 MiB; about 55 MiB here, 21 MiB of it
// before the GC starts): a loose bound at that size, which fails on some
// 20 MiB more, not on a few. TestInventoryMark runs 20 K objects
// in 5,000 slices from a CSV report and, as a mark alone, a Parquet one,
// beside a LIST-based run, with a few garbage objects deleted after the
// report: it checks that the inventory runs mark the LIST-based run's
// candidates plus those, delete (or mark) exactly the garbage, list
// exactly the slices within the margin and make under 1 % of the
// LIST-based run's LIST requests; TestInventoryCompare runs -compare.
// TestHTTPMode runs 20 K objects
// through the driver and over HTTP with both decoders, and checks that
// each deletes exactly the garbage with as many pages and batches.
package main
