package clouds_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/lakegc/lakegc/lease"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/quarantine"
	"github.com/lakegc/lakegc/uncommitted"
)

// runQuarantine continues a scenario on its store: new garbage is swept
// into the quarantine (the store's own copy, and its deleter), restored,
// swept again and purged. The object whose delete the store refuses is
// copied but stays at its place: failed, then found there by the restore.
func runQuarantine(t *testing.T, b *blob.Bucket, l lake, exportRun string, exportStart time.Time, opts []sweep.SweepOption) {
	ctx := context.Background()
	var fresh []string
	for i := range 5 {
		k := fmt.Sprintf("data/%s/quarantined-%02d", oldSlice(3), i)
		require.NoError(t, b.WriteAll(ctx, k, []byte("data of "+k), nil))
		fresh = append(fresh, k)
	}
	sum, err := sweep.Mark(ctx, b, "gc-q", sweep.Inputs{
		Uncommitted: addresses(ctx, uncommitted.ReadRun(ctx, b, "_lakefs", exportRun)),
		Committed:   seq(l.committed),
		ExportStart: exportStart,
	}, sweep.WithClock(clock), sweep.WithTempDir(t.TempDir()), include)
	require.NoError(t, err)
	require.EqualValues(t, len(fresh)+1, sum.NumDeletedObjects, "the new garbage and the refused object")
	before := map[string]string{}
	for _, k := range listData(t, b) {
		data, err := b.ReadAll(ctx, k)
		require.NoError(t, err)
		before[k] = string(data)
	}

	qopts := append(slices.Clone(opts), sweep.WithMover(quarantine.Mover{}))
	res, err := sweep.Sweep(ctx, b, "gc-q", qopts...)
	require.NoError(t, err)
	require.Equal(t, int64(len(fresh)), res.Deleted)
	require.Equal(t, int64(1), res.Failed, "the refused delete")
	for _, k := range fresh {
		ok, err := b.Exists(ctx, k)
		require.NoError(t, err)
		require.False(t, ok, k)
		data, err := b.ReadAll(ctx, layout.QuarantineKey("_lakefs", "gc-q", k))
		require.NoError(t, err)
		require.Equal(t, before[k], string(data))
	}

	rr, err := quarantine.Restore(ctx, b, "gc-q", nil)
	require.NoError(t, err)
	require.Equal(t, int64(len(fresh)), rr.Restored)
	// The refused object stayed at its place: its quarantine copy goes,
	// unless the store refuses that delete too (S3's and GCS's refusals
	// here strike every key naming it).
	if rr.AlreadyThere != 1 {
		require.Len(t, rr.Refused, 1)
		require.Equal(t, l.refused, rr.Refused[0].Address)
		require.Contains(t, rr.Refused[0].Reason, "at its place, but its quarantine copy could not be removed")
	}
	for k, v := range before {
		data, err := b.ReadAll(ctx, k)
		require.NoError(t, err, k)
		require.Equal(t, v, string(data), k)
	}

	_, err = sweep.Sweep(ctx, b, "gc-q", qopts...)
	require.NoError(t, err)
	pr, err := quarantine.Purge(ctx, b, 0, opts...)
	if rr.AlreadyThere != 1 {
		// The store refuses to delete the copy: the purge stops and keeps
		// the record, for a rerun once the store allows it.
		require.ErrorContains(t, err, "refused-garbage")
		require.Contains(t, listAll(t, b, layout.QuarantinePath("_lakefs", "gc-q")), layout.QuarantinePath("_lakefs", "gc-q")+layout.QuarantineFile)
		return
	}
	require.NoError(t, err)
	require.Len(t, pr.Purged, 1)
	require.EqualValues(t, len(fresh)+1, pr.Purged[0].Objects)
	require.Empty(t, listAll(t, b, layout.QuarantinePath("_lakefs", "gc-q")))
}

// runLease takes the lease on the store twice: the store's conditional
// write refuses the second.
func runLease(t *testing.T, b *blob.Bucket) {
	ctx := context.Background()
	folder := layout.LeaseFolder("_lakefs")
	// The store honours the conditional write the lease stands on.
	probe := folder + "probe"
	require.NoError(t, b.WriteAll(ctx, probe, []byte("1"), &blob.WriterOptions{IfNotExist: true}))
	err := b.WriteAll(ctx, probe, []byte("2"), &blob.WriterOptions{IfNotExist: true})
	require.Equal(t, gcerrors.FailedPrecondition, gcerrors.Code(err), "second conditional write: %v", err)
	data, err := b.ReadAll(ctx, probe)
	require.NoError(t, err)
	require.Equal(t, "1", string(data))
	require.NoError(t, b.Delete(ctx, probe))
	first, err := lease.Acquire(ctx, b, folder, lease.Options{Holder: "first", Settle: -1})
	require.NoError(t, err)
	_, err = lease.Acquire(ctx, b, folder, lease.Options{Holder: "second", Settle: -1})
	require.True(t, errors.Is(err, lease.ErrHeld), "second Acquire: %v", err)
	require.ErrorContains(t, err, "first")
	require.NoError(t, first.Release(ctx))
	second, err := lease.Acquire(ctx, b, folder, lease.Options{Holder: "second", Settle: -1})
	require.NoError(t, err)
	require.NoError(t, second.Release(ctx))
}
