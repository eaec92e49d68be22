package lakegc

import (
	"context"
	"iter"
	"slices"
	"testing"

	"github.com/lakegc/lakegc/internal/nsaddr"
)

func addresses(as []string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, a := range as {
			if !yield(a, nil) {
				return
			}
		}
	}
}

// relativeAddresses compares a full address's scheme and authority with the
// namespace's regardless of ASCII case, as RFC 3986 says, and its path
// exactly.
func TestRelativeAddresses(t *testing.T) {
	in := []string{
		"data/a",                          // relative: as is
		"s3://bucket/repo/data/b",         // under the namespace
		"S3://bucket/repo/data/c",         // scheme in upper case
		"s3://BUCKET/repo/data/d",         // authority in upper case
		"s3://bucket/REPO/data/e",         // another path: not the namespace's
		"s3://bucket/repo",                // the namespace itself
		"s3://bucket/repo/",               // the namespace's folder
		"s3://bucket/repo2/data/f",        // a sibling namespace
		"gs://bucket/repo/data/g",         // another scheme
		"s3://bucket.example/repo/data/h", // another authority
		"s3://bucket/repo/data/\u212a",    // a path with a non-ASCII letter
		"s3://bucket/repo/data/k%3Dv",     // an escape: both spellings kept
		"s3://bucket\u212a/repo/data/i",   // an authority with one: not ASCII case
		"s3://bucket/repo//data/j",        // kept as spelled
	}
	want := []string{"data/a", "data/b", "data/c", "data/d", "data/\u212a", "data/k%3Dv", "data/k=v", "/data/j", "data/j"}
	for _, ns := range []string{"s3://bucket/repo", "s3://bucket/repo/", "s3://bucket/repo//"} {
		var got []string
		n, err := nsaddr.New(ns, DefaultDataPrefix)
		if err != nil {
			t.Fatal(err)
		}
		c := &cycle{ns: n}
		for a, err := range c.relativeAddresses(context.Background(), "test", addresses(in)) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, a)
		}
		if !slices.Equal(got, want) {
			t.Errorf("relativeAddresses(%q):\n got  %q\n want %q", ns, got, want)
		}
	}
}

// TestRedactUserinfo: a foreign address's credentials never reach the report.
func TestRedactUserinfo(t *testing.T) {
	for in, want := range map[string]string{
		"s3://key:secret@bucket/x@y": "s3://REDACTED@bucket/x@y",
		"s3://bucket/x@y":            "s3://bucket/x@y",
		"gs://u@b":                   "gs://REDACTED@b",
		"data/a@b":                   "data/a@b",
		"https://a@b?c@d":            "https://REDACTED@b?c@d",
	} {
		if got := redactUserinfo(in); got != want {
			t.Errorf("redactUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}
