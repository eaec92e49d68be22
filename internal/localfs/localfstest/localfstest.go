// Package localfstest holds the test helpers that localfs's tests and
// sweep's tests of the local listing share: what a listing says of one
// object (Listed), fileblob's own listing to compare a local listing with
// (FileblobListing), and a tree of files whose names fileblob treats
// specially (HostileTree).
//
// It is for tests only; its functions fail the test they are given, with
// testify's require, on any error.
package localfstest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

// Listed is what a listing says of one object.
type Listed struct {
	Key   string
	Size  int64
	Mod   time.Time
	IsDir bool
}

// Of is what o says.
func Of(o *blob.ListObject) Listed { return Listed{o.Key, o.Size, o.ModTime, o.IsDir} }

// String spells l whole, the key quoted: Sort's order.
func (l Listed) String() string {
	return fmt.Sprintf("%q(%d,%d,%t)", l.Key, l.Size, l.Mod.UnixNano(), l.IsDir)
}

// Sort sorts s by String, in place, and returns it: two listings of the
// same objects in any order sort alike.
func Sort(s []Listed) []Listed {
	slices.SortFunc(s, func(a, b Listed) int { return strings.Compare(a.String(), b.String()) })
	return s
}

// FileblobListing is fileblob's whole listing of prefix in the bucket at
// dir, with delimiter delim ("" for none), sorted, in one page (so that
// none of its pagination's losses come in; the trees of the tests are
// smaller than a page).
func FileblobListing(t testing.TB, dir, prefix, delim string) []Listed {
	t.Helper()
	b, err := fileblob.OpenBucket(dir, nil)
	require.NoError(t, err)
	defer b.Close()
	page, next, err := b.ListPage(context.Background(), blob.FirstPageToken, 1<<16, &blob.ListOptions{Prefix: prefix, Delimiter: delim})
	require.NoError(t, err)
	require.Empty(t, next)
	var out []Listed
	for _, o := range page {
		require.True(t, !o.IsDir || delim != "")
		out = append(out, Of(o))
	}
	return Sort(out)
}

// HostileTree writes files (and folders, symbolic links) whose names
// fileblob treats specially, under dir: its escapes (valid, out of range,
// negative, malformed; some decode to '/' or '.attrs'), its ".attrs" side
// files and folders so named, invalid UTF-8 (with and without an escape in
// the same path), names that sort around '/', empty folders, folders of
// side files only, nesting, links to files, to folders and to nothing, and
// two files of one key. The i-th file holds i bytes and was modified i
// hours before now.
func HostileTree(t testing.TB, dir string, now time.Time) {
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
		mod := now.Add(-time.Duration(i) * time.Hour)
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
