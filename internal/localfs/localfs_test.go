package localfs

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/localfs/localfstest"
	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
)

// t0 is the tests' clock.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// listed is what a listing says of one object.
type listed = localfstest.Listed

// fileblobListing is fileblob's whole listing of prefix in the bucket at
// dir, in one page.
func fileblobListing(t testing.TB, dir, prefix string) []listed {
	t.Helper()
	return localfstest.FileblobListing(t, dir, prefix, "")
}

// localListing lists prefix through a Lister reading chunk entries at
// once; ok is false when it leaves the prefix to the bucket.
func localListing(t testing.TB, dir, prefix string, chunk int) (out []listed, ok bool) {
	t.Helper()
	return localListingDelim(t, dir, prefix, "", chunk)
}

// localListingDelim is localListing with a delimiter ("" or "/").
func localListingDelim(t testing.TB, dir, prefix, delim string, chunk int) (out []listed, ok bool) {
	t.Helper()
	l := New(dir, prefix)
	if delim != "" {
		l = NewLevel(dir, prefix)
	}
	if l == nil {
		return nil, false
	}
	l.Chunk = chunk
	defer l.Close()
	var page []*blob.ListObject
	for !l.Done() {
		var err error
		page, err = l.Read(page[:0])
		require.NoError(t, err)
		for _, o := range page {
			out = append(out, localfstest.Of(o))
		}
	}
	return localfstest.Sort(out), true
}

// TestLocalListingMatchesFileblob lists prefixes of a hostile tree through
// a Lister and through fileblob: the same keys, sizes and times, for
// every chunk size. Prefixes whose folder is not a plain folder (a file, a
// link, a path with "//") are left to fileblob.
func TestLocalListingMatchesFileblob(t *testing.T) {
	dir := t.TempDir()
	localfstest.HostileTree(t, dir, t0)
	local := []string{
		"data/s1/", "data/s2/", "data/s3/", "data/s10/", "data/s1", "data/s", "data/", "data/s1/nested/",
		"data/s1/a/", "data/s1/a", "data/s1/only.attrs/", "data/s1/d__0x41__/", "data/s1/dA/", "data/missing/",
		"data/s1/empty/", "data/s1/z/", "data/s1.attrs/", "data/s1/onlysidecars/", "data/s1/\xffdir/",
		"data/s1/__0x2f__/", "missing/x/", "data/s1/\uFFFD",
	}
	for _, prefix := range local {
		want := fileblobListing(t, dir, prefix)
		for _, chunk := range []int{1, 2, 3, Chunk} {
			got, ok := localListing(t, dir, prefix, chunk)
			require.True(t, ok, "prefix %q left to fileblob", prefix)
			require.Equal(t, want, got, "prefix %q, chunk %d", prefix, chunk)
		}
	}
	// The tree must hold what makes the two differ if one is wrong.
	all := fileblobListing(t, dir, "data/s1/")
	keys := map[string]int{}
	for _, o := range all {
		keys[o.Key]++
	}
	for _, k := range []string{"data/s1/aA", "data/s1/y.attrs", "data/s1/z/w", "data/s1//lead", "data/s1/link",
		"data/s1/only.attrs/f", "data/s1/\uFFFDinvA", "data/s1/\xffinv", "data/s1/\uFFFDdir/gB"} {
		require.NotZero(t, keys[k], "fileblob does not list %q: %v", k, all)
	}
	require.Equal(t, 2, keys["data/s1/aA"])
	require.Zero(t, keys["data/s1/x.attrs"])
	for _, prefix := range []string{"data/s1/plain/", "data/s1/link/", "data/s1/dirlink/", "data//", "data/s1/../s2/", "/x/", "x", ""} {
		_, ok := localListing(t, dir, prefix, Chunk)
		require.False(t, ok, "prefix %q listed locally", prefix)
	}
}

