package nsaddr

// lakeFSResolution is lakeFS's own resolution of full addresses, relative to
// a namespace: the key since PR #9464 (block.DefaultResolveNamespace with a
// full identifier; for Azure azure.ResolveBlobURLInfoFromURL, the same
// account and container) and the key before it (the URI's decoded path),
// "" where lakeFS resolves the address outside the namespace. The table was
// printed by a throwaway program run against lakeFS's source (September
// 2025 and later, with the pre-#9464 line computed as that PR's diff shows)
// outside this repository; only its output is kept here.
var lakeFSResolution = []struct{ ns, address, since9464, before9464 string }{
	{"s3://bucket/repo1", "s3://bucket/repo1/data/year%3D2024/part-0", "data/year%3D2024/part-0", "data/year=2024/part-0"},
	{"s3://bucket/repo1", "s3://bucket/repo1/data/year=2024/part-0", "data/year=2024/part-0", "data/year=2024/part-0"},
	{"s3://bucket/repo1", "s3://bucket/repo1/data/a%20b", "data/a b", "data/a b"},
	{"s3://bucket/repo1", "s3://bucket/repo1/data/a%2Fb", "data/a%2Fb", "data/a/b"},
	{"s3://bucket/repo1", "s3://bucket/repo1/data/caf%C3%A9", "data/café", "data/café"},
	{"s3://bucket/repo1", "s3://bucket/repo1/data/100%25", "data/100%", "data/100%"},
	{"s3://bucket/repo1", "s3://bucket/repo1//data/x", "/data/x", "/data/x"},
	{"s3://bucket/repo1", "s3://bucket/repo1/data/x?versionId=3", "data/x", "data/x"},
	{"s3://bucket/repo1", "s3://BUCKET/repo1/data/x", "data/x", "data/x"},
	{"s3://bucket/repo%3D1", "s3://bucket/repo%3D1/data/x", "data/x", "data/x"},
	{"s3://bucket/repo%3D1", "s3://bucket/repo=1/data/x", "", "data/x"},
	{"s3://bucket", "s3://bucket/data/k%3Dv", "data/k%3Dv", "data/k=v"},
	{"gs://bucket/repo1", "gs://bucket/repo1/data/year%3D2024/part-0", "data/year%3D2024/part-0", "data/year=2024/part-0"},
	{"gs://bucket/repo1", "gs://bucket/repo1/data/a+b%2Bc", "data/a+b%2Bc", "data/a+b+c"},
	{"https://acct.blob.core.windows.net/container/repo1", "https://acct.blob.core.windows.net/container/repo1/data/year%3D2024/part-0", "data/year=2024/part-0", "data/year=2024/part-0"},
	{"https://acct.blob.core.windows.net/container/repo1", "https://acct.dfs.core.windows.net/container/repo1/data/x", "data/x", "data/x"},
	{"https://acct.blob.core.windows.net/container/repo1", "https://acct.blob.core.windows.net/container/repo1/data/x/", "data/x", "data/x"},
	{"https://acct.blob.core.windows.net/container/repo1", "https://acct.blob.core.windows.net//container/repo1/data/x", "data/x", "data/x"},
	{"https://acct.blob.core.windows.net/container/repo1", "https://acct.blob.core.windows.net/container/repo1/data/a%20b", "data/a b", "data/a b"},
	{"https://acct.blob.core.windows.net/container/repo1", "http://acct.blob.core.windows.net/container/repo1/data/x", "data/x", "data/x"},
	{"https://acct.blob.core.windows.net/container/repo1", "https://other.blob.core.windows.net/container/repo1/data/x", "", ""},
	{"https://acct.blob.core.windows.net/container/repo1", "https://acct.blob.core.windows.net/container2/repo1/data/x", "", ""},
	{"https://acct.blob.core.windows.net/container", "https://acct.dfs.core.windows.net/container/data/k%3Dv/", "data/k=v", "data/k=v"},
	// Userinfo is not part of the host lakeFS takes as the bucket or the
	// account: these read the namespace's objects.
	{"s3://bucket/repo1", "s3://user@bucket/repo1/tables/t.parquet", "tables/t.parquet", "tables/t.parquet"},
	{"s3://bucket/repo1", "s3://user:secret@bucket/repo1/data/x", "data/x", "data/x"},
	{"gs://bucket/repo1", "gs://user@bucket/repo1/tables/t.parquet", "tables/t.parquet", "tables/t.parquet"},
	{"https://acct.blob.core.windows.net/container/repo1", "https://user@acct.blob.core.windows.net/container/repo1/tables/t.parquet", "tables/t.parquet", "tables/t.parquet"},
}
