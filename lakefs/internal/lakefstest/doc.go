// Package lakefstest gives tests a real lakeFS and a repository history to
// garbage-collect.
//
// [Start] uses the lakeFS the environment names — a running one
// (LAKEFS_ENDPOINT, LAKEFS_ACCESS_KEY_ID, LAKEFS_SECRET_ACCESS_KEY;
// LAKEFS_NAMESPACE for where its repositories go, "local://" by default, and
// LAKEFS_BLOCKSTORE_PATH for its local blockstore's folder) or a binary
// (LAKEFS_BIN) that it starts on a free loopback port with a local blockstore
// and a local KV store in the test's temporary folders (imports from the
// blockstore enabled), sets up through the API and stops when the test ends —
// and skips the test, saying why, without either. [StartBinaryS3] starts the
// binary with its blockstore on an S3-compatible server instead (an endpoint,
// path style, static keys), and leaves its configuration file at
// [Server.ConfigPath].
//
// [BuildHistory] makes a repository whose GC outcome is known
// ([BuildHistoryIn] in a storage namespace of the caller's choice, such as a
// folder of another repository's): branches, commits dated in the past through
// the commit API's date field, per-branch retention, deleted branches, a
// hidden branch, staged objects and overwrites, linked objects (staging API:
// get an address, write the data there, link) and an upload never linked.
// [History] lists every stored object with whether a correct GC keeps it, and
// [History.VerifyBeforeGC] and [History.VerifyAfterGC] check the store through
// lakeFS.
package lakefstest
