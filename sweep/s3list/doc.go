// Package s3list lists S3 for package sweep's Mark faster than gocloud's
// s3blob: the same ListObjectsV2 request through the bucket's own AWS SDK v2
// client, but the page decoded by a reader of just the fields a listing
// needs, about a tenth of the CPU per key of the SDK's XML decoder
// (figures in BENCHMARKS.md).
//
// [FromBucket] takes a bucket opened with s3blob (possibly wrapped by
// blob.PrefixedBucket); sweep.WithPageLister(l) has Mark list through it.
// Each [Lister.ListPage] is the bucket's own ListPage, so the request, its
// signing, endpoint, credentials, retries, prefix, escaping and error codes
// are s3blob's and the SDK's: through s3blob's BeforeList hook it adds a
// deserialize-step middleware just inside the SDK's deserializer, which
// decodes a successful response's body with a [Decoder] and hands the SDK
// an empty result instead. Error responses pass untouched to the SDK.
//
// The objects listed are those s3blob would return: keys relative to the
// bucket, folders (CommonPrefixes) merged in order, ModTime, Size, and MD5
// from the ETag; they have no As. A page s3blob would have changed more
// (a key or prefix with s3blob's "__0x" escapes, a URL-encoded page) is
// listed again through s3blob itself. Stricter than the SDK, a page is an
// error wrapping [ErrMalformed] when its root is not ListBucketResult (a
// 200 answer carrying an error document, which the SDK reads as an empty
// page), an object lacks a key, size or time, KeyCount disagrees with the
// keys listed, IsTruncated disagrees with NextContinuationToken, or a key
// is outside the bucket's prefix. Mark checks the listing as it checks
// s3blob's (order, prefix, delimiter).
//
// The decoder reads the whole body, at most [MaxPageBytes], then scans it:
// XML with a prolog (declaration, comments, processing instructions, no
// DOCTYPE), attributes, namespace prefixes, the five named entities,
// character references and CDATA; names matched as the SDK matches them,
// ignoring case; the XML 1.0 character rules encoding/xml applies. Where
// both decode a body they read the same page (a differential test and
// FuzzDecodeListPage against the SDK's own deserializer); what the SDK
// refuses, the decoder refuses too, never panicking.
//
// A Lister is safe for concurrent use; a Decoder is not.
package s3list
