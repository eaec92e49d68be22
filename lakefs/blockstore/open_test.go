package blockstore

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/lakegc/lakegc/lakefs/internal/s3loop"
	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/sweep/s3delete"
)

// noAWSEnvironment points the AWS SDK's own chain at nothing, so that only
// the configuration's settings can sign.
func noAWSEnvironment(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// A namespace on an S3-compatible server opens as lakeFS's settings say:
// the custom endpoint, path-style (at a host name: the SDK addresses an IP
// address path-style whatever the setting), the static keys and session token; the
// bucket is rooted at the namespace, and the batch deleter of sweep/s3delete
// uses the same client.
func TestOpenS3FromLakeFSConfig(t *testing.T) {
	noAWSEnvironment(t)
	srv := s3loop.Start(t, "lakes")
	srv.Put(t, "lakes", "repo1/data/g1/a", "A")
	srv.Put(t, "lakes", "repo1/data/g1/b", "B")
	srv.Put(t, "lakes", "repo10/data/g1/other", "not ours")
	srv.Put(t, "lakes", "outside", "not ours")
	srv.Reset()
	cfg, err := Parse([]byte(`
blockstore:
  type: s3
  s3:
    endpoint: "`+strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+`"
    force_path_style: true
    discover_bucket_region: false
    credentials:
      access_key_id: AKIAFROMFILE
      secret_access_key: secret-from-file
`), envOf(map[string]string{"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_SESSION_TOKEN": "token-from-env"}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := cfg.OpenBucket(t.Context(), "s3://lakes/repo1")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.ReadAll(t.Context(), "data/g1/a")
	if err != nil || string(got) != "A" {
		t.Fatalf("read data/g1/a = %q, %v", got, err)
	}
	var keys []string
	for it := b.List(nil); ; {
		o, err := it.Next(t.Context())
		if err != nil {
			break
		}
		keys = append(keys, o.Key)
	}
	if want := []string{"data/g1/a", "data/g1/b"}; !slices.Equal(keys, want) {
		t.Errorf("listed %q, want %q", keys, want)
	}
	var client *s3.Client
	if !b.As(&client) || client == nil {
		t.Fatal("the bucket exposes no *s3.Client")
	}
	d, err := s3delete.FromBucket(b)
	if err != nil {
		t.Fatal(err)
	}
	failed, err := d.DeleteBatch(t.Context(), []string{"data/g1/b"})
	if err != nil || len(failed) > 0 {
		t.Fatalf("DeleteBatch: %v, %v", failed, err)
	}
	if ok, _ := b.Exists(t.Context(), "data/g1/b"); ok {
		t.Error("data/g1/b not deleted")
	}
	reqs := srv.Requests()
	var batch bool
	for _, r := range reqs {
		if r.KeyID != "AKIAFROMFILE" || !r.Token || !strings.HasPrefix(r.Path, "/lakes") {
			t.Errorf("request %+v: not path-style, or not signed with the configuration's key and token", r)
		}
		batch = batch || r.Method == http.MethodPost
	}
	if len(reqs) < 3 || !batch {
		t.Errorf("requests %+v: want a read, a listing and a DeleteObjects", reqs)
	}
}

// With discover_bucket_region (lakeFS's default) a failed discovery keeps the
// configured region, as lakeFS does, and the store is still reached.
func TestOpenS3DiscoverRegionFallsBack(t *testing.T) {
	noAWSEnvironment(t)
	srv := s3loop.Start(t, "lakes")
	srv.Put(t, "lakes", "k", "v")
	srv.Reset()
	cfg := &Config{Type: TypeS3, S3: S3{Region: "eu-central-1", Endpoint: srv.URL, ForcePathStyle: true, DiscoverBucketRegion: true,
		AccessKeyID: "AKIAX", SecretAccessKey: "s"}}
	b, err := cfg.OpenBucket(t.Context(), "s3://lakes")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, err := b.ReadAll(t.Context(), "k"); err != nil || string(got) != "v" {
		t.Fatalf("read = %q, %v", got, err)
	}
	var client *s3.Client
	if !b.As(&client) || client.Options().Region != "eu-central-1" {
		t.Errorf("region %q", client.Options().Region)
	}
	if reqs := srv.Requests(); len(reqs) < 2 || reqs[0].Method != http.MethodHead || reqs[1].KeyID != "AKIAX" {
		t.Errorf("requests %+v: want a HeadBucket first", reqs)
	}
}

// The namespace must be on the blockstore's kind; a local one opens under
// blockstore.local.path.
func TestOpenKinds(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "repo1", "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "repo1", "data", "x"), []byte("X"), 0o644); err != nil {
		t.Fatal(err)
	}
	local := &Config{Type: TypeLocal, Local: Local{Path: root}}
	b, err := local.OpenBucket(t.Context(), "local://repo1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.ReadAll(t.Context(), "data/x"); err != nil || string(got) != "X" {
		t.Errorf("local read = %q, %v", got, err)
	}
	_ = b.Close()
	for _, tc := range []struct {
		c  *Config
		ns string
	}{
		{local, "s3://b/repo1"},
		{&Config{Type: TypeS3}, "gs://b/p"},
		{&Config{Type: TypeGS}, "https://acct.blob.core.windows.net/cont/p"},
		{&Config{Type: TypeAzure, Azure: Azure{Domain: DefaultAzureDomain}}, "local://repo1"},
		{&Config{Type: "mem"}, "s3://b"},
	} {
		if _, err := tc.c.OpenBucket(t.Context(), tc.ns); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s on %s: %v", tc.ns, tc.c.Type, err)
		}
	}
	if _, err := local.OpenBucket(t.Context(), "local://../x"); !errors.Is(err, namespace.ErrInvalidInput) {
		t.Errorf("bad namespace: %v", err)
	}
}

// An Azure namespace is reached at its account on the configured domain, or
// at test_endpoint_url; the account key signs only for its own account.
func TestOpenAzureContainer(t *testing.T) {
	const key = "bGFrZWdjLXRlc3Qta2V5LW5vdC1hLXJlYWwtb25l" // base64, not a real key
	for _, tc := range []struct {
		name string
		az   Azure
		ns   string
		url  string // of the container
	}{
		{"public cloud", Azure{StorageAccount: "acct", StorageAccessKey: key, Domain: DefaultAzureDomain},
			"https://acct.blob.core.windows.net/cont/repo1", "https://acct.blob.core.windows.net/cont"},
		{"government cloud", Azure{StorageAccount: "acct", StorageAccessKey: key, Domain: "blob.core.usgovcloudapi.net"},
			"https://acct.blob.core.usgovcloudapi.net/cont", "https://acct.blob.core.usgovcloudapi.net/cont"},
		{"emulator", Azure{StorageAccount: "devstoreaccount1", StorageAccessKey: key, Domain: "azurite.test", TestEndpointURL: "http://127.0.0.1:10000/devstoreaccount1"},
			"https://devstoreaccount1.azurite.test/cont/p", "http://127.0.0.1:10000/devstoreaccount1/cont"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Config{Type: TypeAzure, Azure: tc.az}
			b, err := c.OpenBucket(t.Context(), tc.ns)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			var client *container.Client
			if !b.As(&client) || client.URL() != tc.url {
				t.Errorf("container URL %q, want %q", client.URL(), tc.url)
			}
		})
	}
	c := &Config{Type: TypeAzure, Azure: Azure{StorageAccount: "acct", StorageAccessKey: key, Domain: DefaultAzureDomain}}
	if _, err := c.OpenBucket(t.Context(), "https://acct.blob.core.chinacloudapi.cn/cont"); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "domain") {
		t.Errorf("other domain: %v", err)
	}
	bad := &Config{Type: TypeAzure, Azure: Azure{StorageAccount: "acct", StorageAccessKey: "not base64 secret-looking!", Domain: DefaultAzureDomain}}
	if _, err := bad.OpenBucket(t.Context(), "https://acct.blob.core.windows.net/cont"); !errors.Is(err, ErrInvalidInput) || strings.Contains(err.Error(), "secret-looking") {
		t.Errorf("bad key: %v", err)
	}
	emu := &Config{Type: TypeAzure, Azure: Azure{Domain: DefaultAzureDomain, TestEndpointURL: "ftp://x"}}
	if _, err := emu.OpenBucket(t.Context(), "https://acct.blob.core.windows.net/cont"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("bad test endpoint: %v", err)
	}
}

