// Package sweeps3 tests package sweep and its s3delete deleter against a real
// S3-protocol server (gofakes3 on loopback, see internal/s3test): listings of
// many pages, DeleteObjects batches of 1000 keys, and keys the server refuses
// to delete, which must land in the run's failed/ report. It has no code of
// its own.
package sweeps3
