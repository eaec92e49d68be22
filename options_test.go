package lakegc_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/copytrack/sqlstore"
	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// noDB is a database connector that never connects: a constructor that
// checks its options before it touches the database fails without one.
type noDB struct{}

func (noDB) Connect(context.Context) (driver.Conn, error) { return nil, errors.New("no database") }
func (noDB) Driver() driver.Driver                        { return nil }

// TestInvalidOptionFailsAtConstruction gives every constructor of the
// library an invalid option: each fails at once, before it touches any
// store, with an error that wraps its package's ErrInvalidInput and whose
// message starts with the package's name.
func TestInvalidOptionFailsAtConstruction(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	db := sql.OpenDB(noDB{})
	defer db.Close()
	paths, err := pathprovider.New()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := namespace.Parse("local://repo1")
	if err != nil {
		t.Fatal(err)
	}
	first := func(_ any, err error) error { return err }
	for _, c := range []struct {
		name, pkg string
		sentinel  error
		call      func() error
		mentions  string // the option's error, not another one
	}{
		{"copytrack.New WithTTL(-1)", "copytrack", copytrack.ErrInvalidInput, func() error {
			return first(copytrack.New(copytrack.NewMemStore(), copytrack.WithTTL(-time.Hour)))
		}, "TTL"},
		{"sqlstore.New WithPageSize(-1)", "sqlstore", sqlstore.ErrInvalidInput, func() error {
			return first(sqlstore.New(ctx, db, "copies", sqlstore.WithPageSize(-1)))
		}, "page size"},
		{"uncommitted.NewPreparer WithMaxFileSize(-1)", "uncommitted", uncommitted.ErrInvalidInput, func() error {
			return first(uncommitted.NewPreparer(bucket, uncommitted.WithMaxFileSize(-1)))
		}, "max file size"},
		{"uncommitted.NewPreparer WithPrepareDuration(-1)", "uncommitted", uncommitted.ErrInvalidInput, func() error {
			return first(uncommitted.NewPreparer(bucket, uncommitted.WithPrepareDuration(-time.Second)))
		}, "prepare duration"},
		{"linkaddr.New WithTTL(-1)", "linkaddr", linkaddr.ErrInvalidInput, func() error {
			return first(linkaddr.New([]byte("key"), paths, linkaddr.WithTTL(-time.Hour)))
		}, "TTL"},
		{"pathprovider.New WithPartitionSize(-1)", "pathprovider", pathprovider.ErrInvalidInput, func() error {
			return first(pathprovider.New(pathprovider.WithPartitionSize(-1)))
		}, "partition size"},
		{"pathprovider.New WithPrefix(/x)", "pathprovider", pathprovider.ErrInvalidInput, func() error {
			return first(pathprovider.New(pathprovider.WithPrefix("/x")))
		}, "prefix"},
		{"namespace.OpenBucket WithLocalRoot()", "namespace", namespace.ErrInvalidInput, func() error {
			return first(namespace.OpenBucket(ctx, "local://repo1", namespace.WithLocalRoot("")))
		}, "local root"},
		{"Namespace.LocalDeleter WithLocalRoot()", "namespace", namespace.ErrInvalidInput, func() error {
			return first(ns.LocalDeleter(namespace.WithLocalRoot("")))
		}, "local root"},
		{"sweep.Mark WithMinAge(-1)", "sweep", sweep.ErrInvalidInput, func() error {
			return first(sweep.Mark(ctx, bucket, "run1", sweep.Inputs{}, sweep.WithMinAge(-time.Hour)))
		}, "min age"},
		{"sweep.Sweep WithDeleteConcurrency(-1)", "sweep", sweep.ErrInvalidInput, func() error {
			return first(sweep.Sweep(ctx, bucket, "run1", sweep.WithDeleteConcurrency(-1)))
		}, "delete concurrency"},
		{"lakegc.Config MarkOptions WithMemoryBudget(-1)", "lakegc", lakegc.ErrInvalidInput, func() error {
			return lakegc.Config{Bucket: bucket, Repository: "repo1", Namespace: "local://repo1",
				MarkOptions: []sweep.MarkOption{sweep.WithMemoryBudget(-1)}}.Validate()
		}, "memory budget"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if !errors.Is(err, c.sentinel) {
				t.Fatalf("got %v, want an error wrapping %q", err, c.sentinel)
			}
			if !strings.Contains(err.Error(), c.mentions) {
				t.Errorf("%q does not say %q", err, c.mentions)
			}
			if !strings.HasPrefix(err.Error(), c.pkg+": ") {
				t.Errorf("%q does not start with %q", err, c.pkg+": ")
			}
		})
	}
	keys, _ := bucket.List(nil).Next(ctx)
	if keys != nil {
		t.Errorf("a constructor wrote %s", keys.Key)
	}
}
