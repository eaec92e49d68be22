// Package inventory reads the inventory report a store writes of a bucket
// as the listing of a lakeFS storage namespace, for package sweep's Mark
// ([sweep.WithInventory]; lakegc.Config.Inventory; lakegc gc --inventory):
// a mark of a namespace of a billion objects then lists only the slices
// written since the report, instead of paying a million LIST requests.
//
// [OpenS3] opens an S3 Inventory report by its manifest.json, [OpenAzure]
// an Azure Blob inventory report by its <rule>-manifest.json, [OpenGCS] a
// Google Cloud Storage (Storage Insights) inventory report by its
// <config>_<snapshot>_manifest.json; the [Report] each returns is a
// [sweep.Inventory]: its [Report.Time], and its [Report.Objects] under the
// namespace, keys relative to it.
//
// # Configuring S3 Inventory for a lakeFS namespace
//
// For a namespace s3://<bucket>/<path>, configure an inventory of <bucket>
// (the source bucket; the report may be delivered to any bucket) with:
//
//   - a prefix filter of "<path>/" (or none: the report then lists the
//     whole bucket, and the rows outside the namespace are skipped);
//   - the optional fields Size and Last modified date (ETag may be added;
//     other fields are read past);
//   - the format CSV or Apache Parquet (ORC is refused, see below);
//   - a daily frequency: Mark takes from a report only the slices started
//     a slice margin (25 hours with the defaults) before it, and OpenS3
//     refuses a report older than WithMaxAge (DefaultMaxAge, 8 days: a weekly report
//     and a day of delivery);
//   - current versions only, preferably: with all versions, the rows of
//     noncurrent versions (IsLatest false) and of delete markers are
//     skipped, as a listing leaves them out.
//
// Then give Mark the newest delivery's manifest,
// s3://<destination>/<prefix>/<bucket>/<config>/<YYYY-MM-DDTHH-MMZ>/manifest.json:
// OpenS3 takes the destination bucket opened at its root and the
// manifest's key in it.
//
// # Configuring Azure Blob inventory for a lakeFS namespace
//
// For a namespace https://<account>.blob.core.windows.net/<container>/<path>,
// add to the account's inventory policy a rule with:
//
//   - objectType "blob", and blobTypes holding "blockBlob";
//   - a prefixMatch of "<container>/<path>/" (or one that holds it, or
//     none), no excludePrefix inside or above it, and no creationTime
//     filter: a report that leaves out part of the namespace is refused;
//   - the schema fields Name, Content-Length and Last-Modified;
//   - the format csv or parquet, and the schedule daily;
//   - preferably no blob versions, snapshots or deleted blobs: when
//     included, the rows of versions that are not current
//     (IsCurrentVersion false), of snapshots (a Snapshot) and of deleted
//     blobs (Deleted true) are skipped, as a listing leaves them out.
//
// Then give Mark the newest run's manifest,
// <YYYY>/<MM>/<DD>/<HH-MM-SS>/<rule>/<rule>-manifest.json in the rule's
// destination container, which OpenAzure takes opened at its root.
//
// # Configuring GCS inventory for a lakeFS namespace
//
// For a namespace gs://<bucket>/<path>, create an inventory report
// configuration of <bucket> (the source bucket) with:
//
//   - the metadata fields bucket, name, size and updated (others are read
//     past);
//   - the CSV format with the delimiter ',', the record separator "\n"
//     and a header row (other CSV options, and Parquet, are refused: see
//     below);
//   - a daily schedule, for the reasons given for S3.
//
// Then give Mark the newest report's manifest,
// gs://<destination>/<path>/<config>_<snapshot>_manifest.json: OpenGCS
// takes the destination bucket opened at its root and the manifest's key
// in it, and reads the shards named in the manifest from its folder.
//
// # What is read, and checked
//
// The manifest is JSON: sourceBucket, destinationBucket (an ARN), version
// ("2016-11-30", the only one S3 writes; another is refused),
// creationTimestamp (milliseconds since the epoch, as a string),
// fileFormat, fileSchema and files, each with its key in the destination
// bucket, its size and its MD5 (MD5checksum). Beside it, manifest.checksum
// holds the MD5 of manifest.json, in hexadecimal, and must match it.
//
// A CSV file is gzip-compressed, one row a line (of at most 64 KiB), its
// columns those the fileSchema names in order ("Bucket, Key, Size,
// LastModifiedDate, ..."), each field quoted or bare as RFC 4180 has them.
// In CSV only, S3 URL-encodes the key as an HTML form does: a space as '+',
// a '+' of the key as "%2B", every byte but letters, digits and "-_.*" as
// %XX; the reader decodes exactly that, so a key is never read as another
// ("a+b" is "a b"; "a%2Bb" is "a+b"), and refuses a '%' not followed by two
// hexadecimal digits. A Parquet file's key is the key as it is; its
// columns are bucket, key, size and last_modified_date (an INT64
// timestamp), with is_latest and is_delete_marker when versions are
// listed. A time left empty (null) is unknown: Mark keeps the object as
// young.
//
// Azure's manifest (version "1.0") names the account's endpoint, the
// destination container, the rule's definition (its filters, format,
// object type and schema fields), the run's status, which must be
// Succeeded, its start time (inventoryStartTime, also the name of its
// folder), its files, each with its name in the destination container and
// its size but no checksum, and a summary whose objectCount must equal the
// rows of all the files. Beside it, <rule>-manifest.checksum holds the MD5
// of the manifest (read in hexadecimal or base64: Azure's documentation
// does not say which) and must match it. A CSV file is not compressed; its
// first row names its columns; Name is the blob's name after its
// container ("<container>/<blob>"), as it is, not encoded. A Parquet file
// has the same columns, its times in milliseconds since the epoch. A time
// in CSV is read in RFC 3339 or as an HTTP date. Azure gives no checksum
// of a file: its size, the row count and the format are what is checked.
//
// GCS's manifest holds the report's configuration (report_config: its
// csvOptions or parquetOptions, and its objectMetadataReportOptions: the
// metadataFields and, in storageFilters, the source bucket), the number of
// rows (records_processed), which must equal the rows of all the shards,
// snapshot_time (RFC 3339), shard_count, which must equal the number of
// names in report_shards_file_names, and those names, each a file beside
// the manifest. There is no checksum of the manifest nor of a shard, nor a
// shard's size: the row count, the bucket of every row and the format are
// what is checked. A shard is not compressed; its first row names its
// columns; name is the object's name in the bucket. Google's
// documentation does not say how a name is written in CSV: read as it is
// (quoted as RFC 4180 has it), and a name holding a '%', which could be
// percent-encoded, is skipped, so kept. The report's time is snapshot_time,
// when Google documents that all its data is captured.
//
// [OpenS3], [OpenAzure] and [OpenGCS] refuse, with an error wrapping [ErrInvalidInput] and, where
// there is one, a more specific sentinel: a manifest whose checksum does
// not match ([ErrChecksum]); a report of another bucket or account than the
// namespace's, or whose filters leave out part of it ([ErrNotCovered]); one older than [WithMaxAge] or dated more
// than 5 minutes in the future ([ErrTooOld]); the ORC format, and GCS's
// Parquet ([ErrUnsupported]); a schema without the key, size and last modified
// date. [Report.Objects] fails, after possibly yielding some of that
// file's rows, on a file whose size or MD5 is not the manifest's, or files
// whose rows are not as many as the manifest's count ([ErrChecksum]), a file that is missing ([ErrMissingFile]), a row of
// another bucket or that breaks the format, and, unless [WithAllowEmpty],
// on a report with no object under the namespace ([ErrEmpty]): an empty
// report is more likely the wrong report than an empty namespace. Mark
// fails with any of these: it never takes a part of a report.
//
// S3's manifest does not say the report's prefix filter: a report filtered
// to another folder of the bucket lists nothing of the namespace (refused
// as empty), or too little of it, which keeps objects rather than delete
// them; Mark's canary refuses a mark whose listing finds almost none of
// the keep set.
//
// ORC is refused: the one pure-Go ORC reader known
// (github.com/scritchley/orc) is not maintained nor available from the
// module proxy this module builds from, and reading a hostile file in
// bounded memory needs a reader whose allocations can be checked, as
// package parquetguard checks parquet-go's. Configure CSV or Parquet.
//
// # The report's time, and S3's consistency
//
// S3 builds a report from a scan that starts at the time in the name of
// the manifest's folder (YYYY-MM-DDTHH-MMZ, to the minute) and may take
// hours; creationTimestamp is set when the report is made. An object
// written during the scan may or may not be in it, and one deleted during
// it may still be. [Report.Time] is therefore the earlier of the two
// times: the start of the listing. Mark takes from the report only the
// slices started a slice margin before that time (sweep.WithSliceMargin:
// the pathprovider's slice interval, during which a slice takes new
// addresses, plus the link TTL, during which an address can be uploaded
// to, plus the clock skew): by the scan's start no object arrives in them
// any more, so the report holds all of each. What the report misses is
// never a candidate; what it names that is gone since is a candidate
// whose delete is a no-op. What it names that was written again since
// would be judged by its old row: Mark keeps what a quarantine moved since
// the report, which a restore may have put back (package sweep,
// "Inventory reports"). An Azure report's time is its run's start
// (inventoryStartTime, and the name of its folder; the earlier of both).
//
// # Cost
//
// A CSV file is read as a stream: memory is a few buffers of 64 KiB,
// however large the report. A Parquet file is copied to a temporary file
// (WithTempDir) while its size and MD5 are checked, checked by package
// parquetguard for the columns read (pages of at most 16 MiB and 2^20
// values, values of 64 KiB), read 256 rows at a time, and removed: the
// temporary disk is the largest file of the report. Files are read one
// after the other. BenchmarkReadCSV and BenchmarkReadParquet measure the
// CPU per row.
//
// A Report's methods are safe for concurrent use; each range over Objects
// reads the files again.
package inventory