// TestLocalLevelListingMatchesFileblob lists prefixes of the hostile tree
// with the delimiter "/" through a Lister and through fileblob: the same
// objects and folders (a folder only when a file lies below it). A folder
// whose entries are not all plain is left to fileblob.
func TestLocalLevelListingMatchesFileblob(t *testing.T) {
	dir := t.TempDir()
	localfstest.HostileTree(t, dir, t0)
	for _, prefix := range []string{"", "data/", "data/s1/nested/", "data/s1/a/", "data/s3/", "data/s5/", "data/s7/",
		"data/missing/", "data/s1/empty/"} {
		want := localfstest.FileblobListing(t, dir, prefix, "/")
		for _, chunk := range []int{1, 2, Chunk} {
			got, ok := localListingDelim(t, dir, prefix, "/", chunk)
			require.True(t, ok, "prefix %q left to fileblob", prefix)
			require.Equal(t, want, got, "prefix %q, chunk %d", prefix, chunk)
		}
	}
	// The tree must hold what a wrong listing would get wrong.
	data := map[string]bool{}
	for _, o := range localfstest.FileblobListing(t, dir, "data/", "/") {
		data[o.Key] = o.IsDir
	}
	for k, isDir := range map[string]bool{"data/s1/": true, "data/s6.attrs/": true, "data/s7/": true, "data/slink": false, "data/loose": false} {
		d, ok := data[k]
		require.True(t, ok && d == isDir, "fileblob's listing of data/ has no %q (folder %t): %v", k, isDir, data)
	}
	for _, k := range []string{"data/s3/", "data/s4/", "data/s5/", "data/loose.attrs"} {
		_, ok := data[k]
		require.False(t, ok, "fileblob's listing of data/ has %q", k)
	}
	for _, prefix := range []string{"data/s1/", "data/s1", "data//", "data/s1/plain/", "data/slink/", "x"} {
		_, ok := localListingDelim(t, dir, prefix, "/", Chunk)
		require.False(t, ok, "prefix %q listed locally", prefix)
	}
}

// treeRunes make random trees' names: fileblob's escape in pieces, bytes
// around '/', invalid UTF-8, the side files' suffix.
var treeRunes = []string{"a", "b", "_", "__0x", "41", "2f", "-", "__", ".attrs", "\xff", "é", "0", "x", "."}

// TestLocalListingMatchesFileblobRandom does the same on random trees, for
// the prefix of every folder and of some names cut short.
func TestLocalListingMatchesFileblobRandom(t *testing.T) {
	rounds := propertyRounds(t)
	levels := 0
	defer func() {
		if !t.Failed() && levels == 0 {
			t.Error("no listing with a delimiter was read locally")
		}
	}()
	for seed := range uint64(rounds) {
		r := rand.New(rand.NewPCG(seed, 22))
		alphabet := treeRunes
		if seed%2 == 1 {
			// Plain names only, so that listings with a delimiter are
			// read locally too.
			alphabet = slices.DeleteFunc(slices.Clone(treeRunes), func(s string) bool { return !PlainName(s) || s == "__0x" })
		}
		dir := t.TempDir()
		prefixes := map[string]bool{"data/": true, "": true}
		for range 5 + r.IntN(60) {
			var parts []string
			for range 1 + r.IntN(3) {
				var b strings.Builder
				for range 1 + r.IntN(4) {
					b.WriteString(alphabet[r.IntN(len(alphabet))])
				}
				name := b.String()
				if name == "." || name == ".." {
					name += "a"
				}
				parts = append(parts, name)
			}
			rel := "data/" + strings.Join(parts, "/")
			p := filepath.Join(dir, filepath.FromSlash(rel))
			if os.MkdirAll(filepath.Dir(p), 0o755) != nil {
				continue // a file where a folder would go
			}
			if r.IntN(8) == 0 {
				_ = os.MkdirAll(p, 0o755)
			} else {
				_ = os.WriteFile(p, []byte(rel), 0o644)
			}
			for i := range parts {
				prefixes["data/"+strings.Join(parts[:i], "/")+"/"] = true
			}
			cut := "data/" + strings.Join(parts, "/")
			prefixes[cut[:5+r.IntN(len(cut)-4)]] = true
		}
		for _, prefix := range slices.Sorted(func(yield func(string) bool) {
			for p := range prefixes {
				if !yield(p) {
					return
				}
			}
		}) {
			if got, ok := localListing(t, dir, prefix, 1+r.IntN(4)); ok {
				require.Equal(t, fileblobListing(t, dir, prefix), got, "seed %d, prefix %q", seed, prefix)
			}
			if got, ok := localListingDelim(t, dir, prefix, "/", 1+r.IntN(4)); ok {
				levels++
				require.Equal(t, localfstest.FileblobListing(t, dir, prefix, "/"), got, "seed %d, prefix %q with a delimiter", seed, prefix)
			}
		}
	}
}

