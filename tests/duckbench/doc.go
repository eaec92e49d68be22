// Command duckbench times sweep.Mark against DuckDB's anti-join on the same
// keys, under the same memory limit, in one run, and checks that both
// produce the same candidate set.
//
// It is its own module, outside go.work, so that DuckDB's cgo build (a
// large prebuilt library) never slows the library's CI: `go test ./...` and
// `./tests/...` from the repository root skip it. Run it from its folder
// with the workspace off:
//
//	cd tests/duckbench
//	GOWORK=off go test .                        # 200 K keys: both agree with the model
//	GOWORK=off go run . -keys 20000000 -rounds 3
//	GOWORK=off go run . -keys 2000000 -phases duck,mark-parquet
//
// # Inputs
//
// The namespace is sweep's BenchmarkMark's: -keys objects spread evenly over
// -slices lakeFS slices (default 400), keys data/<slice xid>/o<18 digits>0
// (the name an xid, so that Mark recognizes every key as lakeFS's), every
// object modified 200 hours before the benchmark's clock and every slice
// started 100 hours or more before it, so age protects nothing. Three
// quarters of the objects are kept: 1 in 40 by the uncommitted export, the
// rest by the commits, each set in a scattered order (a stride through the
// keys, as a commit's addresses come ordered by path); the last quarter is
// garbage. The inputs are written once, as Snappy-compressed Parquet, under
// -dir (default $TMPDIR/duckbench-<keys>), and reused by a later run of the
// same layout; writing them is not timed:
//
//	listing/<slice>.parquet    address, last_modified: the slice's keys in order
//	keep/uncommitted.parquet   address
//	keep/committed.parquet     address
//
// # What each phase times
//
// A round runs each phase of -phases once, each in a fresh child process
// (the same binary with -child) with GOMAXPROCS set by -procs (default 2);
// odd rounds run them in reverse order. Setting up (opening DuckDB, opening
// the bucket) is not timed; the phase's work is.
//
//   - duck: DuckDB in process (memory_limit = -mem, threads = -threads,
//     temp_directory in the output folder) decodes every input file and
//     writes the candidates as Parquet to local disk:
//
//     COPY (SELECT l.address FROM read_parquet('listing/*.parquet') AS l
//     ANTI JOIN read_parquet([keep files]) AS k ON l.address = k.address
//     WHERE l.last_modified < cutoff) TO 'result.parquet' (FORMAT parquet)
//
//   - mark-parquet: sweep.Mark with WithMemoryBudget(-mem) over a bucket
//     whose data folder lists listing/<slice>.parquet in sorted pages of
//     1000 keys with their modification times, and Inputs that read the keep
//     files: the same files DuckDB reads, decoded in Go by parquet-go a page
//     at a time (colread.go), without building a row struct per key. Mark
//     writes its report (Parquet) through the same bucket to local disk.
//
//   - mark-gen: the same Mark, but the listing pages and the keep sets come
//     from the generator that wrote the files: Mark's own work plus the cost
//     of formatting the keys, without Parquet decoding. DuckDB decodes
//     Parquet in every variant; this one shows what Mark costs apart from
//     its inputs, not a like-for-like race.
//
//   - inputs-parquet, inputs-gen: the inputs of the matching Mark phase read
//     to their end without Mark (the keep sets read while every slice is
//     listed, eight at a time, as Mark does). A Mark phase less its inputs
//     phase is about what Mark itself costs; the summary prints it.
//
// Both sides apply the same cutoff (DuckDB's WHERE clause, which
// -duck-filter=false drops; the result is the same) and the same memory
// limit: Mark's budget bounds its key buffers, DuckDB's memory_limit its
// buffer manager; neither bounds the process's whole resident set, which is
// what the benchmark reports.
//
// # Measurements
//
// Each child measures its own phase: wall time, CPU time of all its threads
// (getrusage: user + system), its resident set before the phase, and its
// peak resident set during the phase (VmHWM, reset before the phase by
// writing 5 to /proc/self/clear_refs; the table's RSS0 column is what the
// process held before, DuckDB's library included). The load average after
// each phase is printed beside it: on a shared machine wall times follow
// it, CPU times much less. The summary gives each phase's medians over the
// rounds.
//
// # Checks
//
// A comparison that does not check its results proves nothing, so after
// every phase the parent reads the output back and compares it with the
// model (the candidates computed from the layout): DuckDB's result.parquet
// with parquet-go, Mark's report with sweep.ReadSummary and sweep.Candidates.
// Each side must hold exactly the model's keys, once each (count and
// SHA-256 of the sorted keys), and report that many rows; the inputs phases
// must read every listed and every kept key. A run with any difference
// prints NO in the verified column and exits non-zero.
//
// The bucket used for Mark lists its data folder only as Mark lists it (by
// slice folder, with "/" at the top levels) and refuses to read or delete a
// data object: an unexpected use fails loudly rather than timing something
// else.
package main
