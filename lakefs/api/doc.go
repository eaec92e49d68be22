// Package api is a small client of lakeFS's REST API: the calls a garbage
// collector outside lakeFS needs, written with net/http and encoding/json.
//
//   - [Client.GetRepository]: the storage namespace and default branch.
//   - [Client.GetGCRules], [Client.SetGCRules], [Client.DeleteGCRules]: the
//     retention rules (GET/PUT/DELETE /repositories/{repo}/settings/gc_rules).
//   - [Client.PrepareCommits] (synchronous), and [Client.StartPrepareCommits],
//     [Client.PrepareCommitsStatus], [Client.WaitPrepareCommits] and
//     [Client.PrepareCommitsAsync] (a task, polled): lakeFS applies the rules
//     to its commits, including those of deleted branches that no API lists,
//     and writes the commits report (commit ID → metarange ID of every kept
//     commit).
//   - [Client.PrepareUncommitted] and [Client.PrepareAllUncommitted]: the
//     export of every branch's staged objects to Parquet files, one call per
//     continuation token (POST /repositories/{repo}/gc/prepare_uncommited, in
//     lakeFS's spelling).
//   - [Client.ListBranches] (hidden ones with show_hidden),
//     [Client.BranchChanges] (a branch's uncommitted changes, its diff) and
//     [Client.StatObject]: what a GC needs to find the staged objects that
//     lakeFS's own export leaves out (see below).
//   - [Client.ListTags], [Client.ListBranchHeads] and [Client.GetCommit]:
//     the tags and branch HEADs with their commits, and one commit (its
//     parents, version, and creation date to the second), for the extended
//     retention rules a GC applies beside lakeFS's (package retention).
//   - [ResolveNamespace] and [RelativeKey]: the namespace as lakeFS spells
//     full addresses, and a location made a key under it.
//   - [Client.Requests]: the HTTP requests sent so far, retries included,
//     for a caller's report.
//
// A client is safe for concurrent use, and holds no limit of its own: a
// caller that makes per-object calls (StatObject) bounds how many it keeps
// in flight. [Client.WaitPrepareCommits] polls after [DefaultFirstPoll],
// then twice as long each time up to the poll interval.
//
// # Credentials and errors
//
// [New] takes the endpoint and an access key pair, sent with HTTP basic
// auth; [FromEnv] reads them from the variables lakeFS's CLI reads
// (LAKECTL_SERVER_ENDPOINT_URL, LAKECTL_CREDENTIALS_ACCESS_KEY_ID,
// LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY). Every error wraps one sentinel:
// [ErrUnauthorized] (401: a wrong key pair, and also — lakeFS's code does so —
// a user lacking the permission), [ErrForbidden] (403: a read-only
// repository, whose rules cannot be set nor GC prepared), [ErrNotFound],
// [ErrTooManyRequests], [ErrServer], [ErrRequest] (other 4xx), [ErrMalformed]
// (an answer that breaks the API's promises: nothing of it is used),
// [ErrTransport], [ErrTaskFailed], [ErrInvalidInput] (the configuration or an
// argument), [ErrOutsideNamespace]. A status is also a [*StatusError] carrying
// lakeFS's message and any Retry-After.
//
// # Retries
//
// Each attempt is bounded by a timeout ([WithTimeout]; [WithPrepareTimeout]
// for the prepare calls, which walk the repository). Retries are bounded
// ([WithMaxAttempts]), wait with exponential backoff and jitter
// ([WithBackoff]) or what a Retry-After header asks (a longer pause than the
// backoff's cap ends the retries), and stop with the context.
//
//   - Reads, the rules' PUT and DELETE, and prepare-uncommitted are repeated
//     after a transport error, a 429 or a 5xx. A repeated prepare-uncommitted
//     is harmless: a first call starts a run whose pages are complete in
//     their own right, and a later one exports the same branches again, into
//     one more file of the same run, and duplicate entries only keep more.
//   - The two prepare-commits calls are repeated only after a 429 or a
//     connection that was never made. Each call walks the whole commit graph
//     — the heaviest work lakeFS does for a GC — and writes a new report; a
//     5xx or a lost answer may come after a completed run, and repeating it
//     doubles that work and leaves a report no one reads. Repeating would
//     not be unsafe (every run is complete in itself), so a caller may retry
//     at its own pace.
//
// # What a running lakeFS does
//
// Checked against lakeFS built from its source (commit 71a45eeb) with the
// local blockstore; the tests replay its answers byte for byte.
//
//   - Synchronous prepare-commits on a blockstore that cannot pre-sign URLs
//     (the local one) answers 400 with two JSON values: the pre-sign error,
//     then the complete result — lakeFS writes the error and carries on. The
//     report is written before that point, so PrepareCommits accepts exactly
//     that shape — one error object, then a result with every required field,
//     then nothing — and returns the result with [PrepareCommitsResult].Warning
//     set; every other 400 is an error. The asynchronous form does not have
//     this problem: prefer [Client.PrepareCommitsAsync].
//   - Both prepare-commits forms answer 404 ("get gc rules: not found") when
//     the repository has no GC rules: lakeFS will not guess a retention.
//   - Locations and physical addresses come back as full URIs. On an object
//     store they start with the namespace ("s3://bucket/repo1/…"). On the
//     local blockstore a namespace "local://repo1" comes back as the absolute
//     path of its folder, "local:///<blockstore path>/repo1/…", and folder
//     locations lose their trailing slash; [ResolveNamespace] finds that
//     spelling from the commits report's location, and [RelativeKey] strips
//     it, refusing anything outside.
//   - A linked object's address carries its signature:
//     "…/data/<slice>/<xid>,<signature>". On the local blockstore the address
//     lakeFS hands out does not start with "local://repo1/", so linking
//     stores it as a full address: committed metadata then holds
//     "local:///<blockstore path>/repo1/data/…,<signature>" (relative only
//     against the resolved namespace), object listings show it with the
//     blockstore path twice, and lakeFS's own uncommitted export leaves a
//     staged linked object out (it keeps full addresses only under
//     "local://repo1/"). A GC on the local blockstore must learn staged
//     linked objects some other way.
//   - prepare-uncommitted names the run's folder only in the answers of calls
//     that wrote a file; [UncommittedExport].Location is empty when no branch
//     had anything staged. An unreadable token is a 400.
//   - GET gc_rules answers 404 {"message":"not found"} when no rules are set
//     ({"message":"repository not found"} without the repository), and
//     "branches": null when there are no per-branch rules; PUT refuses
//     "branches": null, so SetGCRules sends [].
//   - Listing branches shows hidden ones only with show_hidden=true; lakeFS's
//     own prepare calls include them.
package api
