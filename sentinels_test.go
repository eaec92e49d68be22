package lakegc_test

import (
	"testing"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/copytrack/sqlstore"
	"github.com/lakegc/lakegc/linkaddr"
	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/gcsdelete"
	"github.com/lakegc/lakegc/uncommitted"
)

// TestInvalidInputSentinels: each package has one sentinel for invalid
// input, of one name, whose message starts with the package's name.
func TestInvalidInputSentinels(t *testing.T) {
	for pkg, err := range map[string]error{
		"lakegc":       lakegc.ErrInvalidInput,
		"copytrack":    copytrack.ErrInvalidInput,
		"sqlstore":     sqlstore.ErrInvalidInput,
		"linkaddr":     linkaddr.ErrInvalidInput,
		"namespace":    namespace.ErrInvalidInput,
		"pathprovider": pathprovider.ErrInvalidInput,
		"retention":    retention.ErrInvalidInput,
		"sweep":        sweep.ErrInvalidInput,
		"gcsdelete":    gcsdelete.ErrInvalidInput,
		"uncommitted":  uncommitted.ErrInvalidInput,
	} {
		if want := pkg + ": invalid input"; err.Error() != want {
			t.Errorf("%s.ErrInvalidInput says %q, want %q", pkg, err, want)
		}
	}
}
