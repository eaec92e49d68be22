// Package namespace understands lakeFS storage namespaces and opens them as
// gocloud.dev buckets.
//
// A lakeFS repository keeps its objects under a storage namespace, a URI in
// one of four forms:
//
//	s3://<bucket>/<path>
//	gs://<bucket>/<path>
//	https://<account>.blob.core.windows.net/<container>/<path>
//	local://<path>
//
// [Parse] splits one into its parts (for Azure, the storage account is the
// first label of the host), refusing what is not a plain prefix. A namespace
// maps to a gocloud.dev/blob URL ([Namespace.BucketURL]) whose bucket is
// rooted at the namespace, so that its keys are the repository's relative
// addresses ("data/<slice>/<id>", "_lakefs/..."), the keys packages sweep and
// uncommitted use; [OpenBucket] opens it. A local namespace lives under
// lakeFS's local blockstore root, given with [WithLocalRoot]; an Azure
// storage emulator such as Azurite is reached with [WithAzureEndpoint].
//
// As with any gocloud URL, the host imports the drivers of the kinds it
// opens (s3blob, gcsblob, azureblob, fileblob): the package links no cloud
// SDK by itself. Credentials are each driver's, read from the environment
// by blob.DefaultURLMux's openers; a host with its own clients registers
// openers on a blob.URLMux and passes [WithURLMux].
//
// A host that reads or names lakeFS's files in a namespace finds their keys
// here: [DefaultStoragePrefix], [RulesKey], [CommitsKey],
// [UncommittedFolder], [ReportFolder] and [ValidRunID], the same paths the
// module's packages read and write.
//
// For faster sweeps on the clouds, pair the bucket with the batch deleters
// of packages sweep/s3delete, sweep/azdelete and sweep/gcsdelete. For a
// local namespace, pair it with [Namespace.LocalDeleter], always: fileblob's
// own Delete of key X also removes a file X.attrs, which on lakeFS's local
// blockstore is another object. fileblob never lists files named
// "*.attrs", so a mark never names one: such objects are kept, never
// deleted, and never collected.
package namespace
