package metarange_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/lakefs/metarange"
)

// A mark's committed input as parts, one a range, through the range cache:
// RangeIDs lists the kept commits' ranges, and Cache.Open yields each
// range's keys sorted, from its table the first time (writing its cache)
// and from its cache after that. The namespace is a copy of
// testdata/namespace in memory, since the cache is written into it.
func ExampleCache() {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	tables, err := filepath.Glob("testdata/namespace/_lakefs/*")
	if err != nil {
		log.Fatal(err)
	}
	for _, name := range tables {
		data, err := os.ReadFile(name)
		if err != nil {
			log.Fatal(err)
		}
		if err := bucket.WriteAll(ctx, "_lakefs/"+filepath.Base(name), data, nil); err != nil {
			log.Fatal(err)
		}
	}

	metaRangeIDs := []string{
		"f421745fedfb855e9f79f5f9db481b6b515827ba7213c837e64e29ce5226fe9f",
		"1f53950d5f7c75705f30f88eade7d1db72a9617e2c4d7a4da56ca57c1254e548",
	}
	rangeIDs, err := metarange.RangeIDs(ctx, bucket, metaRangeIDs)
	if err != nil {
		log.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		cache, err := metarange.NewCache(bucket, "s3://bucket/repo")
		if err != nil {
			log.Fatal(err)
		}
		keys := 0
		for _, id := range rangeIDs {
			for key, err := range cache.Open(ctx, id) {
				if err != nil {
					log.Fatal(err)
				}
				if run == 1 {
					fmt.Println(id[:8], key)
				}
				keys++
			}
		}
		s := cache.Stats()
		fmt.Printf("run %d: %d keys of %d ranges; %d read from their tables, %d from their caches\n",
			run, keys, s.Ranges, s.Cache.Misses, s.Cache.Hits)
	}
	// Output:
	// 544a0ce2 data/gc5ftg2d4d2gdp2b5tt0/cv9hsm2d4d2gdp2b5u00
	// 95c8169e 4d2f1b0c9a8e4f6b8c7d
	// 95c8169e 4d2f1b0c9a8e4f6b8c7e
	// 95c8169e imported/x.csv
	// fa1f8415 data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tu0
	// fa1f8415 data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tug
	// fa1f8415 data/gc5ftg2d4d2gdp2b5tt0/cv9hsk2d4d2gdp2b5tv0
	// fa1f8415 data/gc5ftg2d4d2gdp2b5tt0/cv9hsk2d4d2gdp2b5tv0,f6gNY3pKvL4BQ4Kwc9lHHPuz2QGVxqzE7q0m0ONhZRs
	// run 1: 8 keys of 3 ranges; 3 read from their tables, 0 from their caches
	// run 2: 8 keys of 3 ranges; 0 read from their tables, 3 from their caches
}
