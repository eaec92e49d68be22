package nsaddr_test

import (
	"fmt"

	"github.com/lakegc/lakegc/internal/nsaddr"
)

// The classes of full addresses against one namespace.
func ExampleNamespace_Classify() {
	ns, err := nsaddr.New("s3://bucket/repo1", "data")
	if err != nil {
		panic(err)
	}
	for _, a := range []string{
		"s3://bucket/repo1/data/year%3D2024/part-0",                   // both lakeFS spellings
		"s3a://bucket/repo1/data/x",                                   // the namespace, spelled otherwise
		"s3://imports/data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", // an import, with its tail
		"gs://elsewhere/x.parquet",                                    // an import
	} {
		keys, class := ns.Classify(nil, a)
		fmt.Println(class, keys)
	}
	// Output:
	// inside [data/year%3D2024/part-0 data/year=2024/part-0]
	// mismatch []
	// outside [data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0]
	// outside []
}
