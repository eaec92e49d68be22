// Package s3sim is a simulated S3 bucket for tests and benchmarks: a
// gocloud.dev/blob driver with S3's shape whose contents are synthesised
// from a description, so that a namespace of tens of millions of objects
// costs at most a bit an object (a slice's bitmap, made at its first
// deletion) instead of holding every key.
//
// The shape:
//   - a listing page holds at most MaxKeys (1000) entries, fewer if the
//     caller's page size asks; prefixes and delimiters are honoured as
//     memblob does;
//   - every request (list page, head, get, put, copy, delete, delete batch)
//     sleeps the latency (WithLatency, default 50 ms), cut short by its
//     context;
//   - past a rate of requests a second per partition (the first
//     WithPrefixDepth path segments of the key, or of the listing's prefix)
//     a request answers ErrSlowDown, code gcerrors.ResourceExhausted, as
//     S3's 503 SlowDown: 5500 reads and 3500 writes a second by default,
//     each key of a delete batch counting as one write (a batch of more
//     keys than the rate passes when its partition has been quiet for a
//     second, and holds it back for as long as its keys take at the rate);
//   - Store.DeleteBatch deletes up to 1000 keys in one request, as
//     DeleteObjects, and implements sweep.BatchDeleter;
//   - Store.Stats counts the requests by kind.
//
// The contents are Slices: each Count objects named Prefix+Name(i), Name
// ascending in i, all of one modification time and size. A listing
// generates the keys of a page from its page token (a binary search over
// i, then one name per key), merged with the objects written to the store,
// which are held in memory (an overlay: reports, exports, summaries), or
// with WithDiskOverlay in files of a folder, so that a cycle that writes
// in proportion to the namespace costs disk instead of memory.
// Deleting or overwriting a synthesised object sets its bit in its slice's
// bitmap; Store.Gone and Store.NumGone read them back for a test's checks.
//
// Store.AddInventory publishes an S3 Inventory report of the store as of a
// time, laid out as S3 lays one out (manifest.json and manifest.checksum in
// a folder named after the time, data files under data/, the Hive
// symlink.txt under hive/), in CSV (gzip) or
// Parquet, with the rows Bucket, Key, Size, LastModifiedDate and ETag. Its
// data files are synthesised when read, like the objects: the report
// keeps a copy of the slices' deletion bitmaps and the written objects'
// attributes, nothing per synthesised object.
//
// Store.Serve serves the store over HTTP on 127.0.0.1 with S3's REST
// shapes (Store.Handler: ListObjectsV2, HeadObject, GetObject with ranges,
// PutObject, the multipart upload calls, CopyObject, DeleteObject,
// DeleteObjects; S3's XML errors; any signature accepted), and
// Server.OpenBucket opens it through gocloud's s3blob and the AWS SDK v2
// (OpenURL likewise from another process, given Server.URL), so that a
// test or benchmark pays what a client of S3 pays: HTTP, the SDK's
// signing and XML. Each HTTP call is one request of the store.
//
// Where it differs from S3 on purpose: a delete of a missing key, alone or
// in a batch, is ErrNotFound through the driver (S3 answers success, as
// the HTTP server does; the gocloud drivers and package sweep treat both
// alike); a throttled delete batch fails as a whole; objects are written
// in one PUT through the driver, whatever their size (over HTTP the SDK's
// multipart uploads are honoured, each call a request); a single Delete
// through the driver is one request (gocloud's S3 driver sends a HEAD
// before it, as it does over HTTP); a page token names the page's last
// entry, as ListObjects' marker does (over HTTP, in base64); an inventory
// report lists the objects at the call, not at its time: an object
// deleted between the two is not in it.
package s3sim
