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
// BENCHMARKS.md; its spill files need about 2 GB under -tmp):
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
// TestBottomLine runs it at 200 K objects and 1 ms a request, and checks
// the request counts, that exactly the garbage is deleted, and the memory
// bound; not the time. TestSecondCycle runs the second cycles at 100 K
// objects in 1000 slices and checks that both delete exactly the garbage
// and that the optimized one lists exactly the slices it should, at most
// 5 % of the clean one's LIST requests, flat and with ranges of 1,000
// objects, where the optimized one reads only the ranges the churn
// changed. TestHTTPMode runs 20 K objects
// through the driver and over HTTP with both decoders, and checks that
// each deletes exactly the garbage with as many pages and batches.
package main
