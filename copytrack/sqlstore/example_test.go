package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"

	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/copytrack/sqlstore"
)

// Example keeps the copy table in PostgreSQL. It has no Output line because
// it needs a server: the host imports a driver (for example
// `_ "github.com/lib/pq"`) and passes its URL.
func Example() {
	ctx := context.Background()
	db, err := sql.Open("postgres", os.Getenv("LAKEGC_POSTGRES_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := sqlstore.New(ctx, db, "copytrack", sqlstore.WithCreateTable())
	if err != nil {
		log.Fatal(err)
	}
	tracker, err := copytrack.New(store)
	if err != nil {
		log.Fatal(err)
	}
	err = tracker.Track(ctx, copytrack.Copy{
		Repository: "repo1", Branch: "main",
		SrcPath: "tables/a.parquet", DstPath: "tables/b.parquet",
		PhysicalAddress: "data/gc9v6mr2rsc7h4rq7la0/cqh9ar2rsc7h4rq7lab0",
	})
	if err != nil {
		log.Fatal(err)
	}
	for addr, err := range tracker.Addresses(ctx, "repo1") {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(addr)
	}
}
