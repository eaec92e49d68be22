package parquetio_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/parquetio"
)

// A part written with a Writer, read back with Strings.
func Example() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	type row struct {
		Address string `parquet:"address,plain"`
	}
	w, err := parquetio.NewWriter[row](ctx, bucket, "deleted/part-00000.snappy.parquet", "example")
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range []string{"data/a", "data/b"} {
		if err := w.Write(row{a}); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	data, err := bucket.ReadAll(ctx, "deleted/part-00000.snappy.parquet")
	if err != nil {
		log.Fatal(err)
	}
	s, err := parquetio.OpenStrings(bytes.NewReader(data), int64(len(data)), "address")
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for {
		batch, err := s.Next()
		if err != nil {
			log.Fatal(err)
		}
		if batch == nil {
			break
		}
		fmt.Println(batch)
	}
	// Output:
	// [data/a data/b]
}
