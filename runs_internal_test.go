package lakegc

import (
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/pathprovider"
)

// A candidate's slice is the folder right under the data folder, nested or
// not; the include prefix names itself; a flat key says so.
func TestShapeReasonSlice(t *testing.T) {
	slice := pathprovider.DescendingID(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)).String()
	obj := pathprovider.DescendingID(time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)).String()
	for _, data := range []string{"data", "lake/data", "a/b/c"} {
		got, reason := shapeReason(data+"/"+slice+"/"+obj, data, nil)
		if got != slice || !strings.HasPrefix(reason, "in slice "+slice) {
			t.Errorf("data %q: slice %q, reason %q; want slice %s", data, got, reason, slice)
		}
		if got, reason := shapeReason(data+"/old/x", data, []string{data + "/old/"}); got != "" || reason != "under the include prefix "+data+"/old/" {
			t.Errorf("data %q, included: slice %q, reason %q", data, got, reason)
		}
	}
}
