package retention_test

import (
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/lakegc/lakegc/retention"
)

func ExampleReadCommitsCSV() {
	// A commits report as lakeFS's prepare_commits writes it.
	report := "commit_id,expired,metarange_id\n" +
		"c1,false,m1\n" +
		"c2,true,m2\n" +
		"c3,false,m3\n"
	active, err := retention.ReadCommitsCSV(strings.NewReader(report))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(active)

	_, err = retention.ReadCommitsCSV(strings.NewReader("commit_id,expired,metarange_id\nc1,maybe,m1\n"))
	fmt.Println(errors.Is(err, retention.ErrInvalidCommitsCSV), err)
	// Output:
	// [{c1 m1} {c3 m3}]
	// true retention: invalid commits report: line 2: commit "c1": expired is "maybe", not true or false
}
