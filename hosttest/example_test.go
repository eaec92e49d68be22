package hosttest_test

import (
	"context"
	"fmt"

	"github.com/lakegc/lakegc/hosttest"
)

// A host runs its store against GC cycles; memStore is this package's test
// store, a versioned store in maps.
func ExampleRun() {
	res, err := hosttest.Run(context.Background(), newMemStore(""), hosttest.Options{Seed: 1, Cycles: 5})
	fmt.Println(err, res.Cycles)
	// Output: <nil> 5
}
