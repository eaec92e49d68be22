// Package linkaddr signs the physical addresses a data service hands out for
// uploads, and verifies them when the client links the upload, in lakeFS's
// wire format.
//
// The flow is get-address, upload, link: the service gives the client a new
// address (from package pathprovider) signed for a repository, branch and
// path; the client uploads the object there, directly to the bucket; then it
// asks the service to link the address to the path. Verify checks that the
// address was signed for that repository, branch and path, and that enough of
// its TTL is left to stage the link, and returns the deadline of the staging
// write; Stage runs that write and undoes it if it landed late. The TTL is
// what makes garbage collection safe: an object uploaded but not yet linked
// is in no commit and no staging area, so the collector must spare objects
// younger than the TTL, and a link must be refused once the collector may
// have deleted its object.
//
// # Staging in time
//
// Verifying a link and writing it to the staging area are two steps. In
// between, the object is protected by its age alone: a GC cycle whose
// export starts after the verification and before the staging write does
// not see the link, and deletes the object once it is older than the
// cycle's cutoff. So a link verified just inside the TTL and staged some
// minutes later can lose its object. Two things close that window, and
// either alone is enough:
//
//   - Verify refuses an address with less than [StagingMargin] (15 minutes)
//     left of its TTL, with [ErrExpired], and returns a [Link] whose
//     Deadline is the end of the TTL. [Signer.Stage] runs the host's
//     staging write and, if it returned after the deadline, runs the host's
//     undo and fails with ErrExpired, so the client uploads again. The
//     collector (package sweep, through lakegc.Collect) spares every object
//     for at least the TTL plus its clock skew, so a write that lands by
//     the deadline is safe with a clock skew to spare.
//   - The collector's cutoff keeps StagingMargin on top of its clock skew
//     (the same constant, sweep.StagingMargin), so a host that verifies
//     with the whole TTL, as lakeFS does, and stages within StagingMargin,
//     is safe too.
//
// Every other route from an upload into a staging area (an import, a copy
// by address, a multipart upload completed later) must keep the same bound:
// it stages only an object whose address was handed out less than the TTL
// less StagingMargin ago, and lands by the end of the TTL.
//
// # Wire format
//
// A signed address is
//
//	<address>,<signature>
//
// split at the last ',' (an address may hold commas), where the signature is
// base64.RawURLEncoding of HMAC-SHA256(key, payload) and the payload is Go's
// encoding/json of
//
//	struct{ Repository, Branch, Path, PhysicalAddress string }
//
// with its default HTML escaping: a path a<b is written "a\u003cb". This is
// lakeFS's format, so addresses signed by lakeFS with the same key verify here
// and the other way round. Verify only accepts the canonical base64 spelling
// of a signature, which is the one lakeFS writes.
//
// # Inputs must be UTF-8
//
// encoding/json writes every byte of invalid UTF-8 as U+FFFD, so the paths
// "a\xff" and "a\xfe" have the same payload, and a signature made for one
// would hold for the other. Verify therefore refuses a repository, branch,
// path or address that is not valid UTF-8 (ErrInvalid), before any MAC is
// computed, and Sign refuses to sign one with the same error. The bytes of every signature of valid input are
// unchanged: the wire format is lakeFS's.
//
// The address's time comes from a TimeResolver, normally the
// pathprovider.Provider that made it. An address whose time cannot be read,
// or lies more than a minute in the future, is invalid.
//
// # What Verify refuses
//
// [Signer.Verify] returns an error wrapping [ErrInvalid] for a signed address
// with no delimiter; a signature of the wrong length, or not in canonical
// base64url; a MAC that matches no key (compared in constant time); a
// signature bound to another repository, branch or path; an address whose
// time the resolver cannot read; and an address made more than a minute in
// the future. An address with less than [StagingMargin] left of its TTL
// fails with [ErrExpired]: the collector may delete its object before the
// link could be staged. No error message holds a key.
//
// # Beyond lakeFS
//
// WithVerifyKeys rotates keys; WithTTL and WithClock set the TTL and the
// clock; Verify's deadline and Stage bound the staging write (lakeFS's link
// checks the TTL alone); VerifyOnce with a Redeemer (NewMemRedeemer, or one backed by the
// host's database) makes each signed address link only once: of any number
// of concurrent links of one address, exactly one succeeds. The in-memory
// Redeemer forgets an address only once it would fail Verify anyway, so its
// memory stays proportional to the addresses still valid.
//
// # Cost
//
// Strings that need no JSON escaping, the usual case, are written into the
// payload directly; anything else goes through encoding/json, so the escaping
// is exactly Go's. Hash states and payload buffers are pooled: a Verify that
// succeeds does not allocate. Figures are in the module's BENCHMARKS.md.
package linkaddr
