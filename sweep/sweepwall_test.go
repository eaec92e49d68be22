package sweep

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"
)

// TestSweepRefusesWalledCandidates: with the data folder included, a report
// that Mark did not make (Spark's, a hand-written one) names keys of a
// repository nested in the data folder — its storage folder, its data —
// beside the outer one's: Sweep refuses the nested repository's keys, as
// Mark would never have named them, and deletes the rest.
func TestSweepRefusesWalledCandidates(t *testing.T) {
	ctx := context.Background()
	walled := []string{"data/inner/_lakefs/dummy", "data/inner/data/x", "data/inner/y", "data/a/b/_lakefs/c",
		"data/a/b/d"}
	free := []string{"data/a/c", "data/innerx", "data/x"}
	for _, opts := range [][]MarkOption{{WithInclude("data/")}, {WithRecognizer(func(string) bool { return true })}} {
		b := memblob.OpenBucket(nil)
		all := append(append([]string{}, walled...), free...)
		for _, k := range all {
			require.NoError(t, b.WriteAll(ctx, k, []byte("x"), nil))
		}
		writeRun(t, b, "run1", t0, all)
		res, err := Sweep(ctx, b, "run1", sweepOpts(opts)...)
		require.NoError(t, err)
		require.Equal(t, Result{Deleted: int64(len(free)), Refused: int64(len(walled))}, *res)
		requireExist(t, b, walled)
		failed := readFailed(t, b, "run1")
		for _, k := range walled {
			require.Equal(t, "refused: in another repository's folder", failed[k], k)
		}
	}
}

// TestSweepRefusesWhenWallsUnknown: a folder whose markers cannot be looked
// for (the listing fails) holds no candidate Sweep deletes.
func TestSweepRefusesWhenWallsUnknown(t *testing.T) {
	ctx := context.Background()
	keys := []string{"data/a/x", "data/b/y"}
	base := memblob.OpenBucket(nil)
	for _, k := range keys {
		require.NoError(t, base.WriteAll(ctx, k, []byte("x"), nil))
	}
	b := newTestBucket(base, &testDriver{listErr: func(prefix string) error {
		if prefix == "data/a/_lakefs/" {
			return codeErr{gcerrors.Internal}
		}
		return nil
	}})
	writeRun(t, b, "run1", t0, keys)
	res, err := Sweep(ctx, b, "run1", WithInclude("data/"))
	require.NoError(t, err)
	require.Equal(t, Result{Deleted: 1, Refused: 1}, *res)
	requireExist(t, b, keys[:1])
	require.Contains(t, readFailed(t, b, "run1")["data/a/x"], "refused: could not look for another repository's folder")
}
