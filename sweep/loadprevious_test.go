package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakegc/lakegc/internal/extsort"
	"github.com/lakegc/lakegc/internal/faultblob"
	"github.com/lakegc/lakegc/internal/layout"
)

// TestLoadPreviousFailureLeavesNoCopies: when the previous run's records
// were copied but its candidates (it was not swept) cannot be read, the
// run is clean and the copies of the records leave the spill folder at
// once, not when the clean run that follows ends.
func TestLoadPreviousFailureLeavesNoCopies(t *testing.T) {
	m, _ := uploadModel(t)
	prev, err := ReadSummary(m.ctx, m.b, DefaultStoragePrefix, "r1")
	require.NoError(t, err)
	require.Positive(t, prev.NumDeletedObjects, "the previous run needs candidates")
	require.NoError(t, m.b.Delete(m.ctx, reportDir(DefaultStoragePrefix, "r1")+layout.DeletedFolder+partName))

	tmp := t.TempDir()
	spill, err := extsort.NewSpillDir(tmp, 4096)
	require.NoError(t, err)
	defer spill.Remove()
	mk := &marker{bucket: m.b, cfg: newMarkConfig(m.opts(WithPrevious("r1"))), dir: reportDir(DefaultStoragePrefix, "r2"),
		sum: Summary{RunID: "r2", CutoffTime: prev.CutoffTime.Add(time.Hour)}, cnt: &counters{}, spill: spill}
	p, reason := mk.loadPrevious(m.ctx)
	require.Nil(t, p)
	require.Contains(t, reason, "previous run's candidates")
	var files []string
	require.NoError(t, filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(d.Name(), ".lock") && d.Name() != "lock" {
			files = append(files, d.Name())
		}
		return err
	}))
	require.Empty(t, files, "copies of the previous run's records left in the spill folder")
}

// TestLoadIndexPanicReachesCaller: a panic of the bucket's while one of the
// previous run's records is copied (the copies run at once, on goroutines
// of their own) comes out of loadIndex on its caller's goroutine, as it did
// when they were copied one after another, once the other copies ended.
func TestLoadIndexPanicReachesCaller(t *testing.T) {
	m, _ := uploadModel(t)
	dir := reportDir(DefaultStoragePrefix, "r1")
	st, err := readState(m.ctx, m.b, dir)
	require.NoError(t, err)
	var others atomic.Int64
	b := wrapBucket(m.b, faultblob.WithHook(faultblob.Read, func(_ context.Context, c *faultblob.Call) error {
		if c.Key == dir+stagedName {
			panic("driver panicked")
		}
		time.Sleep(50 * time.Millisecond) // the other copies end after the panic
		others.Add(1)
		return nil
	}))
	tmp := t.TempDir()
	spill, err := extsort.NewSpillDir(tmp, 4096)
	require.NoError(t, err)
	defer spill.Remove()
	mk := &marker{bucket: b, cfg: newMarkConfig(nil), spill: spill}
	require.PanicsWithValue(t, "driver panicked", func() { mk.loadIndex(m.ctx, dir, &previous{state: st}) })
	require.Positive(t, others.Load(), "the other copies had ended before the panic came out")
}
