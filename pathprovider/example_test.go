package pathprovider_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/lakegc/lakegc/pathprovider"
)

func Example() {
	p, err := pathprovider.New()
	if err != nil {
		panic(err)
	}
	path := p.NewPath() // e.g. data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug
	created, err := p.ResolvePathTime(path)
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.HasPrefix(path, p.CommonPrefix()+"/"), len(path))
	fmt.Println(time.Since(created) < time.Minute)
	// Output:
	// true 46
	// true
}

func ExampleNew() {
	stopped := func() time.Time { return time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC) }
	p, err := pathprovider.New(
		pathprovider.WithPrefix("repo1/data"),
		pathprovider.WithPartitionSize(2),
		pathprovider.WithInterval(10*time.Minute),
		pathprovider.WithClock(stopped),
	)
	if err != nil {
		panic(err)
	}
	a, _ := pathprovider.Parse(p.NewPath())
	b, _ := pathprovider.Parse(p.NewPath())
	c, _ := pathprovider.Parse(p.NewPath()) // the third path starts a new slice
	fmt.Println(a.Prefix, a.SliceTime, a.ObjectTime)
	fmt.Println(a.Slice == b.Slice, b.Slice == c.Slice)

	_, err = pathprovider.New(pathprovider.WithPartitionSize(-1))
	fmt.Println(err)
	// Output:
	// repo1/data 2026-11-30 05:00:00 +0000 UTC 2026-11-30 05:00:00 +0000 UTC
	// true false
	// pathprovider: invalid input: partition size -1 out of range (0..16777216, 0 for the default)
}

func ExampleParse() {
	// An address written by lakeFS (see testdata/lakefs_addresses.txt).
	a, err := pathprovider.Parse("s3://bucket/repo1/data/g4hj7c607gh5qfis0ln0/d4ltqnv18nlgdci7q0ug")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Prefix)
	fmt.Println(a.SliceTime.Format(time.RFC3339), a.ObjectTime.Format(time.RFC3339))

	_, err = pathprovider.Parse("data/not-an-xid/d4ltqnv18nlgdci7q0ug")
	fmt.Println(err)
	// Output:
	// s3://bucket/repo1/data
	// 2025-11-30T05:00:00Z 2025-11-30T05:59:59Z
	// pathprovider: invalid address: slice "not-an-xid" is not a 20-character xid
}

func ExampleDescendingID() {
	older := pathprovider.DescendingID(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	newer := pathprovider.DescendingID(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(newer.String() < older.String())
	fmt.Println(pathprovider.DescendingTime(newer).Format(time.RFC3339))
	// Output:
	// true
	// 2026-01-01T00:00:00Z
}

func ExampleParse_linkedObject() {
	// lakeFS stores a linked object under the signed address the client
	// uploaded to.
	a, err := pathprovider.Parse("data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0,cPWPReDC_to7BOmMGSy0YReW9aWIv819XlODed5eSvw")
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Name, a.ObjectTime)
	fmt.Println(a.Signature)
	// Output:
	// c2r2is7s9gbrjaemnik0 2021-06-01 12:34:56 +0000 UTC
	// cPWPReDC_to7BOmMGSy0YReW9aWIv819XlODed5eSvw
}
