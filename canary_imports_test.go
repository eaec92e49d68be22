package lakegc_test

import (
	"context"
	"testing"

	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc"
)

// TestImportsFromAnotherRepositoryDoNotTripTheCanary: a repository that
// imported 1,500 objects from another lakeFS repository's namespace (their
// addresses end in "data/<slice>/<xid>", a key shape of its own) and wrote
// a few of its own. The imports' tails join the keep set, in case they name
// this namespace's objects in another spelling; they are not this listing's
// to find, and the cycle runs.
//
// Known false positive, not fixed: the canary cannot tell these tails from
// the repository's own keys, which reach Mark in the same input streams
// (the producers in uncommitted and lakefs/metarange would have to hand
// them over apart). Mark refuses with ErrImplausibleMark, found 5 of 1,505.
func TestImportsFromAnotherRepositoryDoNotTripTheCanary(t *testing.T) {
	t.Skip("known false positive of the canary's rule A: see the comment")
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	ns := "s3://bucket/repo1"
	if err := lakegc.InitNamespace(context.Background(), lakegc.Config{Bucket: bucket, Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	own := lakeFSKeys(t, 10)
	committed := []string{}
	for _, k := range own[:5] {
		committed = append(committed, ns+"/"+k)
	}
	for _, k := range lakeFSKeys(t, 1500) {
		committed = append(committed, "s3://other-bucket/repo2/"+k)
	}
	c := identityCase{bucket: bucket, namespace: ns, live: own[:5], garbage: own[5:], committed: committed}
	rep, err := c.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sweep.Deleted != 5 {
		t.Errorf("deleted %d, want 5", rep.Sweep.Deleted)
	}
	assertKept(t, bucket, c.live)
}
