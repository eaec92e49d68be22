package sweep

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
)

// Regression tests: namespaces that hold objects lakeFS did
// not write, marked and swept with the default options. Each deleted data
// before Mark marked only what it recognizes (they use no API of that
// change, so that they run against the code before it too).

// sig43 is a linked object's signature of the right shape.
const sig43 = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE"

// monthOld is the modification time of every object of these tests.
var monthOld = t0.Add(-30 * 24 * time.Hour)

// oldBucket writes keys to a bucket whose listing says they are a month old.
func oldBucket(t *testing.T, keys []string) *blob.Bucket {
	t.Helper()
	return newTestBucket(writeKeys(t, keys), &testDriver{modTime: func(string) time.Time { return monthOld }})
}

// markAndSweep marks and sweeps b with the default options and in; it
// returns the candidates, or nil when Mark refused the run.
func markAndSweep(t *testing.T, b *blob.Bucket, in Inputs) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := Mark(ctx, b, "run1", in, WithClock(fixedClock), WithTempDir(t.TempDir())); err != nil {
		t.Logf("mark refused: %v", err)
		return nil
	}
	cands := collect(t, Candidates(ctx, b, DefaultStoragePrefix, "run1"))
	_, err := Sweep(ctx, b, "run1", WithClock(fixedClock))
	require.NoError(t, err)
	return cands
}

func requireExist(t *testing.T, b *blob.Bucket, keys []string) {
	t.Helper()
	for _, k := range keys {
		ok, err := b.Exists(context.Background(), k)
		require.NoError(t, err)
		require.True(t, ok, "%q was deleted", k)
	}
}

// TestParentRootedBucketKeepsOtherTenants: the bucket is opened at a shared
// bucket's root instead of the repository's folder. Other tenants' month-old
// files at the top level are not the old flat layout, and survive, with a
// small keep set (the mark finds nothing) and a large one (the canary
// refuses the mark: TestCanaryRefusesParentRootedBucket).
func TestParentRootedBucketKeepsOtherTenants(t *testing.T) {
	slice := descendingName(t0.Add(-100 * time.Hour))
	var stored, keep []string
	for i := range 1200 {
		stored = append(stored, "repo1/data/"+slice+"/"+objID(i))
		keep = append(keep, "data/"+slice+"/"+objID(i)) // as the host stores them
	}
	foreign := []string{"README.txt", "backup.tar", "notes", "repo1/_lakefs/dummy"}
	for _, n := range []int{10, len(keep)} {
		b := oldBucket(t, append(slices.Clone(stored), foreign...))
		cands := markAndSweep(t, b, Inputs{Uncommitted: seqOf(keep[:n]), Committed: seqOf(nil), ExportStart: t0})
		require.Empty(t, cands, "keep set of %d", n)
		requireExist(t, b, foreign)
		requireExist(t, b, stored)
	}
}

// TestImportSourcesInNamespaceSurvive: files imported from the repository's
// own namespace, at its top level and under its data folder, referenced
// only by an expired commit (so by no input), are not the repository's
// garbage; its own unreferenced objects still are.
func TestImportSourcesInNamespaceSurvive(t *testing.T) {
	slice := descendingName(t0.Add(-100 * time.Hour))
	live := "data/" + slice + "/" + objID(1)
	garbage := []string{"data/" + slice + "/" + objID(2), flatName(7), "data/" + earlyName(3)}
	imports := []string{"sales-2024.csv", "data/imports/sales/part-0.parquet", "data/year=2024/part-0.parquet",
		"data/" + slice + "/imported.csv"}
	b := oldBucket(t, append(append([]string{live}, garbage...), imports...))
	cands := markAndSweep(t, b, Inputs{Uncommitted: seqOf([]string{live}), Committed: seqOf(nil), ExportStart: t0})
	want := slices.Sorted(slices.Values(garbage))
	require.Equal(t, want, cands)
	requireExist(t, b, imports)
	requireExist(t, b, []string{live})
}

