package metarange_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
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

// A host that reads lakeFS's storage its own way (a lakeFS fork, through
// its block adapter) reads the kept commits' metaranges with Ranges and
// each of their ranges once with Entries, from an io.ReaderAt and a size:
// here, files of testdata/namespace. Namespace.Keys gives the keys that
// Addresses would list.
func ExampleEntries() {
	open := func(id string) (*os.File, int64) {
		f, err := os.Open(filepath.Join("testdata/namespace/_lakefs", id))
		if err != nil {
			log.Fatal(err)
		}
		info, err := f.Stat()
		if err != nil {
			log.Fatal(err)
		}
		return f, info.Size()
	}
	ns, err := metarange.ParseNamespace("s3://bucket/repo")
	if err != nil {
		log.Fatal(err)
	}
	read := map[string]bool{} // the ranges read
	for _, mr := range []string{
		"f421745fedfb855e9f79f5f9db481b6b515827ba7213c837e64e29ce5226fe9f",
		"1f53950d5f7c75705f30f88eade7d1db72a9617e2c4d7a4da56ca57c1254e548",
	} {
		f, size := open(mr)
		for rg, err := range metarange.Ranges(f, size) {
			if err != nil {
				log.Fatal(err)
			}
			if read[rg.ID] {
				fmt.Printf("range %.8s…: listed again, not read\n", rg.ID)
				continue
			}
			read[rg.ID] = true
			fmt.Printf("range %.8s…: %d entries from %s to %s\n", rg.ID, rg.Count, rg.MinKey, rg.MaxKey)
			rf, rsize := open(rg.ID)
			for e, err := range metarange.Entries(rf, rsize) {
				if err != nil {
					log.Fatal(err)
				}
				keys, err := ns.Keys(nil, e.Address, e.AddressType)
				if err != nil { // the namespace in another spelling: stop
					log.Fatal(err)
				}
				fmt.Printf("  %s %d bytes %v: %q\n", e.Path, e.Size, e.AddressType, keys)
			}
			rf.Close()
		}
		f.Close()
	}
	// Output:
	// range fa1f8415…: 3 entries from a/1.csv to a/linked.bin
	//   a/1.csv 1234 bytes RELATIVE: ["data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tu0"]
	//   a/2.csv 1234 bytes RELATIVE: ["data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tug"]
	//   a/linked.bin 1234 bytes RELATIVE: ["data/gc5ftg2d4d2gdp2b5tt0/cv9hsk2d4d2gdp2b5tv0,f6gNY3pKvL4BQ4Kwc9lHHPuz2QGVxqzE7q0m0ONhZRs"]
	// range 95c8169e…: 4 entries from b/imported-inside.csv to b/old-relative.csv
	//   b/imported-inside.csv 1234 bytes FULL: ["imported/x.csv"]
	//   b/imported-outside.csv 1234 bytes FULL: []
	//   b/old-full.csv 1234 bytes BY_PREFIX_DEPRECATED: ["4d2f1b0c9a8e4f6b8c7e"]
	//   b/old-relative.csv 1234 bytes BY_PREFIX_DEPRECATED: ["4d2f1b0c9a8e4f6b8c7d"]
	// range fa1f8415…: listed again, not read
	// range 544a0ce2…: 1 entries from c/1.csv to c/1.csv
	//   c/1.csv 1234 bytes RELATIVE: ["data/gc5ftg2d4d2gdp2b5tt0/cv9hsm2d4d2gdp2b5u00"]
}
