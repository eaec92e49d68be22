package metarange

import (
	"slices"
	"testing"
)

func TestNamespaceKeys(t *testing.T) {
	cases := []struct {
		namespace, address string
		typ                addressType
		want               []string
		outcome            outcome
	}{
		// Relative addresses are kept as stored, whatever they look like,
		// and on S3 also as lakeFS before v0.110 read them (aws-sdk-go v1
		// cleaned the request's path).
		{"s3://bucket/repo", "data/gx/cy", relative, []string{"data/gx/cy"}, asStored},
		{"s3://bucket/repo", "data/gx/cy,c2lnbmF0dXJl", relative, []string{"data/gx/cy,c2lnbmF0dXJl"}, asStored},
		{"s3://bucket/repo", "s3://bucket/repo/x", relative, []string{"s3://bucket/repo/x", "s3:/bucket/repo/x"}, asStored},
		{"s3://bucket/repo", "data//gx/./cy", relative, []string{"data//gx/./cy", "data/gx/cy"}, asStored},
		{"gs://bucket/repo", "data//gx/./cy", relative, []string{"data//gx/./cy"}, asStored},

		// Full addresses inside the namespace are made relative.
		{"s3://bucket/repo", "s3://bucket/repo/data/gx/cy", full, []string{"data/gx/cy"}, madeRelative},
		{"s3://bucket/repo/", "s3://bucket/repo/data/gx/cy", full, []string{"data/gx/cy"}, madeRelative},
		{"s3://bucket", "s3://bucket/repo/x", full, []string{"repo/x"}, madeRelative},
		{"s3://bucket/", "s3://bucket/repo/x", full, []string{"repo/x"}, madeRelative},
		{"s3://bucket/a/b", "s3://bucket/a/b/c/d", full, []string{"c/d"}, madeRelative},
		{"gs://bucket/repo", "gs://bucket/repo/x", full, []string{"x"}, madeRelative},
		{"https://acct.blob.core.windows.net/c/repo", "https://acct.blob.core.windows.net/c/repo/x", full, []string{"x"}, madeRelative},
		{"local://repo", "local://repo/data/x", full, []string{"data/x"}, madeRelative},
		{"local:///var/lakefs/repo", "local:///var/lakefs/repo/data/x", full, []string{"data/x"}, madeRelative},
		// lakeFS resolves these into the namespace too: both forms are kept.
		{"s3://bucket/repo", "S3://bucket/repo/x", full, []string{"x"}, madeRelative},
		{"s3://bucket/repo", "s3://Bucket/repo/x", full, []string{"x"}, madeRelative},
		{"s3://bucket/repo", "s3://bucket/repo/a%20b", full, []string{"a%20b", "a b"}, madeRelative},
		// lakeFS since PR #9464 (September 2025) resolves the raw path,
		// before it the decoded one: a repository written by both holds
		// both keys.
		{"s3://bucket/repo", "s3://bucket/repo/a%2Fb", full, []string{"a%2Fb", "a/b"}, madeRelative},
		{"s3://bucket/repo", "s3://bucket/repo/data/year%3D2024/part-0", full, []string{"data/year%3D2024/part-0", "data/year=2024/part-0"}, madeRelative},
		// Azure: any endpoint domain of the account, the blob name trimmed
		// and decoded, as lakeFS's adapter resolves it.
		{"https://acct.blob.core.windows.net/c/repo", "https://acct.dfs.core.windows.net/c/repo/x", full, []string{"x"}, madeRelative},
		{"https://acct.blob.core.windows.net/c/repo", "https://acct.blob.core.windows.net/c/repo/x/", full, []string{"x/", "x"}, madeRelative},
		{"https://acct.blob.core.windows.net/c/repo", "https://acct.blob.core.windows.net/c/repo/k%3Dv", full, []string{"k%3Dv", "k=v"}, madeRelative},
		{"http://acct.blob.core.windows.net/c/repo", "https://acct.blob.core.windows.net/c/repo/x", full, []string{"x"}, madeRelative},
		// Not parsed by lakeFS, but what its GC clients strip.
		{"s3://bucket/repo", "s3://bucket/repo/%zz", full, []string{"%zz"}, madeRelative},

		// Full addresses outside the namespace are dropped.
		{"s3://bucket/repo", "s3://bucket/repo2/x", full, nil, outside},
		{"s3://bucket/repo", "s3://bucket/x", full, nil, outside},
		{"s3://bucket/repo", "s3://other/repo/x", full, nil, outside},
		{"s3://bucket/repo", "gs://bucket/repo/x", full, nil, outside},
		{"s3://bucket/repo", "s3://bucket/repo", full, nil, outside},
		{"s3://bucket/repo", "s3://bucket/repo/", full, nil, outside},
		{"s3://bucket/repo", "ftp://bucket/repo2/x", full, nil, outside},
		{"https://acct.blob.core.windows.net/c/repo", "https://other.dfs.core.windows.net/c/repo/x", full, nil, outside},
		// ... but for the tail of a lakeFS key shape.
		{"s3://bucket/repo", "s3://imports/data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0", full, []string{"data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"}, outside},

		// The namespace in another spelling: a mismatch, which fails the
		// iteration.
		{"s3://bucket/repo", "s3a://bucket/repo/x", full, nil, mismatch},
		{"s3://bucket/repo", "s3://bucket/./repo/x", full, nil, mismatch},
		{"s3://bucket/repo", "s3://bucket/re%70o/x", full, nil, mismatch},
		{"local:///var/lakefs/repo", "local:///var/lakefs//repo/x", full, nil, mismatch},
		{"local://repo", "local://repo2/x", full, nil, outside},
		// A "full" address that is not a URI is kept, as lakeFS's Spark GC does.
		{"s3://bucket/repo", "data/x", full, []string{"data/x"}, asStored},

		// The deprecated type: full when lakeFS parses a URI of its storages.
		{"s3://bucket/repo", "4d2f1b0c", byPrefixDeprecated, []string{"4d2f1b0c"}, asStored},
		{"s3://bucket/repo", "data/x", byPrefixDeprecated, []string{"data/x"}, asStored},
		{"s3://bucket/repo", "s3://bucket/repo/4d2f", byPrefixDeprecated, []string{"4d2f"}, madeRelative},
		{"s3://bucket/repo", "s3://bucket/other/4d2f", byPrefixDeprecated, nil, outside},
		{"s3://bucket/repo", "foo://bucket/repo/x", byPrefixDeprecated, []string{"foo://bucket/repo/x", "foo:/bucket/repo/x"}, asStored},
		{"s3://bucket/repo", "s3:x", byPrefixDeprecated, []string{"s3:x"}, asStored},
	}
	for _, c := range cases {
		ns, err := parseNamespace(c.namespace)
		if err != nil {
			t.Fatalf("parseNamespace(%q): %v", c.namespace, err)
		}
		got, oc := ns.keys(nil, c.address, c.typ)
		if !slices.Equal(got, c.want) || oc != c.outcome {
			t.Errorf("namespace %q, address %q, type %d: %q, %d; want %q, %d",
				c.namespace, c.address, c.typ, got, oc, c.want, c.outcome)
		}
	}
}

func TestParseNamespaceRefuses(t *testing.T) {
	for _, s := range []string{"", "bucket/repo", "/repo", "ftp://bucket/repo", "s3:bucket", "s3://bucket/%zz"} {
		if _, err := parseNamespace(s); err == nil {
			t.Errorf("parseNamespace(%q) succeeded", s)
		}
	}
}
