package host

import (
	"errors"
	"testing"
)

// A lakeFS path of the repository splits into its ref and its path as
// lakeFS's parser reads it (escapes decoded); another repository's path,
// one without a ref or a path, or one whose unescaped '?' or '#' would cut
// the path short, is refused.
func TestSplitLakeFSPath(t *testing.T) {
	for _, c := range []struct{ q, ref, path string }{
		{"lakefs://repo1/main/a.csv", "main", "a.csv"},
		{"lakefs://repo1/main/dir/a%3Fb%23c.csv", "main", "dir/a?b#c.csv"},
		{"lakefs://repo1/feature-1/a%20b", "feature-1", "a b"},
	} {
		ref, path, err := splitLakeFSPath(c.q, "repo1")
		if err != nil || ref != c.ref || path != c.path {
			t.Errorf("%s: %q %q %v, want %q %q", c.q, ref, path, err, c.ref, c.path)
		}
	}
	for _, q := range []string{
		"lakefs://repo2/main/a.csv", "lakefs://repo1/main", "lakefs://repo1/main/", "lakefs://repo1//a.csv",
		"lakefs://x@repo1/main/a.csv", "lakefs://repo1:80/main/a.csv", "lakefs://repo1", "lakefs://",
		"lakefs://repo1/main/a?b.csv", "lakefs://repo1/main/a#b.csv", "lakefs://repo1/main/a?",
	} {
		if _, _, err := splitLakeFSPath(q, "repo1"); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", q, err)
		}
	}
}
