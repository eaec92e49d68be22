package s3sim

import (
	"context"
	"strings"
	"testing"

	"gocloud.dev/blob"
)

// FuzzListPageToken: any page token either fails with ErrInvalid or lists
// a page in order, within the prefix, after the entry the token names (a
// key, or a folder and every key under it).
func FuzzListPageToken(f *testing.F) {
	for _, seed := range []string{"adata/s1/", "adata/s4/d1/o05", "ddata/s4/d1/", "a", "d", "d\xff", "a\xff", "x", "adummy"} {
		f.Add([]byte(seed), "data/", true, 3)
	}
	store := newTestStore(f)
	b := store.Bucket()
	f.Fuzz(func(t *testing.T, tok []byte, prefix string, delim bool, size int) {
		first := len(tok) == 0
		if first {
			tok = blob.FirstPageToken
		}
		size = 1 + size&1023
		opts := &blob.ListOptions{Prefix: prefix}
		if delim {
			opts.Delimiter = "/"
		}
		objs, _, err := b.ListPage(context.Background(), tok, size, opts)
		if err != nil {
			if code(err) != code(ErrInvalid) {
				t.Fatalf("ListPage(%q) = %v", tok, err)
			}
			return
		}
		prev := ""
		for i, o := range objs {
			switch {
			case !strings.HasPrefix(o.Key, prefix):
				t.Fatalf("%q outside prefix %q", o.Key, prefix)
			case i > 0 && o.Key <= prev:
				t.Fatalf("%q after %q", o.Key, prev)
			case !first && (o.Key <= string(tok[1:]) || tok[0] == tokenAfterDir && strings.HasPrefix(o.Key, string(tok[1:]))) &&
				!(o.IsDir && strings.HasPrefix(string(tok[1:]), o.Key)):
				// A folder that holds keys after the token's is listed.
				t.Fatalf("%q listed after token %q", o.Key, tok)
			}
			prev = o.Key
		}
	})
}
