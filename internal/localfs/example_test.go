package localfs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/lakegc/lakegc/internal/localfs"
	"gocloud.dev/blob"
)

// A Lister reads a fileblob bucket's folder: fileblob's escapes decoded, its
// ".attrs" side files left out, in the file system's order.
func Example() {
	dir, err := os.MkdirTemp("", "localfs")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for _, f := range []string{"data/s1/a", "data/s1/b__0x2c__c", "data/s1/a.attrs", "data/s2/d", "other"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			panic(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			panic(err)
		}
	}
	l := localfs.New(dir, "data/s1/")
	defer l.Close()
	var keys []string
	var page []*blob.ListObject
	for !l.Done() {
		if page, err = l.Read(page[:0]); err != nil {
			panic(err)
		}
		for _, o := range page {
			keys = append(keys, o.Key)
		}
	}
	slices.Sort(keys)
	fmt.Println(keys)
	// Output: [data/s1/a data/s1/b,c]
}
