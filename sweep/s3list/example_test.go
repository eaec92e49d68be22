package s3list_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakegc/lakegc/sweep/s3list"
	"gocloud.dev/blob/memblob"
)

// DecodeListPage reads the fields of a ListObjectsV2 page a listing needs.
func ExampleDecodeListPage() {
	p, err := s3list.DecodeListPage(strings.NewReader(`<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <KeyCount>1</KeyCount><IsTruncated>true</IsTruncated>
  <NextContinuationToken>1tok</NextContinuationToken>
  <Contents><Key>data/a&amp;b</Key><LastModified>2026-12-01T10:00:00.000Z</LastModified>
    <ETag>&quot;0cc175b9c0f1b6a831c399e269772661&quot;</ETag><Size>1</Size><StorageClass>STANDARD</StorageClass></Contents>
</ListBucketResult>`))
	if err != nil {
		fmt.Println(err)
		return
	}
	o := p.Contents[0]
	fmt.Println(o.Key, o.Size, o.LastModified, o.ETag, p.IsTruncated, p.NextContinuationToken)
	// Output: data/a&b 1 2026-12-01 10:00:00 +0000 UTC "0cc175b9c0f1b6a831c399e269772661" true 1tok
}

// FromBucket needs a bucket opened with s3blob; with sweep.WithPageLister(l)
// Mark then lists through it. Any other bucket is refused.
func ExampleFromBucket() {
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	_, err := s3list.FromBucket(bucket)
	fmt.Println(errors.Is(err, s3list.ErrNotS3))
	// Output: true
}
