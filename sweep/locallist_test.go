package sweep

import (
	"context"
	"errors"
	"fmt"
	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/localfs"
	"github.com/lakegc/lakegc/internal/localfs/localfstest"
	"github.com/lakegc/lakegc/internal/retry"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

// listed is what a listing says of one object.
type listed = localfstest.Listed

// testWindow is a window as Mark's default, for pagers made by hand.
func testWindow() *aimd.Window { return aimd.New(1, DefaultListConcurrency, DefaultMaxListConcurrency) }

// TestLocalListingRetries fails operations of the listing, with and
// without a delimiter: a transient error is retried (after the backoff) and
// the listing is whole, a permanent one fails it, and so does one that
// persists beyond retry.PageAttempts.
func TestLocalListingRetries(t *testing.T) {
	dir := t.TempDir()
	localfstest.HostileTree(t, dir, t0)
	for _, mode := range []struct {
		prefix, delim string
		at            func(op, rel string) bool // the operations that fail
	}{
		{"data/s1/", "", func(_, rel string) bool { return strings.Contains(rel, "nested") }},
		{"data/", "/", func(op, rel string) bool {
			return op == "lstat" && rel == "data/loose" || op != "lstat" && strings.HasPrefix(rel, "data/s7")
		}},
	} {
		want := localfstest.FileblobListing(t, dir, mode.prefix, mode.delim)
		for _, op := range []string{"open", "readdir", "lstat"} {
			t.Run(fmt.Sprintf("%s%s/%s", mode.prefix, mode.delim, op), func(t *testing.T) {
				for _, tc := range []struct {
					name   string
					err    error
					times  int
					failed bool
				}{
					{"transient", syscall.EIO, 3, false},
					{"persistent", syscall.EIO, retry.PageAttempts, true},
					{"permanent", &os.PathError{Op: op, Path: "x", Err: os.ErrPermission}, 1, true},
				} {
					t.Run(tc.name, func(t *testing.T) {
						var waits, left = 0, tc.times
						b := retry.Backoff{Min: time.Second, Max: time.Minute,
							Sleep: func(context.Context, time.Duration) error { waits++; return nil }}
						p, lst := newLocalPager(dir, mode.prefix, testWindow(), b, nil)
						if mode.delim != "" {
							p, lst = newLocalLevelPager(dir, mode.prefix, testWindow(), b, nil)
						}
						lst.Chunk = 2
						lst.Fault = func(o, rel string) error {
							if o == op && mode.at(o, rel) && left > 0 {
								left--
								return tc.err
							}
							return nil
						}
						var got []listed
						for {
							o, err := p.Next(context.Background())
							if errors.Is(err, io.EOF) {
								break
							}
							if tc.failed {
								if err != nil {
									require.ErrorIs(t, err, tc.err)
									return
								}
							} else {
								require.NoError(t, err)
							}
							got = append(got, localfstest.Of(o))
						}
						require.False(t, tc.failed, "the listing did not fail")
						require.Equal(t, tc.times, waits)
						require.Equal(t, want, localfstest.Sort(got))
					})
				}
			})
		}
	}
}

// TestLocalListingCancelled stops a listing by its context.
func TestLocalListingCancelled(t *testing.T) {
	dir := t.TempDir()
	localfstest.HostileTree(t, dir, t0)
	p, lst := newLocalPager(dir, "data/s1/", testWindow(), retry.Backoff{Sleep: retry.Sleep}, nil)
	lst.Chunk = 1
	ctx, cancel := context.WithCancel(context.Background())
	_, err := p.Next(ctx)
	require.NoError(t, err)
	cancel()
	for range localfs.Chunk {
		if _, err = p.Next(ctx); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, lst.Reading(), "the folder stays open")
}

// TestWithLocalListingChecksTheBucket refuses a folder that is not the
// bucket's: a memory bucket, a fileblob bucket at another folder or with a
// prefix.
func TestWithLocalListingChecksTheBucket(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	fb, err := fileblob.OpenBucket(dir, nil)
	require.NoError(t, err)
	fbOther, err := fileblob.OpenBucket(other, nil)
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for name, b := range map[string]*blob.Bucket{
		"memblob":       memblob.OpenBucket(nil),
		"another":       fbOther,
		"prefixed":      blob.PrefixedBucket(openFileblob(t, dir), "sub/"),
		"prefixed flat": blob.PrefixedBucket(openFileblob(t, dir), "x"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Mark(context.Background(), b, "run1", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()), WithLocalListing(dir))
			require.ErrorIs(t, err, ErrInvalidInput)
			require.ErrorContains(t, err, "WithLocalListing")
		})
	}
	_, err = Mark(context.Background(), fb, "run1", noInputs(), WithClock(fixedClock), WithTempDir(t.TempDir()), WithLocalListing(dir))
	require.NoError(t, err)
	require.ErrorIs(t, CheckOptions(Options{Mark: []MarkOption{WithLocalListing("")}}, Options{}), ErrInvalidInput)
}

