//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sweep

import (
	"context"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"
)

// spillChildEnv names the temp dir of a child process started by
// TestMarkRemovesKilledSpill: the child runs a Mark there and blocks, spill
// files on disk, until it is killed.
const spillChildEnv = "LAKEGC_SPILL_CHILD_TMP"

// blockingKeys yields n keep keys, enough to spill with a 4 KiB budget, and
// then waits for release to be closed.
func blockingKeys(n int, release <-chan struct{}) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for i := range n {
			if !yield(fmt.Sprintf("data/keep/%08d-padding-to-fill-the-block", i), nil) {
				return
			}
		}
		<-release
	}
}

// TestSpillChild is the child process's side; it does nothing unless started
// by TestMarkRemovesKilledSpill.
func TestSpillChild(t *testing.T) {
	tmp := os.Getenv(spillChildEnv)
	if tmp == "" {
		t.Skip("runs only as the child of TestMarkRemovesKilledSpill")
	}
	never := make(chan struct{})
	_, err := Mark(context.Background(), memblob.OpenBucket(nil), "run1",
		Inputs{Uncommitted: blockingKeys(5000, never), Committed: seqOf(nil), ExportStart: t0},
		WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(tmp))
	t.Fatalf("Mark returned while it should block: %v", err)
}

// spillFolders returns the folders of tmp that hold a spilled run file.
func spillFolders(t *testing.T, tmp string) []string {
	t.Helper()
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		runs, _ := filepath.Glob(filepath.Join(tmp, e.Name(), "run-*"))
		if len(runs) > 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

// waitNewSpill waits for a spill folder not in known to appear in tmp.
func waitNewSpill(t *testing.T, tmp string, known []string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, d := range spillFolders(t, tmp) {
			if !slices.Contains(known, d) {
				return d
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no new spill folder in %s", tmp)
	return ""
}

// startSpillChild re-executes the test binary as a child that Marks in tmp
// and blocks; it is killed when the test ends.
func startSpillChild(t *testing.T, tmp string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSpillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), spillChildEnv+"="+tmp)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return false
	}
	require.NoError(t, err)
	return true
}

// TestMarkRemovesKilledSpill kills a Mark with SIGKILL while it has spilled,
// and checks that the next Mark in the same temp dir removes its folder but
// leaves the folder of a Mark still running in another process, and folders
// that are not Mark's.
func TestMarkRemovesKilledSpill(t *testing.T) {
	tmp := t.TempDir()
	// Folders that are not a Mark's spill, or whose owner cannot be told.
	foreign := []string{"other", "lakegc-mark-x", "lakegc-sweep-abc", "lakegc-mark-1-nolock"}
	for _, f := range foreign {
		require.NoError(t, os.Mkdir(filepath.Join(tmp, f), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(tmp, f, "run-000001"), []byte("x"), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "lakegc-mark-x", "lock"), nil, 0o600))

	killed := startSpillChild(t, tmp)
	killedDir := waitNewSpill(t, tmp, foreign)
	live := startSpillChild(t, tmp)
	liveDir := waitNewSpill(t, tmp, append(slices.Clone(foreign), killedDir))
	require.NoError(t, killed.Process.Kill()) // SIGKILL: no deferred cleanup runs
	killed.Wait()
	require.True(t, exists(t, filepath.Join(tmp, killedDir)), "the killed Mark's folder is gone before the rerun")

	rerun := func() {
		t.Helper()
		_, err := Mark(context.Background(), memblob.OpenBucket(nil), "run1", noInputs(),
			WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(tmp))
		require.NoError(t, err)
	}
	rerun()
	require.False(t, exists(t, filepath.Join(tmp, killedDir)), "the killed Mark's spill folder %s survived a rerun", killedDir)
	require.True(t, exists(t, filepath.Join(tmp, liveDir)), "a live Mark's spill folder was removed")
	require.Nil(t, live.ProcessState, "the live Mark exited")
	for _, f := range foreign {
		require.True(t, exists(t, filepath.Join(tmp, f, "run-000001")), "foreign folder %s removed", f)
	}

	require.NoError(t, live.Process.Kill())
	live.Wait()
	rerun()
	require.False(t, exists(t, filepath.Join(tmp, liveDir)), "the second killed Mark's spill folder survived")
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(foreign)
	require.Equal(t, foreign, names)
}

// TestMarkConcurrentSpills runs a Mark to completion while another Mark in
// the same process and temp dir has spilled and waits: the waiting Mark's
// folder stays, and it finishes with the right candidates.
func TestMarkConcurrentSpills(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	b, keys := oldNamespace(t, 600)
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := Mark(ctx, b, "run1", Inputs{Uncommitted: blockingKeys(5000, release), Committed: seqOf(keys[:300]), ExportStart: t0},
			WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(tmp))
		done <- err
	}()
	first := waitNewSpill(t, tmp, nil)
	for i := range 3 {
		_, err := Mark(ctx, b, fmt.Sprint("other", i), noInputs(), WithClock(fixedClock), WithMemoryBudget(4<<10), WithTempDir(tmp))
		require.NoError(t, err)
		require.True(t, exists(t, filepath.Join(tmp, first)), "a live Mark's spill folder was removed")
	}
	close(release)
	require.NoError(t, <-done)
	require.Equal(t, keys[300:], collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1")))
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries)
}
