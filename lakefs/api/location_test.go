package api

import "testing"

func TestSameLocalNamespace(t *testing.T) {
	for _, tc := range []struct {
		root, ns string
		want     bool
	}{
		{"local:///var/lakefs/repo1", "local://repo1", true},
		{"local:///var/lakefs/repo1", "local://repo1/", true},
		{"local:///srv/other/data/repo1", "local://repo1", true},
		{"local:///var/lakefs/a/b", "local://a/b", true},
		{"local:///var/lakefs/repo1", "local:///repo1", true},
		{"local:///var/lakefs/repo10", "local://repo1", false},
		{"local:///var/lakefs/xrepo1", "local://repo1", false},
		{"local:///var/lakefs/repo2", "local://repo1", false},
		{"local://repo1", "local://repo1", false},
		{"local:///var/lakefs/repo1", "local://", false},
		{"local:///var/lakefs/", "local://", false},
		{"local:///var/lakefs/", "local:///", false},
		{"s3://b/repo1", "s3://b/repo1", false},
		{"local:///var/lakefs/repo1", "s3://b/repo1", false},
	} {
		if got := SameLocalNamespace(tc.root, tc.ns); got != tc.want {
			t.Errorf("SameLocalNamespace(%q, %q) = %v, want %v", tc.root, tc.ns, got, tc.want)
		}
	}
}