// GCS credentials are a service account's, as lakeFS requires: a key file
// or JSON of another type, a malformed key or a missing file is refused
// without quoting the key; a service account key opens (the client
// authenticates at its first request).
func TestOpenGCSCredentials(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	dir := t.TempDir()
	user := filepath.Join(dir, "user.json")
	if err := os.WriteFile(user, []byte(`{"type":"authorized_user","client_id":"c","client_secret":"secret-looking","refresh_token":"r"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sa := `{"type":"service_account","client_email":"gc@p.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n","token_uri":"http://127.0.0.1:9/token"}`
	saFile := filepath.Join(dir, "sa.json")
	if err := os.WriteFile(saFile, []byte(sa), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		gs   GS
		want string // "" opens
	}{
		"authorized_user file": {GS{CredentialsFile: user}, "not a service account key"},
		"authorized_user JSON": {GS{CredentialsJSON: `{"type":"authorized_user","client_secret":"secret-looking"}`}, "not a service account key"},
		"malformed JSON":       {GS{CredentialsJSON: `{"type":"service_account","private_key":"secret-looking`}, "not a JSON key"},
		"missing file":         {GS{CredentialsFile: filepath.Join(dir, "missing.json")}, "missing.json"},
		"service account file": {GS{CredentialsFile: saFile}, ""},
		"service account JSON": {GS{CredentialsJSON: Secret(sa)}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			c := &Config{Type: TypeGS, GS: tc.gs}
			b, err := c.OpenBucket(t.Context(), "gs://b/p")
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				_ = b.Close()
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret-looking") {
				t.Errorf("err %v, want one with %q", err, tc.want)
			}
		})
	}
}