// TestMarkLocalListingAsFileblob marks random worlds in a fileblob bucket
// twice, listed through fileblob and read locally: the same candidates and
// counts.
func TestMarkLocalListingAsFileblob(t *testing.T) {
	ctx := context.Background()
	var candidates int
	for seed := range uint64(propertyRounds(t) / 4) {
		r := rand.New(rand.NewPCG(seed, 7))
		w := newWorld(r)
		dir := t.TempDir()
		b, err := fileblob.OpenBucket(dir, nil)
		require.NoError(t, err)
		for k := range w.objects {
			require.NoError(t, b.WriteAll(ctx, k, []byte(k), nil))
		}
		// Each file gets its object's time (t0 for an unknown one).
		require.NoError(t, filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			mod := w.objects[localfs.UnescapeKey(filepath.ToSlash(rel))]
			if mod.IsZero() {
				mod = t0
			}
			return os.Chtimes(p, mod, mod)
		}))
		mark := func(runID string, opts ...MarkOption) (*Summary, []string) {
			opts = append(opts, WithClock(fixedClock), WithMemoryBudget(w.budget), WithListConcurrency(w.conc), WithTempDir(t.TempDir()), anyKey)
			sum, err := Mark(ctx, b, runID, w.inputs(), opts...)
			require.NoError(t, err)
			return sum, collect(t, Candidates(ctx, b, DefaultStoragePrefix, runID))
		}
		s1, c1 := mark("viafileblob")
		s2, c2 := mark("local", WithLocalListing(dir))
		require.Equal(t, c1, c2, "seed %d", seed)
		require.Equal(t, s1.NumDeletedObjects, s2.NumDeletedObjects)
		require.Equal(t, s1.NumYoungObjects, s2.NumYoungObjects)
		require.Equal(t, s1.NumKeptObjects, s2.NumKeptObjects)
		require.Equal(t, s1.NumUnrecognizedObjects, s2.NumUnrecognizedObjects)
		candidates += len(c1)
	}
	require.NotZero(t, candidates, "the worlds marked nothing")
}

func openFileblob(t testing.TB, dir string) *blob.Bucket {
	t.Helper()
	b, err := fileblob.OpenBucket(dir, nil)
	require.NoError(t, err)
	return b
}

// TestLocalListingFailureSticks asks a failed listing again, with and
// without a delimiter: it gives its error again, never io.EOF (which would
// pass a listing cut short for a whole one).
func TestLocalListingFailureSticks(t *testing.T) {
	dir := t.TempDir()
	localfstest.HostileTree(t, dir, t0)
	for _, delim := range []string{"", "/"} {
		p, lst := newLocalPager(dir, "data/s1/", testWindow(), retry.Backoff{Sleep: retry.Sleep}, nil)
		if delim != "" {
			p, lst = newLocalLevelPager(dir, "data/", testWindow(), retry.Backoff{Sleep: retry.Sleep}, nil)
		}
		require.NotNil(t, p)
		lst.Chunk = 1
		denied := &os.PathError{Op: "readdir", Path: "x", Err: os.ErrPermission}
		n := 0
		lst.Fault = func(op, _ string) error {
			if op == "readdir" {
				if n++; n == 3 {
					return denied
				}
			}
			return nil
		}
		var err error
		for err == nil {
			_, err = p.Next(context.Background())
		}
		require.ErrorIs(t, err, denied, "delimiter %q", delim)
		for range 3 {
			_, again := p.Next(context.Background())
			require.ErrorIs(t, again, denied, "delimiter %q: asked again", delim)
		}
	}
}
