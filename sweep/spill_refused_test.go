//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sweep

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gocloud.dev/blob/memblob"
)

// A Mark refused because its run already succeeded still removes the spill
// folders of killed Marks: a Mark killed after writing its summary leaves
// its folder, and rerunning it is what a host does next (found by
// tests/crash).
func TestRefusedMarkRemovesKilledSpill(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	bucket := memblob.OpenBucket(nil)
	opts := []MarkOption{WithClock(fixedClock), WithMemoryBudget(4 << 10), WithTempDir(tmp)}
	in := func() Inputs { return Inputs{Uncommitted: seqOf(nil), Committed: seqOf(nil), ExportStart: t0} }
	if _, err := Mark(ctx, bucket, "run1", in(), opts...); err != nil {
		t.Fatal(err)
	}
	// What a Mark killed after its summary leaves: its folder, its lock
	// file unlocked.
	stale := filepath.Join(tmp, "lakegc-mark-12345-killed") // the name extsort gives a spill folder
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale, "run-1"), []byte("spilled keys"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Mark(ctx, bucket, "run1", in(), opts...); !errors.Is(err, ErrRunExists) {
		t.Fatalf("Mark of a finished run = %v, want ErrRunExists", err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed Mark's spill folder is still there after the rerun (%v)", err)
	}
}
