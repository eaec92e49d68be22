//go:build unix

package crash

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/tests/internal/maphost"
)

// minAge is the GC's minimum age in every step.
const minAge = 48 * time.Hour

// world is a small versioned store and what a step needs to run on it. It
// is written to world.json in the world's folder, so that the children
// read the same store the parent checks against; the objects are in the
// bucket folder.
type world struct {
	Seed          uint64    `json:"seed"`
	Now           time.Time `json:"now"`
	maphost.Store           // the host: staging areas, heads, commits, their files

	// Set up by the parent for the steps that continue another: the
	// export the mark reads, and the mark the sweep deletes.
	ExportRunID string `json:"export_run_id,omitempty"`
	MarkRunID   string `json:"mark_run_id,omitempty"`
}

// The folders of a world's directory.
func bucketDir(dir string) string { return filepath.Join(dir, "bucket") }
func spillDir(dir string) string  { return filepath.Join(dir, "spill") }
func tmpDir(dir string) string    { return filepath.Join(dir, "tmp") }

// openBucket opens the world's bucket. A child's fileblob writes its
// temporary files in its TMPDIR, the world's tmp folder; the test process,
// never killed, writes them beside the objects (NoTempDir), as its
// os.TempDir may be on another device than the world.
func openBucket(dir string, child bool) (*blob.Bucket, error) {
	return fileblob.OpenBucket(bucketDir(dir), &fileblob.Options{Metadata: fileblob.MetadataDontWrite, NoTempDir: !child})
}

// newWorld writes five simulated days of history into dir: uploads to the
// staging areas of three branches (new paths and overwrites), unstaged
// paths and commits, and an old object in the flat layout; then orphans
// old uploads that were never staged (failed uploads), so that a sweep
// deletes in several batches.
func newWorld(ctx context.Context, dir string, seed uint64, orphans int) (*world, error) {
	rng := rand.New(rand.NewPCG(seed, 0xc7a5))
	for _, d := range []string{bucketDir(dir), spillDir(dir), tmpDir(dir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	bucket, err := openBucket(dir, false)
	if err != nil {
		return nil, err
	}
	defer bucket.Close()
	// The host marks the repository's folder when it creates it.
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: "file:///crash"}); err != nil {
		return nil, err
	}
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	w := &world{Seed: seed, Now: now, Store: *maphost.New()}
	for _, b := range []string{"dev", "feature", "main"} {
		w.Staged[b] = map[string]string{}
	}
	at := now.Add(-5 * 24 * time.Hour)
	paths, err := pathprovider.New(pathprovider.WithClock(func() time.Time { return at }))
	if err != nil {
		return nil, err
	}
	put := func(addr string, at time.Time) error {
		if err := bucket.WriteAll(ctx, addr, []byte(addr), nil); err != nil {
			return err
		}
		w.Created[addr] = at
		return os.Chtimes(filepath.Join(bucketDir(dir), filepath.FromSlash(addr)), at, at)
	}
	if err := put(fmt.Sprintf("000000000000400080%014x", 0xf1a7+seed), at); err != nil { // the old flat layout: hex of a version 4 UUID
		return nil, err
	}
	branches := slices.Sorted(maps.Keys(w.Staged))
	steps := 60 + rng.IntN(60)
	for range steps {
		at = at.Add(time.Duration(rng.Int64N(int64(5 * 24 * time.Hour / time.Duration(steps) * 2))))
		if at.After(now) {
			at = now
		}
		b := branches[rng.IntN(len(branches))]
		switch r := rng.IntN(12); {
		case r < 9: // upload
			addr := paths.NewPath()
			if err := put(addr, at); err != nil {
				return nil, err
			}
			w.Staged[b]["p"+strconv.Itoa(rng.IntN(30))] = addr
		case r < 10: // unstage
			for _, p := range slices.Sorted(maps.Keys(w.Staged[b])) {
				delete(w.Staged[b], p)
				break
			}
		default:
			w.Commit(b, at)
		}
	}
	// In a slice of their own time: a provider's slice never starts after
	// the uploads into it.
	old := now.Add(-4 * 24 * time.Hour)
	orphanPaths, err := pathprovider.New(pathprovider.WithClock(func() time.Time { return old }))
	if err != nil {
		return nil, err
	}
	for range orphans {
		if err := put(orphanPaths.NewPath(), old); err != nil {
			return nil, err
		}
	}
	if err := retention.NewRulesStore(bucket).Save(ctx, &retention.Rules{DefaultRetentionDays: 1}); err != nil {
		return nil, err
	}
	return w, w.save(dir)
}

func (w *world) save(dir string) error {
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "world.json"), b)
}

func loadWorld(dir string) (*world, error) {
	b, err := os.ReadFile(filepath.Join(dir, "world.json"))
	if err != nil {
		return nil, err
	}
	w := new(world)
	return w, json.Unmarshal(b, w)
}

// writeFileAtomic is how the host records its state: a write that a kill
// leaves either whole or absent.
func writeFileAtomic(name string, b []byte) error {
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// cutoff is the cutoff of a mark anchored at the world's now.
func (w *world) cutoff() time.Time {
	return w.Now.Add(-minAge - sweep.DefaultClockSkew - sweep.StagingMargin).Truncate(time.Second)
}

// stagedSet is what an export of the staging areas must hold: every staged
// address, once.
func (w *world) stagedSet() map[string]bool {
	out := map[string]bool{}
	for _, st := range w.Staged {
		for _, a := range st {
			out[a] = true
		}
	}
	return out
}

// live is what no step may delete (maphost.Store.Live at the cutoff).
func (w *world) live() map[string]string { return w.Live(w.cutoff()) }

// garbage is what a whole cycle must delete (maphost.Store.Garbage at the
// cutoff).
func (w *world) garbage() map[string]bool { return w.Garbage(w.cutoff()) }

// markCandidates is what the mark step must mark: every object older than
// the cutoff that is neither staged nor in a head (its keep set).
func (w *world) markCandidates() map[string]bool {
	out := map[string]bool{}
	live := w.live()
	for a := range w.Created {
		if live[a] == "" {
			out[a] = true
		}
	}
	return out
}

// copyTree copies the folder src to dst, keeping modification times: the
// world a trace run may change.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return err
		}
		return os.Chtimes(target, info.ModTime(), info.ModTime())
	})
}
