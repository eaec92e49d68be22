package inventory

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"time"

	"gocloud.dev/blob"
)

// exampleReport writes a small CSV report of bucket "src" to dest and
// returns its manifest's key.
func exampleReport(dest *blob.Bucket) string {
	ctx := context.Background()
	var csv bytes.Buffer
	zw := gzip.NewWriter(&csv)
	fmt.Fprint(zw, `"src","repo1/data/dbq0s7hksdu90jsgso0g/dbq0s7hksdu90jsgso10","7","2026-11-18T09:30:00.000Z"`+"\n")
	fmt.Fprint(zw, `"src","repo1/a+b%2Bc","3","2026-11-18T09:30:00.000Z"`+"\n")
	fmt.Fprint(zw, `"src","repo2/x","3","2026-11-18T09:30:00.000Z"`+"\n")
	zw.Close()
	const dir = "inventory/src/daily/"
	file := dir + "data/0.csv.gz"
	sum := md5.Sum(csv.Bytes())
	manifest := fmt.Sprintf(`{"sourceBucket":"src","destinationBucket":"arn:aws:s3:::dest","version":"2016-11-30",
"creationTimestamp":"%d","fileFormat":"CSV","fileSchema":"Bucket, Key, Size, LastModifiedDate",
"files":[{"key":%q,"size":%d,"MD5checksum":"%x"}]}`, testNow.Add(-time.Hour).UnixMilli(), file, csv.Len(), sum)
	msum := md5.Sum([]byte(manifest))
	key := dir + "2026-11-20T11-00Z/manifest.json"
	for k, v := range map[string][]byte{file: csv.Bytes(), key: []byte(manifest), dir + "2026-11-20T11-00Z/manifest.checksum": []byte(hex.EncodeToString(msum[:]))} {
		if err := dest.WriteAll(ctx, k, v, nil); err != nil {
			panic(err)
		}
	}
	return key
}
