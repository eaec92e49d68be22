//go:build !lakegc_metarange

package main

import (
	"context"
	"errors"
	"iter"

	"github.com/lakegc/lakegc/retention"
)

// metarangeBuiltIn says the committed reader is built in: not yet, until
// package lakefs/metarange is on main (see committed.go).
const metarangeBuiltIn = false

// CommittedAddresses cannot read lakeFS's metaranges without package
// lakefs/metarange: it fails, and the mark then marks nothing.
func (h *lakeFSHost) CommittedAddresses(context.Context, []retention.ActiveCommit) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		yield("", errors.New("lakegc: this build cannot read lakeFS's metaranges (build with -tags lakegc_metarange): marking nothing"))
	}
}
