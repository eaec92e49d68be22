package maphost_test

import (
	"context"
	"fmt"

	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/tests/internal/maphost"
)

func ExampleStore() {
	s := maphost.New()
	s.Staged["main"] = map[string]string{"a.csv": "data/s1/x1", "b.csv": "data/s1/x2"}
	s.Commits["c1"] = retention.Commit{ID: "c1"}
	s.Tips["main"] = "c1"
	s.Files["c1"] = map[string]string{"old.csv": "data/s0/x0"}
	ctx := context.Background()
	for e, err := range s.Uncommitted(ctx, "main", "b") {
		fmt.Println(e.Key, e.PhysicalAddress, err)
	}
	for a, err := range s.CommittedAddresses(ctx, []retention.ActiveCommit{{CommitID: "c1"}}) {
		fmt.Println(a, err)
	}
	// Output:
	// b.csv data/s1/x2 <nil>
	// data/s0/x0 <nil>
}
