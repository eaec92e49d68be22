package metarange_test

import (
	"context"
	"fmt"
	"log"
	"slices"

	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc/lakefs/metarange"
)

// The committed addresses of a small repository whose storage namespace is
// s3://bucket/repo, copied to testdata/namespace: the metarange IDs are
// those of the kept commits, as lakeFS's commits report lists them.
func ExampleAddresses() {
	ctx := context.Background()
	bucket, err := fileblob.OpenBucket("testdata/namespace", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer bucket.Close()

	metaRangeIDs := []string{
		"f421745fedfb855e9f79f5f9db481b6b515827ba7213c837e64e29ce5226fe9f",
		"1f53950d5f7c75705f30f88eade7d1db72a9617e2c4d7a4da56ca57c1254e548",
		"83bf413bf2d8acee9b529d255c0b943d91e65a12ddff2e453726a418922ae61c", // no entries
		"", // lakeFS's first, empty commit
	}
	var stats metarange.Stats
	var addresses []string
	for address, err := range metarange.Addresses(ctx, bucket, "s3://bucket/repo", metaRangeIDs,
		metarange.WithStats(func(s metarange.Stats) { stats = s })) {
		if err != nil {
			log.Fatal(err)
		}
		addresses = append(addresses, address)
	}
	slices.Sort(addresses) // they come in no particular order
	for _, a := range addresses {
		fmt.Println(a)
	}
	fmt.Printf("%d ranges read for %d metaranges, %d shared; %d outside the namespace\n",
		stats.Ranges, stats.MetaRanges, stats.SharedRanges, stats.Outside)
	// Output:
	// 4d2f1b0c9a8e4f6b8c7d
	// 4d2f1b0c9a8e4f6b8c7e
	// data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tu0
	// data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tug
	// data/gc5ftg2d4d2gdp2b5tt0/cv9hsk2d4d2gdp2b5tv0,f6gNY3pKvL4BQ4Kwc9lHHPuz2QGVxqzE7q0m0ONhZRs
	// data/gc5ftg2d4d2gdp2b5tt0/cv9hsm2d4d2gdp2b5u00
	// imported/x.csv
	// 3 ranges read for 3 metaranges, 1 shared; 1 outside the namespace
}
