package uncommitted

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/internal/blobio"
)

const (
	// ManifestName is the name, inside a run's folder, of the manifest
	// that the call completing a run writes. It starts with '_', so
	// lakeFS's and Spark's readers skip it.
	ManifestName = "_lakegc_manifest.json"
	// MaxManifestSize caps the manifest a reader accepts, and so the
	// number of files of a run: about 150,000 files (3 TB of files at
	// the default size budget). A call that would complete a run with a
	// larger manifest fails instead.
	MaxManifestSize = 16 << 20

	manifestFormat  = "lakegc uncommitted run"
	manifestVersion = 1
)

// manifest is what a run's folder held when its last call completed it.
type manifest struct {
	Format  string         `json:"format"`
	Version int            `json:"version"`
	RunID   string         `json:"run_id"`
	Rows    int64          `json:"rows"`
	Files   []manifestFile `json:"files"`
}

// manifestFile is one data file of a run; Name is relative to the run's
// folder.
type manifestFile struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"`
	Size int64  `json:"size"`
}

// hidden reports whether a name relative to a run's folder has an
// element starting with '_' or '.': markers, the manifest, and the
// temporary folders of Spark and Hadoop (_temporary/, .spark-staging),
// which no reader of a run reads.
func hidden(name string) bool {
	for elem := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(elem, "_") || strings.HasPrefix(elem, ".") {
			return true
		}
	}
	return false
}

// listRun calls fn with the name (relative to folder) and size of every
// data file under a run's folder, in key order; hidden ones are skipped.
func listRun(ctx context.Context, bucket *blob.Bucket, folder string, fn func(name string, size int64) error) error {
	it := bucket.List(&blob.ListOptions{Prefix: folder})
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("uncommitted: list %s: %w", folder, err)
		}
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("uncommitted: list %s: %w", folder, err)
		}
		if name := strings.TrimPrefix(obj.Key, folder); !obj.IsDir && !hidden(name) {
			if err := fn(name, obj.Size); err != nil {
				return err
			}
		}
	}
}

