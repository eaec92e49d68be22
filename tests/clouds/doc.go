// Package clouds runs one GC scenario on every kind of bucket lakeFS users
// run: the uncommitted export (uncommitted.NewPreparer), Mark and Sweep of
// package sweep, with a delete the store refuses, on a memory bucket, a local
// namespace (fileblob), S3 (gofakes3, see internal/s3test), Azure (Azurite,
// see internal/azuritetest) and GCS (fake-gcs-server, see internal/gcstest),
// each with the default deleter and with the cloud's batch deleter
// (sweep/s3delete, sweep/azdelete, sweep/gcsdelete). The buckets are opened
// from lakeFS namespace URIs with package namespace. The scenario then
// sweeps new garbage into the quarantine (the store's own server-side
// copy), restores it, sweeps and purges it, and takes the lease (package
// lease) twice, after checking the store refuses a second conditional write
// (IfNotExist: S3's If-None-Match, GCS's ifGenerationMatch=0, Azure's
// If-None-Match). It has no code of its own.
//
// How each store refuses a delete: S3 and GCS answer 403 for chosen keys
// (a policy; GCS's event-based hold), injected in front of the emulators,
// which enforce neither; Azure refuses a blob under a lease (412
// LeaseIdMissing), a real lease taken on Azurite; a local namespace refuses
// a file made immutable (chattr +i, as root) or in a read-only folder; a
// memory bucket cannot refuse, so a deleter wrapping it does. Throttling
// (Azure's 503 ServerBusy, GCS's 429) is injected in front of Azurite and
// fake-gcs-server, which never throttle.
package clouds
