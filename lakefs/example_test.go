package lakefs_test

import (
	"fmt"

	"github.com/lakegc/lakegc/lakefs"
)

// On the local blockstore, lakeFS's full addresses carry the blockstore's
// folder: lakegc.Config.Namespace must too, or linked objects are not the
// repository's. On object stores the namespace is spelled as it is.
func ExampleAddressNamespace() {
	for _, ns := range []string{"local://repo1", "s3://bucket/repo1/"} {
		a, err := lakefs.AddressNamespace(ns, "/var/lakefs")
		fmt.Println(a, err)
	}
	// Output:
	// local:///var/lakefs/repo1 <nil>
	// s3://bucket/repo1 <nil>
}
