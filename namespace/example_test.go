package namespace_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lakegc/lakegc/namespace"
	_ "gocloud.dev/blob/fileblob" // the drivers of the kinds of namespace a host opens
)

func ExampleParse() {
	for _, uri := range []string{
		"s3://lake-bucket/repos/repo1/",
		"gs://lake-bucket/repo1",
		"https://lakeacct.blob.core.windows.net/lake/repo1",
		"local://repo1",
		"mem://repo1",
	} {
		n, err := namespace.Parse(uri)
		if err != nil {
			fmt.Println(err)
			continue
		}
		u, err := n.BucketURL(namespace.WithLocalRoot("/var/lib/lakefs/data"))
		fmt.Printf("%s %q %q %q -> %s %v\n", n.Kind, n.Account, n.Bucket, n.Path, u, err)
	}
	// Output:
	// s3 "" "lake-bucket" "repos/repo1" -> s3://lake-bucket?prefix=repos%2Frepo1%2F <nil>
	// gs "" "lake-bucket" "repo1" -> gs://lake-bucket?prefix=repo1%2F <nil>
	// azure "lakeacct" "lake" "repo1" -> azblob://lake?prefix=repo1%2F&storage_account=lakeacct <nil>
	// local "" "" "repo1" -> file:///var/lib/lakefs/data/repo1?metadata=skip <nil>
	// namespace: invalid input: namespace "mem://repo1": unsupported scheme "mem"
}

// OpenBucket opens a namespace as a bucket rooted at it: here a local one,
// laid out as lakeFS's local blockstore lays it out.
func ExampleOpenBucket() {
	root, err := os.MkdirTemp("", "lakefs-data")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	obj := filepath.Join(root, "repo1", "data", "gqj0", "obj1")
	if err := os.MkdirAll(filepath.Dir(obj), 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(obj, []byte("hello"), 0o644); err != nil {
		panic(err)
	}

	ctx := context.Background()
	bucket, err := namespace.OpenBucket(ctx, "local://repo1", namespace.WithLocalRoot(root))
	if err != nil {
		panic(err)
	}
	defer bucket.Close()
	data, err := bucket.ReadAll(ctx, "data/gqj0/obj1")
	fmt.Println(string(data), err)
	// Output: hello <nil>
}

// An Azure namespace on Azurite: the account and the container come from
// the namespace, the requests go to the emulator. (Needs the azureblob
// driver imported, a running Azurite, and AZURE_STORAGE_ACCOUNT and
// AZURE_STORAGE_KEY set to its account.)
func ExampleWithAzureEndpoint() {
	ctx := context.Background()
	bucket, err := namespace.OpenBucket(ctx, "https://devstoreaccount1.blob.core.windows.net/lake/repo1",
		namespace.WithAzureEndpoint("http://127.0.0.1:10000"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bucket.Close()
}

// A local namespace is swept with its LocalDeleter: the file of each key,
// never a "<key>.attrs" object beside it, which fileblob's own Delete would
// remove too.
func ExampleNamespace_LocalDeleter() {
	root, err := os.MkdirTemp("", "lakefs-data")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	dir := filepath.Join(root, "repo1", "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	for _, name := range []string{"x", "x.attrs"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			panic(err)
		}
	}
	ns, err := namespace.Parse("local://repo1")
	if err != nil {
		panic(err)
	}
	deleter, err := ns.LocalDeleter(namespace.WithLocalRoot(root))
	if err != nil {
		panic(err)
	}
	failed, err := deleter.DeleteBatch(context.Background(), []string{"data/x"})
	fmt.Println(len(failed), err)
	_, err = os.Stat(filepath.Join(dir, "x.attrs"))
	fmt.Println("x.attrs kept:", err == nil)
	// Output:
	// 0 <nil>
	// x.attrs kept: true
}

// Where a host finds the files of a garbage-collection run in a namespace's
// bucket.
func ExampleCommitsKey() {
	fmt.Println(namespace.RulesKey(namespace.DefaultStoragePrefix))
	fmt.Println(namespace.CommitsKey(namespace.DefaultStoragePrefix, "run1"))
	fmt.Println(namespace.UncommittedFolder(namespace.DefaultStoragePrefix, "run1"))
	fmt.Println(namespace.ReportFolder(namespace.DefaultStoragePrefix, "run1"))
	fmt.Println(namespace.ValidRunID("run1"), namespace.ValidRunID("../run1"))
	// Output:
	// _lakefs/retention/gc/rules/config.json
	// _lakefs/retention/gc/commits/run_id=run1/commits.csv
	// _lakefs/retention/gc/uncommitted/run1/uncommitted/
	// _lakefs/retention/gc/unified/run1/
	// true false
}