// TestNestedRepositoriesSurvive: repositories whose namespaces lie under
// the outer one's data folder, in a slice's folder and in a folder of its
// own: their objects and their _lakefs/ metadata survive the outer one's
// collection, which still collects its own garbage outside them. A slice's
// folder that holds another repository is that repository's: even the
// outer one's objects there are kept.
func TestNestedRepositoriesSurvive(t *testing.T) {
	slice := descendingName(t0.Add(-100 * time.Hour))
	other := descendingName(t0.Add(-101 * time.Hour))
	inner := descendingName(t0.Add(-300 * time.Hour))
	garbage := []string{"data/" + other + "/" + objID(2), flatName(1)}
	nested := []string{"data/" + slice + "/" + objID(3), "data/" + slice + "/" + objID(4) + "," + sig43}
	for _, ns := range []string{"data/" + slice + "/", "data/inner/"} {
		nested = append(nested, ns+"_lakefs/dummy", ns+"_lakefs/refs/branch/main", ns+"_lakefs/retention/gc/rules/config.json",
			ns+"data/"+inner+"/"+objID(5), ns+flatName(9), ns+"dummy")
	}
	b := oldBucket(t, append(slices.Clone(garbage), nested...))
	cands := markAndSweep(t, b, noInputs())
	require.Equal(t, slices.Sorted(slices.Values(garbage)), cands)
	requireExist(t, b, nested)
}

// TestNanoidLikeNamesUnderDataSurvive: a file directly under the data folder
// whose name is 21 characters of letters, digits, '-' and '_' is another
// writer's (lakeFS handed out linked addresses under a staging token's
// folder only): it is never a candidate.
func TestNanoidLikeNamesUnderDataSurvive(t *testing.T) {
	slice := descendingName(t0.Add(-100 * time.Hour))
	garbage := []string{"data/" + slice + "/" + objID(2)}
	foreign := []string{"data/customer-exports-2024", "data/V1StGXR8_Z5jdHi6B-myT"}
	b := oldBucket(t, slices.Concat(garbage, foreign))
	require.Equal(t, garbage, markAndSweep(t, b, noInputs()))
	requireExist(t, b, foreign)
}

// TestHexNamesNotUUIDsSurvive: lakeFS named its flat-layout objects hex of a
// version-4 UUID (google/uuid's New); other 32-digit hex names at the top
// level — MD5 digests of content-addressed files, hex of other UUIDs — are
// another writer's, and never candidates.
func TestHexNamesNotUUIDsSurvive(t *testing.T) {
	garbage := []string{"5f0c3a1e9b7d4c2a8e6f1b3d5c7a9e0f", flatName(3)}
	foreign := []string{
		"d41d8cd98f00b204e9800998ecf8427e", // MD5 of nothing
		"5f0c3a1e9b7d1c2a8e6f1b3d5c7a9e0f", // a version-1 UUID
		"5f0c3a1e9b7d4c2a0e6f1b3d5c7a9e0f", // not RFC 4122's variant
	}
	b := oldBucket(t, slices.Concat(garbage, foreign))
	require.Equal(t, slices.Sorted(slices.Values(garbage)), markAndSweep(t, b, noInputs()))
	requireExist(t, b, foreign)
}

// TestEarlyLinkedAfterCommitCollected: from January 2021 to July 2022 a
// branch's staging token after a commit was "<repository>-<branch>-<uuid>"
// (graveler's newStagingToken), and linked uploads of the time lie under it:
// they are the repository's, and collected when unreferenced.
func TestEarlyLinkedAfterCommitCollected(t *testing.T) {
	garbage := []string{
		"data/repo1-main-9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT",
		"data/repo1-main:9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myU",
	}
	foreign := []string{"data/repo1-main_9b2c6f0e-3d4a-4b5c-8d7e-1f2a3b4c5d6e/V1StGXR8_Z5jdHi6B-myT"}
	b := oldBucket(t, slices.Concat(garbage, foreign))
	require.Equal(t, slices.Sorted(slices.Values(garbage)), markAndSweep(t, b, noInputs()))
	requireExist(t, b, foreign)
}
