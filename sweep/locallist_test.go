package sweep

import (
	"context"
	"errors"
	"fmt"
	"github.com/lakegc/lakegc/internal/aimd"
	"github.com/lakegc/lakegc/internal/localfs"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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
type listed struct {
	key   string
	size  int64
	mod   time.Time
	isDir bool
}

func (o listed) String() string {
	return fmt.Sprintf("%q(%d,%d,%t)", o.key, o.size, o.mod.UnixNano(), o.isDir)
}

// fileblobListingDelim is fileblob's whole listing of prefix in the bucket
// at dir with a delimiter, in one page (so that none of its pagination's
// losses come in; the trees of the tests are smaller than a page).
func fileblobListingDelim(t testing.TB, dir, prefix, delim string) []listed {
	t.Helper()
	b, err := fileblob.OpenBucket(dir, nil)
	require.NoError(t, err)
	defer b.Close()
	page, next, err := b.ListPage(context.Background(), blob.FirstPageToken, 1<<16, &blob.ListOptions{Prefix: prefix, Delimiter: delim})
	require.NoError(t, err)
	require.Empty(t, next)
	var out []listed
	for _, o := range page {
		require.True(t, !o.IsDir || delim != "")
		out = append(out, listed{o.Key, o.Size, o.ModTime, o.IsDir})
	}
	return sortListed(out)
}

func sortListed(s []listed) []listed {
	slices.SortFunc(s, func(a, b listed) int { return strings.Compare(a.String(), b.String()) })
	return s
}

// testWindow is a window as Mark's default, for pagers made by hand.
func testWindow() *aimd.Window { return aimd.New(1, DefaultListConcurrency, DefaultMaxListConcurrency) }

// hostileTree writes files (and folders, symbolic links) whose names
// fileblob treats specially, under dir: its escapes (valid, out of range,
// negative, malformed; some decode to '/' or '.attrs'), its ".attrs" side
// files and folders so named, invalid UTF-8 (with and without an escape in
// the same path), names that sort around '/', empty folders, folders of
// side files only, nesting, links to files, to folders and to nothing, and
// two files of one key.
func hostileTree(t testing.TB, dir string) {
	t.Helper()
	files := []string{
		"top", "data/loose",
		"data/s1/plain", "data/s1/a__0x41__", "data/s1/aA", "data/s1/x.attrs", "data/s1/plain.attrs",
		"data/s1/y__0x2e__attrs", "data/s1/z__0x2f__w", "data/s1/__0x2f__lead", "data/s1/tr__0x2f__",
		"data/s1/neg__0x-41__", "data/s1/big__0x110000__", "data/s1/huge__0x1ffffffff__", "data/s1/sur__0xd800__",
		"data/s1/bad__0xzz__", "data/s1/open__0x41_", "data/s1/empty__0x__", "data/s1/twice__0x41____0x42__",
		"data/s1/\xffinv", "data/s1/\xffinv__0x41__", "data/s1/sp ace", "data/s1/ctl\x01",
		"data/s1/a-b", "data/s1/a/x", "data/s1/a/y-z", "data/s1/a.b", "data/s1/a0",
		"data/s1/only.attrs/f", "data/s1/onlysidecars/k.attrs", "data/s1/nested/deeper/leaf", "data/s1/nested/n",
		"data/s1/d__0x41__/f", "data/s1/\xffdir/g__0x42__", "data/s1/\xffq.attrs/__0x41__", "data/s1/__0x2f__/f",
		"data/s10/p", "data/s2/q", "data/s1.attrs/r", "data/s1-x/u",
		"data/s4/k.attrs", "data/s6.attrs/f", "data/loose.attrs", "data/s7/deep/er/f", "data/s7/deep/x.attrs",
	}
	for i, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("x", i)), 0o644))
		mod := t0.Add(-time.Duration(i) * time.Hour)
		require.NoError(t, os.Chtimes(p, mod, mod))
	}
	for _, d := range []string{"data/s1/empty", "data/s1/emptier/still", "data/s3", "data/s5/e/f", "data/s4/g.attrs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755))
	}
	for link, target := range map[string]string{
		"data/s1/link": "plain", "data/s1/dirlink": "nested", "data/s1/dangling": "nowhere", "data/s1/uplink": "..",
		"data/slink": "s1",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(dir, filepath.FromSlash(link))))
	}
}

// TestLocalListingRetries fails operations of the listing, with and
// without a delimiter: a transient error is retried (after the backoff) and
// the listing is whole, a permanent one fails it, and so does one that
// persists beyond listAttempts.
func TestLocalListingRetries(t *testing.T) {
	dir := t.TempDir()
	hostileTree(t, dir)
	for _, mode := range []struct {
		prefix, delim string
		at            func(op, rel string) bool // the operations that fail
	}{
		{"data/s1/", "", func(_, rel string) bool { return strings.Contains(rel, "nested") }},
		{"data/", "/", func(op, rel string) bool {
			return op == "lstat" && rel == "data/loose" || op != "lstat" && strings.HasPrefix(rel, "data/s7")
		}},
	} {
		want := fileblobListingDelim(t, dir, mode.prefix, mode.delim)
		for _, op := range []string{"open", "readdir", "lstat"} {
			t.Run(fmt.Sprintf("%s%s/%s", mode.prefix, mode.delim, op), func(t *testing.T) {
				for _, tc := range []struct {
					name   string
					err    error
					times  int
					failed bool
				}{
					{"transient", syscall.EIO, 3, false},
					{"persistent", syscall.EIO, listAttempts, true},
					{"permanent", &os.PathError{Op: op, Path: "x", Err: os.ErrPermission}, 1, true},
				} {
					t.Run(tc.name, func(t *testing.T) {
						var waits, left = 0, tc.times
						b := backoff{lo: time.Second, hi: time.Minute,
							sleep: func(context.Context, time.Duration) error { waits++; return nil }}
						p := newLocalPager(dir, mode.prefix, testWindow(), b)
						if mode.delim != "" {
							p = newLocalLevelPager(dir, mode.prefix, testWindow(), b)
						}
						p.lst.Chunk = 2
						p.lst.Fault = func(o, rel string) error {
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
							got = append(got, listed{o.Key, o.Size, o.ModTime, o.IsDir})
						}
						require.False(t, tc.failed, "the listing did not fail")
						require.Equal(t, tc.times, waits)
						require.Equal(t, want, sortListed(got))
					})
				}
			})
		}
	}
}

// TestLocalListingCancelled stops a listing by its context.
func TestLocalListingCancelled(t *testing.T) {
	dir := t.TempDir()
	hostileTree(t, dir)
	p := newLocalPager(dir, "data/s1/", testWindow(), backoff{sleep: sleep})
	p.lst.Chunk = 1
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
	require.False(t, p.lst.Reading(), "the folder stays open")
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
	hostileTree(t, dir)
	for _, delim := range []string{"", "/"} {
		p := newLocalPager(dir, "data/s1/", testWindow(), backoff{sleep: sleep})
		if delim != "" {
			p = newLocalLevelPager(dir, "data/", testWindow(), backoff{sleep: sleep})
		}
		require.NotNil(t, p)
		p.lst.Chunk = 1
		denied := &os.PathError{Op: "readdir", Path: "x", Err: os.ErrPermission}
		n := 0
		p.lst.Fault = func(op, _ string) error {
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
