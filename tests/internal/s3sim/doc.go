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
// which are held in memory (an overlay: reports, exports, summaries).
// Deleting or overwriting a synthesised object sets its bit in its slice's
// bitmap; Store.Gone and Store.NumGone read them back for a test's checks.
//
// Where it differs from S3 on purpose: a delete of a missing key, alone or
// in a batch, is ErrNotFound (S3 answers success; the gocloud drivers and
// package sweep treat both alike); a throttled delete batch fails as a
// whole; objects are written in one PUT, whatever their size; a single
// Delete is one request (gocloud's S3 driver sends a HEAD before it); a
// page token names the page's last entry, as ListObjects' marker does.
package s3sim
