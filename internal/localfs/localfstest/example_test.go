package localfstest_test

import (
	"fmt"
	"time"

	"github.com/lakegc/lakegc/internal/localfs/localfstest"
	"gocloud.dev/blob"
)

// Two listings of the same objects, in different orders, sort alike.
func ExampleSort() {
	mod := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	a := []localfstest.Listed{{Key: "b", Size: 2, Mod: mod}, localfstest.Of(&blob.ListObject{Key: "a/", IsDir: true})}
	b := []localfstest.Listed{{Key: "a/", IsDir: true}, {Key: "b", Size: 2, Mod: mod}}
	fmt.Println(localfstest.Sort(a))
	fmt.Println(fmt.Sprint(localfstest.Sort(a)) == fmt.Sprint(localfstest.Sort(b)))
	// Output:
	// ["a/"(0,-6795364578871345152,true) "b"(2,1796040000000000000,false)]
	// true
}
