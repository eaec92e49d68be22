package quarantine

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"

	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/sweep"
)

// TestQuarantineReadsTheStoresAnswer: a failed step of a move is read as
// Sweep reads a delete's answer. GCS's 403 (a retention policy, a hold, a
// missing permission), which gcsblob calls NotFound, on the copy or on
// either look-up of the check is a refusal: the candidate is kept at its
// place and listed in failed/, never counted as gone. A copy whose source
// is missing is gone already and nothing is deleted for it; a copy that
// vanished before its check keeps the original.
func TestQuarantineReadsTheStoresAnswer(t *testing.T) {
	gcs403 := &googleapi.Error{Code: http.StatusForbidden, Message: "retention policy"}
	gcsCodes := faultblob.WithErrorCode(func(err error) (gcerrors.ErrorCode, bool) {
		var g *googleapi.Error
		if errors.As(err, &g) && (g.Code == http.StatusForbidden || g.Code == http.StatusNotFound) {
			return gcerrors.NotFound, true // as gcsblob reads them
		}
		return gcerrors.Unknown, false
	})
	notFound := &googleapi.Error{Code: http.StatusNotFound}
	for _, c := range []struct {
		name string
		op   faultblob.Op
		// src: the fault hits the call on the candidate (for a copy, its
		// source), else the call on its quarantine copy.
		src  bool
		err  error
		want sweep.Result // for the one candidate the fault hits; the others move
		kept bool         // the hit candidate is still at its place
	}{
		{"copy refused by GCS", faultblob.Copy, true, gcs403, sweep.Result{Failed: 1}, true},
		{"original's look-up refused by GCS", faultblob.Attributes, true, gcs403, sweep.Result{Failed: 1}, true},
		{"copy's look-up refused by GCS", faultblob.Attributes, false, gcs403, sweep.Result{Failed: 1}, true},
		{"copy vanished", faultblob.Attributes, false, notFound, sweep.Result{Failed: 1}, true},
		{"copy source missing", faultblob.Copy, true, notFound, sweep.Result{AlreadyGone: 1}, true},
		{"copy's look-up throttled, then answered", faultblob.Attributes, false, &googleapi.Error{Code: http.StatusTooManyRequests}, sweep.Result{Deleted: 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			inner := memblob.OpenBucket(nil)
			w := newQuarantineWorld(t, inner, "run1")
			start := contents(t, inner)
			hit := w.good[0]
			qhit := layout.QuarantineKey(sweep.DefaultStoragePrefix, "run1", hit)
			calls := 0
			fb, err := faultblob.New(inner, gcsCodes, faultblob.WithHook(c.op, func(_ context.Context, call *faultblob.Call) error {
				key := call.Key
				if c.op == faultblob.Copy {
					key = call.SrcKey
				}
				if c.src && key == hit || !c.src && key == qhit {
					if calls++; c.want.Deleted == 1 && calls > 1 {
						return nil // a transient answer, once
					}
					return c.err
				}
				return nil
			}))
			require.NoError(t, err)
			res, err := sweep.Sweep(ctx, fb.Bucket(), "run1", withQuarantine, sweep.WithBackoff(time.Microsecond, time.Microsecond))
			require.NoError(t, err)
			others := int64(len(w.good) - 1)
			want := c.want
			want.Deleted += others
			want.Refused = int64(len(w.refused))
			want.Quarantine = layout.QuarantinePath(sweep.DefaultStoragePrefix, "run1")
			require.Equal(t, want, *res)
			end := contents(t, inner)
			if c.kept {
				require.Equal(t, start[hit], end[hit], "the candidate is kept at its place")
			} else {
				require.NotContains(t, end, hit)
				require.Equal(t, start[hit], end[qhit])
			}
			for _, k := range w.good[1:] {
				require.NotContains(t, end, k)
				require.Equal(t, start[k], end[layout.QuarantineKey(sweep.DefaultStoragePrefix, "run1", k)], k)
			}
		})
	}
}

// TestRestoreRefusalIsNotAbsence: GCS's 403 (gcsblob: NotFound) on the
// quarantine's record, on a named address's quarantine copy or on the
// address itself is a refusal, never "no such quarantine", "not in the
// quarantine" or a free place; the objects stay as they were.
func TestRestoreRefusalIsNotAbsence(t *testing.T) {
	gcs403 := &googleapi.Error{Code: http.StatusForbidden, Message: "forbidden"}
	gcsCodes := faultblob.WithErrorCode(func(err error) (gcerrors.ErrorCode, bool) {
		var g *googleapi.Error
		if errors.As(err, &g) && g.Code == http.StatusForbidden {
			return gcerrors.NotFound, true // as gcsblob reads it
		}
		return gcerrors.Unknown, false
	})
	ctx := context.Background()
	inner := memblob.OpenBucket(nil)
	w := newQuarantineWorld(t, inner, "run1")
	_, err := sweep.Sweep(ctx, inner, "run1", withQuarantine)
	require.NoError(t, err)
	swept := contents(t, inner)
	addr := w.good[0]
	for _, c := range []struct {
		name    string
		refused string // the key whose look-up GCS refuses
	}{
		{"the record", layout.QuarantinePath(sweep.DefaultStoragePrefix, "run1") + layout.QuarantineFile},
		{"the copy", layout.QuarantineKey(sweep.DefaultStoragePrefix, "run1", addr)},
		{"the place", addr},
	} {
		t.Run(c.name, func(t *testing.T) {
			fb, err := faultblob.New(inner, gcsCodes, faultblob.WithHook(faultblob.Attributes, func(_ context.Context, call *faultblob.Call) error {
				if call.Key == c.refused {
					return gcs403
				}
				return nil
			}))
			require.NoError(t, err)
			res, err := Restore(ctx, fb.Bucket(), "run1", []string{addr}, sweep.WithBackoff(time.Microsecond, time.Microsecond))
			require.Error(t, err)
			require.NotErrorIs(t, err, ErrNoQuarantine)
			require.ErrorAs(t, err, new(*googleapi.Error))
			if res != nil {
				require.Empty(t, res.Missing, "a refused look-up read as not in the quarantine")
				require.Zero(t, res.Restored)
			}
			require.Equal(t, swept, contents(t, inner))
		})
	}
}