// TestLocalListingUnderChange changes the tree while it is listed, one
// change after each object handed out: every key present throughout is
// listed, once; every key listed was present at some time; nothing fails.
func TestLocalListingUnderChange(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 5))
		dir := t.TempDir()
		root := filepath.Join(dir, "data", "s")
		ever, now, initial := map[string]bool{}, map[string]bool{}, map[string]bool{}
		write := func(rel string) {
			p := filepath.Join(root, filepath.FromSlash(rel))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, nil, 0o644))
			ever["data/s/"+rel], now["data/s/"+rel] = true, true
		}
		for i := range 30 {
			write(fmt.Sprintf("f%02d", i))
			write(fmt.Sprintf("d%d/g%02d", i%4, i))
		}
		for k := range now {
			initial[k] = true
		}
		touched := map[string]bool{}
		changes := []func(){
			func() { // a file removed
				k := fmt.Sprintf("f%02d", r.IntN(30))
				os.Remove(filepath.Join(root, k))
				touched["data/s/"+k], now["data/s/"+k] = true, false
			},
			func() { // a file replaced by a folder holding a file
				k := fmt.Sprintf("f%02d", r.IntN(30))
				os.Remove(filepath.Join(root, k))
				touched["data/s/"+k], now["data/s/"+k] = true, false
				write(k + "/inner")
			},
			func() { // a folder removed
				d := fmt.Sprintf("d%d", r.IntN(4))
				os.RemoveAll(filepath.Join(root, d))
				for k := range now {
					if strings.HasPrefix(k, "data/s/"+d+"/") {
						touched[k], now[k] = true, false
					}
				}
			},
			func() { // a folder replaced by a file
				d := fmt.Sprintf("d%d", r.IntN(4))
				os.RemoveAll(filepath.Join(root, d))
				for k := range now {
					if strings.HasPrefix(k, "data/s/"+d+"/") {
						touched[k], now[k] = true, false
					}
				}
				write(d)
			},
			func() { write(fmt.Sprintf("new%d/h", r.IntN(100))) }, // a folder added
		}
		l := New(dir, "data/s/")
		require.NotNil(t, l)
		l.Chunk = 1 + r.IntN(3)
		got := map[string]int{}
		var page []*blob.ListObject
		for !l.Done() {
			var err error
			page, err = l.Read(page[:0])
			require.NoError(t, err)
			for _, o := range page {
				got[o.Key]++
				changes[r.IntN(len(changes))]()
			}
		}
		throughout := 0
		for k := range initial {
			if !touched[k] {
				throughout++
				require.Equal(t, 1, got[k], "seed %d: %q present throughout", seed, k)
			}
		}
		require.NotZero(t, throughout)
		for k, n := range got {
			require.True(t, ever[k], "seed %d: %q listed, never written", seed, k)
			require.Equal(t, 1, n, "seed %d: %q listed %d times", seed, k, n)
		}
	}
}

// propertyRounds is the number of random worlds a property test runs: 40,
// 10 with -short, or n when LAKEGC_PROPERTY_ROUNDS=n (the knob sweep's
// property tests read).
func propertyRounds(t *testing.T) int {
	t.Helper()
	s := os.Getenv("LAKEGC_PROPERTY_ROUNDS")
	if s == "" {
		if testing.Short() {
			return 10
		}
		return 40
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, "LAKEGC_PROPERTY_ROUNDS")
	return n
}

// TestLocalListingFolderReplacedByLink replaces a folder by a symbolic link
// to a folder outside the namespace after its parent was read and before
// it is opened: the link's target is never listed (its files under the
// folder's keys would be deleted through the link), with and without a
// delimiter, and the rest of the listing is whole.
func TestLocalListingFolderReplacedByLink(t *testing.T) {
	for _, delim := range []string{"", "/"} {
		dir := t.TempDir()
		outside := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644))
		for _, f := range []string{"data/s/keep", "data/s/d/old", "data/s/e/f"} {
			p := filepath.Join(dir, filepath.FromSlash(f))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, nil, 0o644))
		}
		l := New(dir, "data/s/")
		if delim != "" {
			l = NewLevel(dir, "data/s/")
		}
		require.NotNil(t, l)
		swapped := false
		l.Fault = func(op, rel string) error {
			if op == "open" && rel == "data/s/d" && !swapped {
				swapped = true
				d := filepath.Join(dir, "data", "s", "d")
				require.NoError(t, os.RemoveAll(d))
				require.NoError(t, os.Symlink(outside, d))
			}
			return nil
		}
		var got []string
		var page []*blob.ListObject
		for !l.Done() {
			var err error
			page, err = l.Read(page[:0])
			require.NoError(t, err)
			for _, o := range page {
				got = append(got, o.Key)
			}
		}
		l.Close()
		require.True(t, swapped, "delimiter %q: the folder was opened", delim)
		slices.Sort(got)
		want := []string{"data/s/e/f", "data/s/keep"}
		if delim != "" {
			want = []string{"data/s/e/", "data/s/keep"}
		}
		require.Equal(t, want, got, "delimiter %q", delim)
	}
}
