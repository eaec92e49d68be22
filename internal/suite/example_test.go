package suite_test

import (
	"fmt"

	"github.com/lakegc/lakegc/internal/suite"
)

// A check run against an adapter under a Recorder: a suite's self-test
// sees it fail on a broken adapter instead of failing the test.
func ExampleRunCheck() {
	sorted := suite.Check[[]string]{Name: "Sorted", Run: func(r suite.Reporter, keys []string) {
		for i := 1; i < len(keys); i++ {
			if keys[i] <= keys[i-1] {
				r.Errorf("%q after %q", keys[i], keys[i-1])
			}
		}
	}}
	for _, keys := range [][]string{{"a", "b"}, {"b", "a"}} {
		if failed, logs := suite.RunCheck(sorted, keys); failed {
			fmt.Printf("%q fails: %s\n", keys, logs)
		} else {
			fmt.Printf("%q passes\n", keys)
		}
	}
	// Output:
	// ["a" "b"] passes
	// ["b" "a"] fails: "a" after "b"
}
