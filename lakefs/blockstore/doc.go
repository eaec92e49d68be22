// Package blockstore reads lakeFS's blockstore settings and opens a
// repository's storage namespace with them, so that a GC reaches the store
// exactly as the lakeFS that wrote it does: the same S3-compatible endpoint,
// path style, region and static keys; the same GCS service account; the same
// Azure account key and domain; the same local folder.
//
// [Load] reads lakeFS's configuration file (YAML, as lakeFS's --config) and
// its LAKEFS_BLOCKSTORE_* environment variables, which win over the file as
// they do in lakeFS: blockstore.s3.endpoint is LAKEFS_BLOCKSTORE_S3_ENDPOINT.
// It reads only the keys below, with lakeFS's defaults:
//
//	blockstore.type                         s3, gs, azure or local
//	blockstore.s3.region                    default us-east-1
//	blockstore.s3.endpoint                  an S3-compatible server (MinIO, …)
//	blockstore.s3.force_path_style
//	blockstore.s3.discover_bucket_region    default true
//	blockstore.s3.max_retries               default 5
//	blockstore.s3.skip_verify_certificate_test_only
//	blockstore.s3.profile
//	blockstore.s3.credentials_file
//	blockstore.s3.credentials.access_key_id, .secret_access_key, .session_token
//	blockstore.gs.credentials_file, blockstore.gs.credentials_json
//	blockstore.azure.storage_account, .storage_access_key, .domain, .try_timeout,
//	  .test_endpoint_url, .china_cloud (deprecated in lakeFS: sets the domain)
//	blockstore.local.path                   default ~/lakefs/data/block
//
// Every other key is ignored (lakeFS refuses keys it does not know, so a
// file it runs with has none it does not read). A value of the wrong type
// (a mapping where a string belongs, "yes" for a boolean) is an error
// wrapping [ErrInvalidInput] that names the key; lakeFS's multi-storage
// "blockstores" section and its in-memory blockstores are [ErrUnsupported].
// The file is read up to [MaxFileSize].
//
// [Config.OpenBucket] opens a namespace (s3://bucket/path, gs://…,
// https://account.blob.core.windows.net/container/path, local://path) as a
// gocloud.dev bucket rooted at it, the bucket packages sweep and uncommitted
// take; the bucket or container is the namespace's, the way to reach it is
// the blockstore's. On S3 the bucket's client is [Config.S3Client]'s, which
// bucket.As exposes, so package sweep/s3delete batches its deletes through
// the same endpoint and keys.
//
// Secrets (the S3 keys and session token, the GCS key JSON, the Azure
// account key) are of type [Secret]: printed, logged or marshalled they read
// "[SECRET]", and a Config formats and logs as a summary without them.
// Errors name keys and settings, never a secret's value.
//
// A Config is not modified by its methods, which are safe for concurrent
// use.
package blockstore
