package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/extsort"
)

// TestLoadIndexFailureLeavesNoCopies, review of walk36: loadIndex copies
// the previous run's committed index, staged index and parts record at
// once; when one of them fails (missing, or a checksum of another run's),
// the copies that succeeded beside it are removed, and the error names the
// first record of the three that failed. The copies made on success stay,
// named in previous.
func TestLoadIndexFailureLeavesNoCopies(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	index := map[string]indexEntry{"data/a": {"data/a", 1, idxListed}, "data/b": {"data/b", 0, idxListed}}
	cname, uname, _, _ := writePrevIndex(t, src, index, nil, 4)
	cb, err := os.ReadFile(cname)
	require.NoError(t, err)
	ub, err := os.ReadFile(uname)
	require.NoError(t, err)
	csum, err := lastSum(cname)
	require.NoError(t, err)
	usum, err := lastSum(uname)
	require.NoError(t, err)
	dir := reportDir(DefaultStoragePrefix, "prev")
	for _, c := range []struct {
		name              string
		committed, staged bool // the records in the bucket (never a parts record)
		state             runState
		want              string // in the error; "": none
	}{
		{"parts record missing", true, true, runState{KeepKind: kindParts, Parts: 1, IndexSum: csum, StagedSum: usum}, "previous run's parts record"},
		{"committed index missing", false, true, runState{KeepKind: kindParts, Parts: 1, IndexSum: csum, StagedSum: usum}, "previous run's committed index"},
		{"staged index missing", true, false, runState{KeepKind: kindMultiset, IndexSum: csum, StagedSum: usum}, "previous run's staged index"},
		{"staged checksum another run's", true, true, runState{KeepKind: kindMultiset, IndexSum: csum, StagedSum: usum + 1}, "another run's"},
		{"copied", true, true, runState{KeepKind: kindMultiset, IndexSum: csum, StagedSum: usum}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			if c.committed {
				require.NoError(t, bucket.WriteAll(ctx, dir+indexName, cb, nil))
			}
			if c.staged {
				require.NoError(t, bucket.WriteAll(ctx, dir+stagedName, ub, nil))
			}
			tmp := t.TempDir()
			spill, err := extsort.NewSpillDir(tmp, 4096)
			require.NoError(t, err)
			defer spill.Remove()
			m := &marker{bucket: bucket, cfg: newMarkConfig(nil), spill: spill}
			st := c.state
			p := &previous{state: &st}
			name, err := m.loadIndex(ctx, dir, p)
			var files []string
			require.NoError(t, filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "record-") {
					files = append(files, path)
				}
				return err
			}))
			if c.want == "" {
				require.NoError(t, err)
				require.ElementsMatch(t, []string{p.indexFile, p.stagedFile}, files)
				require.Equal(t, p.indexFile, name)
				return
			}
			require.ErrorContains(t, err, c.want)
			require.Empty(t, files, "copies left by a failed loadIndex")
			require.Empty(t, p.indexFile+p.stagedFile+p.partsFile)
		})
	}
}
