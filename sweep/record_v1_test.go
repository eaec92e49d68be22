package sweep

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/extsort"
)

// Version 1 records are only read now: the tests write them.

// liveFlush is how many bytes of entries a live record's encoder gathers
// before it writes them.
const liveFlush = 8 << 10

// newLiveEncoder starts a live record on w.
func newLiveEncoder(w io.Writer) (*extsort.KeyEncoder, error) {
	return extsort.NewKeyEncoder(w, liveFormat, liveFlush)
}

// liveWriter streams a live record to an object; nothing is visible under
// its name unless close succeeds.
type liveWriter struct {
	bw  *blobio.Writer
	w   *bufio.Writer
	enc *extsort.KeyEncoder
	key string
}

func newLiveWriter(ctx context.Context, bucket *blob.Bucket, key string, bufSize int) (*liveWriter, error) {
	bw, err := blobio.NewWriter(ctx, bucket, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return nil, fmt.Errorf("sweep: write %s: %w", key, err)
	}
	lw := &liveWriter{bw: bw, w: bufio.NewWriterSize(bw, bufSize), key: key}
	if lw.enc, err = newLiveEncoder(lw.w); err != nil {
		lw.abort()
		return nil, fmt.Errorf("sweep: write %s: %w", key, err)
	}
	return lw, nil
}

func (lw *liveWriter) add(key []byte) error {
	if err := lw.enc.Add(key); err != nil {
		return fmt.Errorf("sweep: write %s: %w", lw.key, err)
	}
	return nil
}

func (lw *liveWriter) close() error {
	err := lw.enc.Finish()
	if err == nil {
		err = lw.w.Flush()
	}
	if err != nil {
		lw.abort()
		return fmt.Errorf("sweep: write %s: %w", lw.key, err)
	}
	if err := lw.bw.Close(); err != nil {
		return fmt.Errorf("sweep: write %s: %w", lw.key, err)
	}
	return nil
}

func (lw *liveWriter) abort() { lw.bw.Abort() }

// TestOptimizedFromVersion1: a run whose records are of version 1 (a live
// record, no keep index), as the module wrote them before the keep index,
// is a previous run an optimized run starts from; it counts its keep set in
// full, and marks as a clean run does.
func TestOptimizedFromVersion1(t *testing.T) {
	m := newGCModel(t, 29, true, true)
	m.advance(40 * time.Hour)
	m.mark("prev")
	// Rewrite prev's records as version 1 wrote them.
	dir := reportDir(DefaultStoragePrefix, "prev")
	committed, staged := readRecords(t, m.ctx, m.base, dir)
	entries := map[string]indexEntry{}
	for _, e := range append(committed, staged...) {
		entries[e.key] = e
	}
	lw, err := newLiveWriter(m.ctx, m.base, dir+liveName, 512)
	require.NoError(t, err)
	var live int64
	for _, k := range slices.Sorted(maps.Keys(entries)) {
		e := entries[k]
		if e.aux&idxListed != 0 {
			require.NoError(t, lw.add([]byte(e.key)))
			live++
		}
	}
	require.NoError(t, lw.close())
	require.NoError(t, m.base.Delete(m.ctx, dir+indexName))
	require.NoError(t, m.base.Delete(m.ctx, dir+stagedName))
	st, err := readState(m.ctx, m.base, dir)
	require.NoError(t, err)
	require.Equal(t, live, st.LiveKeys)
	st.Version, st.IndexKeys, st.StagedKeys, st.KeepKind, st.Parts = 1, 0, 0, "", 0
	js, err := json.Marshal(st)
	require.NoError(t, err)
	require.NoError(t, m.base.WriteAll(m.ctx, dir+stateName, js, nil))

	m.advance(5 * time.Hour)
	_, want := m.mark("clean")
	keep := m.keep()
	for i, in := range []Inputs{
		{Committed: seqOf(keep[len(keep)/2:])},
		{Committed: seqOf(keep[len(keep)/2:]), Changes: &Changes{Since: "prev", Added: seqOf(nil), Removed: seqOf(nil)}},
		{Parts: partsOf(map[string][]string{"p": keep[len(keep)/2:]}, []string{"p"}, nil)},
	} {
		in.Uncommitted, in.ExportStart = seqOf(keep[:len(keep)/2]), m.now
		id := fmt.Sprintf("next%d", i)
		sum, err := Mark(m.ctx, m.b, id, in, m.opts(WithPrevious("prev"))...)
		require.NoError(t, err)
		require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
		require.Positive(t, sum.SlicesSkipped)
		require.Equal(t, []string{"", "", KeepParts}[i], sum.KeepSource)
		require.Equal(t, want, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, id)))
	}
}
