// Package pathprovider hands out physical addresses for new objects, in the
// layout lakeFS uses, and parses them back.
//
// An address is "<prefix>/<slice>/<name>", for example
//
//	data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug
//
// The name is an xid made when the address was handed out, so the address
// itself tells its object's creation time (ResolvePathTime): a link step
// (package linkaddr) uses it to refuse addresses older than its TTL without
// keeping any state.
//
// The slice groups addresses by time. Its name is DescendingID of the time the
// slice started: an xid whose time runs backwards from the year 4000, so in a
// lexicographic listing of the storage namespace newer slices come first. A
// garbage collector lists slices newest first, skips the ones younger than the
// link TTL (objects there may still be in flight), and can stop at a slice an
// earlier run already scanned. A new slice starts every WithPartitionSize
// addresses or every WithInterval, whichever comes first.
//
// Slices started within one second carry the same time and may sort in either
// order: compare slice times with a margin, not names inside one second. The
// time runs backwards only until 2094-07-27T05:24:16Z (64060588800 mod 2^32
// seconds, see DescendingID); after that point new slices sort last.
//
// An object linked in lakeFS is stored under the signed address the client
// uploaded to (package linkaddr), data/<slice>/<xid>,<signature>: Parse and
// ResolvePathTime read it too, the object's time being the xid's, and Parse
// puts the signature in Address.Signature.
//
// The layout, DescendingID and the year-4000 constant are lakeFS's, so Parse
// and ResolvePathTime read addresses written by stock lakeFS, and lakeFS reads
// ours. The tests hold this against golden addresses in
// testdata/lakefs_addresses.txt, built byte by byte by a script that does not
// use this package.
//
// # Concurrency and cost
//
// [Partitioned.NewPath] is safe for concurrent use. It claims a path with one
// atomic increment on the current slice; a lock is taken only to start the
// next slice, so concurrent callers do not serialise on a global mutex. About
// a third of its CPU time is reading the clock, which decides every name and
// cannot be skipped. Figures, and how they were measured, are in the module's
// BENCHMARKS.md.
package pathprovider
