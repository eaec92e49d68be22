package layout_test

import (
	"fmt"
	"time"

	"github.com/lakegc/lakegc/internal/layout"
)

// The folders of a run in the retention/gc tree, and a run ID that names
// its start.
func ExampleRunPath() {
	start := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	id := layout.NewRunID(start)
	fmt.Println(layout.ValidRunID(id), len(id))
	t, _ := layout.SliceTime(id)
	fmt.Println(t)
	fmt.Println(layout.RunPath(layout.StoragePrefix, layout.Report, "r1"))
	fmt.Println(layout.CommitsKey(layout.StoragePrefix, "r1"))
	fmt.Println(layout.UncommittedFiles(layout.StoragePrefix, "r1"))
	// Output:
	// true 20
	// 2026-12-01 18:00:00 +0000 UTC
	// _lakefs/retention/gc/unified/r1/
	// _lakefs/retention/gc/commits/run_id=r1/commits.csv
	// _lakefs/retention/gc/uncommitted/r1/uncommitted/
}