// describeRun lists a run's folder and reads the row count of each file's
// footer: the manifest of the run as it stands.
func describeRun(ctx context.Context, bucket *blob.Bucket, folder, runID string) (*manifest, error) {
	m := &manifest{Format: manifestFormat, Version: manifestVersion, RunID: runID, Files: []manifestFile{}}
	// A lower bound of the manifest's size: fail before holding more.
	encoded := 0
	err := listRun(ctx, bucket, folder, func(name string, size int64) error {
		if encoded += len(name) + len(`{"name":"","rows":0,"size":0},`); encoded > MaxManifestSize {
			return fmt.Errorf("uncommitted: run %s: more files than a manifest of MaxManifestSize holds", runID)
		}
		if !utf8.ValidString(name) {
			// JSON would record another name, and the run would
			// never verify.
			return fmt.Errorf("uncommitted: run %s: file %q: name is not UTF-8", runID, name)
		}
		rows, err := footerRows(ctx, bucket, folder+name, size)
		if err != nil {
			return wrapOp("run "+runID+": read the footer of "+name, err)
		}
		m.Files = append(m.Files, manifestFile{Name: name, Rows: rows, Size: size})
		m.Rows += rows
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(m.Files, func(a, b manifestFile) int { return strings.Compare(a.Name, b.Name) })
	return m, nil
}

// writeManifest writes m into folder. The object becomes visible only
// when the write completes: on any error the write is aborted.
func writeManifest(ctx context.Context, bucket *blob.Bucket, folder string, m *manifest) error {
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("uncommitted: encode manifest: %w", err)
	}
	if len(data) > MaxManifestSize {
		return fmt.Errorf("uncommitted: run %s: manifest of %d files is %d bytes, over MaxManifestSize", m.RunID, len(m.Files), len(data))
	}
	sum := md5.Sum(data)
	w, err := blobio.NewWriter(ctx, bucket, folder+ManifestName, &blob.WriterOptions{ContentType: "application/json", ContentMD5: sum[:]})
	if err != nil {
		return fmt.Errorf("uncommitted: write manifest: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Abort()
		return fmt.Errorf("uncommitted: write manifest: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("uncommitted: write manifest: %w", err)
	}
	return nil
}

// removeObject deletes key; an absent key is not an error. It asks first,
// for a delete of an absent key leaves a delete marker in a versioned S3
// bucket, and most calls find nothing to delete.
func removeObject(ctx context.Context, bucket *blob.Bucket, key string) error {
	ok, err := bucket.Exists(ctx, key)
	if err == nil && ok {
		err = bucket.Delete(ctx, key)
	}
	if err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("uncommitted: remove %s: %w", key, err)
	}
	return nil
}

// readManifest returns the manifest of a run's folder, or nil when it has
// none.
func readManifest(ctx context.Context, bucket *blob.Bucket, folder, runID string) (*manifest, error) {
	r, err := bucket.NewReader(ctx, folder+ManifestName, nil)
	if gcerrors.Code(err) == gcerrors.NotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("uncommitted: read the manifest of run %s: %w", runID, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("uncommitted: read the manifest of run %s: %w", runID, err)
	}
	return decodeManifest(data, runID)
}

// decodeManifest parses and checks a manifest of the run runID. Anything
// else than a manifest this package writes, for this run, with names in
// order and row counts that add up, is an error wrapping ErrIncomplete.
func decodeManifest(data []byte, runID string) (*manifest, error) {
	bad := func(format string, args ...any) (*manifest, error) {
		return nil, fmt.Errorf("%w %s: manifest: %s", ErrIncomplete, runID, fmt.Sprintf(format, args...))
	}
	if len(data) > MaxManifestSize {
		return bad("over %d bytes", MaxManifestSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m manifest
	if err := dec.Decode(&m); err != nil {
		return bad("%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad("data after the manifest")
	}
	switch {
	case m.Format != manifestFormat || m.Version != manifestVersion:
		return bad("format %q version %d, want %q version %d", m.Format, m.Version, manifestFormat, manifestVersion)
	case m.RunID != runID:
		return bad("of run %q", m.RunID)
	}
	var sum int64
	for i, f := range m.Files {
		switch {
		case f.Name == "" || hidden(f.Name):
			return bad("file name %q", f.Name)
		case i > 0 && f.Name <= m.Files[i-1].Name:
			return bad("file %q after %q", f.Name, m.Files[i-1].Name)
		case f.Rows < 0 || f.Size < 0 || f.Rows > math.MaxInt64-sum:
			return bad("file %q: %d rows, %d bytes", f.Name, f.Rows, f.Size)
		}
		sum += f.Rows
	}
	if sum != m.Rows {
		return bad("%d rows in all, the files hold %d", m.Rows, sum)
	}
	return &m, nil
}

// checkListing checks that the data files under folder are exactly those
// of m, with their sizes.
func checkListing(ctx context.Context, bucket *blob.Bucket, folder string, m *manifest) error {
	seen := make([]bool, len(m.Files))
	err := listRun(ctx, bucket, folder, func(name string, size int64) error {
		i, ok := slices.BinarySearchFunc(m.Files, name, func(f manifestFile, name string) int { return strings.Compare(f.Name, name) })
		switch {
		case !ok:
			return fmt.Errorf("%w %s: file %q is not in the manifest", ErrIncomplete, m.RunID, name)
		case m.Files[i].Size != size:
			return fmt.Errorf("%w %s: file %q has %d bytes, the manifest says %d", ErrIncomplete, m.RunID, name, size, m.Files[i].Size)
		}
		seen[i] = true
		return nil
	})
	if err != nil {
		return err
	}
	if i := slices.Index(seen, false); i >= 0 {
		return fmt.Errorf("%w %s: file %q of the manifest is missing", ErrIncomplete, m.RunID, m.Files[i].Name)
	}
	return nil
}
