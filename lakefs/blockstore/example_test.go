package blockstore_test

import (
	"fmt"
	"log"

	"github.com/lakegc/lakegc/lakefs/blockstore"
)

// A lakeFS configuration for MinIO, with the secret key given in lakeFS's
// environment variable, as operators often do: the variable wins over the
// file, and printing the settings shows no secret.
func ExampleParse() {
	file := []byte(`
database:
  type: postgres
blockstore:
  type: s3
  s3:
    endpoint: http://minio.internal:9000
    force_path_style: true
    credentials:
      access_key_id: lakefs
      secret_access_key: not-this-one
`)
	env := map[string]string{"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_SECRET_ACCESS_KEY": "minio-secret"}
	c, err := blockstore.Parse(file, func(k string) string { return env[k] })
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c)
	fmt.Println(c.S3.SecretAccessKey, c.S3.SecretAccessKey.Value() == "minio-secret")
	// Output:
	// blockstore s3 (region "us-east-1", endpoint "http://minio.internal:9000", force_path_style true, discover_bucket_region true, max_retries 5, profile "", credentials_file "", static keys true, session token false)
	// [SECRET] true
}
