package blockstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

const s3YAML = `
listen_address: "0.0.0.0:8000"
database:
  type: postgres
Blockstore:
  type: s3
  signing:
    secret_key: "signing-secret"
  s3:
    Endpoint: "http://minio:9000"
    force_path_style: true
    region: eu-west-3
    max_retries: "7"
    discover_bucket_region: "false"
    profile: ops
    credentials_file: /etc/aws/credentials
    pre_signed_expiry: 15m
    credentials:
      access_key_id: AKIAFILEKEY
      secret_access_key: file-secret-value
      session_token: file-session-token
`

func TestParseS3(t *testing.T) {
	c, err := Parse([]byte(s3YAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := S3{Region: "eu-west-3", Endpoint: "http://minio:9000", ForcePathStyle: true, MaxRetries: 7, Profile: "ops",
		CredentialsFile: "/etc/aws/credentials", AccessKeyID: "AKIAFILEKEY", SecretAccessKey: "file-secret-value", SessionToken: "file-session-token"}
	if c.Type != TypeS3 || c.S3 != want {
		t.Errorf("got %#v\nwant %#v", c.S3, want) // both redacted: compare by hand on failure
	}
}

// lakeFS's defaults fill what the file leaves out.
func TestParseDefaults(t *testing.T) {
	c, err := Parse([]byte("blockstore:\n  type: s3\n"), nil)
	if err != nil || c.S3 != (S3{Region: DefaultS3Region, MaxRetries: DefaultS3Retries, DiscoverBucketRegion: true}) {
		t.Errorf("s3 defaults: %+v, %v", c.S3, err)
	}
	c, err = Parse([]byte("blockstore:\n  type: azure\n"), nil)
	if err != nil || c.Azure.Domain != DefaultAzureDomain {
		t.Errorf("azure defaults: %+v, %v", c.Azure, err)
	}
	c, err = Parse([]byte("blockstore:\n  type: local\n"), envOf(map[string]string{"HOME": "/home/lake"}))
	if err != nil || c.Local.Path != "/home/lake/lakefs/data/block" {
		t.Errorf("local defaults: %+v, %v", c.Local, err)
	}
	c, err = Parse([]byte("blockstore:\n  type: gs\n  gs:\n    credentials_file: ~/sa.json\n"), envOf(map[string]string{"HOME": "/home/lake"}))
	if err != nil || c.GS.CredentialsFile != "/home/lake/sa.json" {
		t.Errorf("gs ~: %+v, %v", c.GS, err)
	}
}

// The environment wins over the file, key by key, and alone is enough.
func TestParseEnvOverridesFile(t *testing.T) {
	env := map[string]string{
		"LAKEFS_BLOCKSTORE_S3_ENDPOINT":                          "http://env-endpoint:9000",
		"LAKEFS_BLOCKSTORE_S3_FORCE_PATH_STYLE":                  "false",
		"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_SECRET_ACCESS_KEY":     "env-secret",
		"LAKEFS_BLOCKSTORE_S3_MAX_RETRIES":                       "",
		"LAKEFS_BLOCKSTORE_S3_CREDENTIALS_SESSION_TOKEN":         "",
		"LAKEFS_BLOCKSTORE_S3_DISCOVER_BUCKET_REGION":            "1",
		"LAKEFS_BLOCKSTORE_S3_SKIP_VERIFY_CERTIFICATE_TEST_ONLY": "true",
	}
	c, err := Parse([]byte(s3YAML), envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	s := c.S3
	if s.Endpoint != "http://env-endpoint:9000" || s.ForcePathStyle || s.SecretAccessKey.Value() != "env-secret" ||
		s.AccessKeyID.Value() != "AKIAFILEKEY" || s.MaxRetries != 7 || s.SessionToken.Value() != "file-session-token" ||
		!s.DiscoverBucketRegion || !s.SkipVerifyCertificate || s.Region != "eu-west-3" {
		t.Errorf("env over file: endpoint %q path style %t secret %q key %q retries %d token %q discover %t skip %t region %q",
			s.Endpoint, s.ForcePathStyle, s.SecretAccessKey.Value(), s.AccessKeyID.Value(), s.MaxRetries, s.SessionToken.Value(),
			s.DiscoverBucketRegion, s.SkipVerifyCertificate, s.Region)
	}
	c, err = Parse(nil, envOf(map[string]string{"LAKEFS_BLOCKSTORE_TYPE": "azure", "LAKEFS_BLOCKSTORE_AZURE_STORAGE_ACCOUNT": "acct",
		"LAKEFS_BLOCKSTORE_AZURE_STORAGE_ACCESS_KEY": "a2V5", "LAKEFS_BLOCKSTORE_AZURE_DOMAIN": "blob.core.usgovcloudapi.net",
		"LAKEFS_BLOCKSTORE_AZURE_TRY_TIMEOUT": "90s"}))
	if err != nil || c.Type != TypeAzure || c.Azure != (Azure{StorageAccount: "acct", StorageAccessKey: "a2V5", Domain: "blob.core.usgovcloudapi.net", TryTimeout: 90 * time.Second}) {
		t.Errorf("env alone: %+v, %v", c, err)
	}
	c, err = Parse([]byte("blockstore:\n  type: local\n  local:\n    path: /file/path\n"), envOf(map[string]string{"LAKEFS_BLOCKSTORE_LOCAL_PATH": "/env/path"}))
	if err != nil || c.Local.Path != "/env/path" {
		t.Errorf("local path from env: %+v, %v", c, err)
	}
	c, err = Parse([]byte("blockstore:\n  type: local\n"), envOf(map[string]string{"LAKEFS_BLOCKSTORE_TYPE": "gs", "LAKEFS_BLOCKSTORE_GS_CREDENTIALS_JSON": `{"type":"service_account"}`}))
	if err != nil || c.Type != TypeGS || c.GS.CredentialsJSON.Value() != `{"type":"service_account"}` {
		t.Errorf("type from env: %+v, %v", c, err)
	}
}

// Wrong types, unsupported forms and bad documents are errors wrapping the
// sentinels, naming the key and never the value.
func TestParseErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		yaml   string
		env    map[string]string
		target error
		want   string // in the message
	}{
		"not yaml":            {"blockstore: [", nil, ErrInvalidInput, "not YAML"},
		"document a list":     {"- a\n- b\n", nil, ErrInvalidInput, "not a mapping"},
		"blockstore a string": {"blockstore: s3\n", nil, ErrInvalidInput, "blockstore is a string"},
		"s3 a list":           {"blockstore:\n  type: s3\n  s3: [1]\n", nil, ErrInvalidInput, "blockstore.s3 is a list"},
		"endpoint a mapping":  {"blockstore:\n  type: s3\n  s3:\n    endpoint: {a: secret-looking}\n", nil, ErrInvalidInput, "blockstore.s3.endpoint: a mapping"},
		"secret a list":       {"blockstore:\n  type: s3\n  s3:\n    credentials:\n      secret_access_key: [secret-looking]\n", nil, ErrInvalidInput, "secret_access_key: a list"},
		"bad bool":            {"blockstore:\n  type: s3\n  s3:\n    force_path_style: secret-looking\n", nil, ErrInvalidInput, "force_path_style"},
		"bad bool env":        {"blockstore:\n  type: s3\n", map[string]string{"LAKEFS_BLOCKSTORE_S3_FORCE_PATH_STYLE": "secret-looking"}, ErrInvalidInput, "force_path_style"},
		"bad int":             {"blockstore:\n  type: s3\n  s3:\n    max_retries: 1.5\n", nil, ErrInvalidInput, "max_retries"},
		"bad duration":        {"blockstore:\n  type: azure\n  azure:\n    try_timeout: secret-looking\n", nil, ErrInvalidInput, "try_timeout"},
		"timestamp":           {"blockstore:\n  type: s3\n  s3:\n    region: 2001-12-14\n", nil, ErrInvalidInput, "a timestamp"},
		"no type":             {"blockstore:\n  s3:\n    region: x\n", nil, ErrInvalidInput, "blockstore.type is not set"},
		"empty":               {"", nil, ErrInvalidInput, "LAKEFS_BLOCKSTORE_TYPE"},
		"unknown type":        {"blockstore:\n  type: ftp\n", nil, ErrInvalidInput, `"ftp"`},
		"mem":                 {"blockstore:\n  type: mem\n", nil, ErrUnsupported, "memory"},
		"transient":           {"blockstore:\n  type: transient\n", nil, ErrUnsupported, "memory"},
		"blockstores":         {"blockstores:\n  stores:\n    - id: a\n      type: s3\n", nil, ErrUnsupported, "blockstores"},
		"duplicate by case":   {"blockstore:\n  type: s3\n  S3: {}\n  s3: {}\n", nil, ErrInvalidInput, "twice"},
		"user home":           {"blockstore:\n  type: local\n  local:\n    path: ~other/x\n", nil, ErrInvalidInput, "blockstore.local.path"},
		"empty local path":    {"blockstore:\n  type: local\n  local:\n    path: \"\"\n", nil, ErrInvalidInput, "empty"},
		"too large":           {"blockstore:\n  type: s3\n#" + strings.Repeat("x", MaxFileSize), nil, ErrInvalidInput, "larger than"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := Parse([]byte(tc.yaml), envOf(tc.env))
			if !errors.Is(err, tc.target) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "blockstore: ") {
				t.Fatalf("Parse = %v, %v; want an error wrapping %v with %q", c, err, tc.target, tc.want)
			}
			if strings.Contains(err.Error(), "secret-looking") {
				t.Errorf("the error shows the value: %v", err)
			}
		})
	}
}

// Keys lakegc does not read are ignored; null values are unset; any scalar
// converts to a string as lakeFS converts it.
func TestParseLenient(t *testing.T) {
	c, err := Parse([]byte(`
unknown_top: {a: [1, 2]}
blockstore:
  type: s3
  default_namespace_prefix: s3://x
  s3:
    region: ~
    endpoint: 9000
    web_identity: {session_duration: 1h}
    credentials:
      access_key_id: 12345
      secret_access_key: true
    force_path_style: 1
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.S3; s.Region != DefaultS3Region || s.Endpoint != "9000" || s.AccessKeyID.Value() != "12345" || s.SecretAccessKey.Value() != "1" || !s.ForcePathStyle {
		t.Errorf("region %q endpoint %q key %q secret %q path style %t", s.Region, s.Endpoint, s.AccessKeyID.Value(), s.SecretAccessKey.Value(), s.ForcePathStyle)
	}
	// A YAML anchor and a merge key resolve as in lakeFS (its YAML decoder
	// is the same family).
	c, err = Parse([]byte("common: &c\n  region: ap-south-1\nblockstore:\n  type: s3\n  s3:\n    <<: *c\n    endpoint: http://e\n"), nil)
	if err != nil || c.S3.Region != "ap-south-1" || c.S3.Endpoint != "http://e" {
		t.Errorf("merge key: %+v, %v", c, err)
	}
}

// No way of printing a Config or a Secret shows a secret.
func TestSecretsNeverPrinted(t *testing.T) {
	secrets := []string{"AKIAFILEKEY", "file-secret-value", "file-session-token", "gcs-json-secret", "azure-key-secret"}
	configs := []*Config{}
	c, err := Parse([]byte(s3YAML), nil)
	if err != nil {
		t.Fatal(err)
	}
	configs = append(configs, c,
		&Config{Type: TypeGS, GS: GS{CredentialsJSON: "gcs-json-secret"}},
		&Config{Type: TypeAzure, Azure: Azure{StorageAccount: "acct", StorageAccessKey: "azure-key-secret"}})
	for _, c := range configs {
		var out strings.Builder
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			fmt.Fprintf(&out, verb+"\n", c)
			fmt.Fprintf(&out, verb+"\n", *c)
			fmt.Fprintf(&out, verb+"\n", c.S3)
			fmt.Fprintf(&out, verb+"\n", c.S3.SecretAccessKey)
			fmt.Fprintf(&out, verb+"\n", c.GS)
			fmt.Fprintf(&out, verb+"\n", c.Azure)
		}
		out.WriteString(c.String())
		j, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(j)
		slog.New(slog.NewJSONHandler(&out, nil)).Info("cfg", "config", c, "s3", c.S3, "value", *c)
		slog.New(slog.NewTextHandler(&out, nil)).Info("cfg", "config", c, "s3", c.S3, "azure", c.Azure, "gs", c.GS)
		for _, s := range secrets {
			if strings.Contains(out.String(), s) {
				t.Errorf("%s printed:\n%s", s, out.String())
			}
		}
		if !strings.Contains(out.String(), redacted) {
			t.Errorf("no %s in:\n%s", redacted, out.String())
		}
	}
	if Secret("").String() != "" || Secret("x").Value() != "x" {
		t.Error("Secret's String or Value")
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(p, []byte(s3YAML), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p, nil)
	if err != nil || c.S3.Endpoint != "http://minio:9000" {
		t.Fatalf("Load = %v, %v", c, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml"), nil); err == nil || errors.Is(err, ErrInvalidInput) {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("blockstore:\n  type: s3\n#"+strings.Repeat("x", MaxFileSize)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big, nil); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), big) {
		t.Errorf("large file: %v", err)
	}
	c, err = Load("", envOf(map[string]string{"LAKEFS_BLOCKSTORE_TYPE": "s3"}))
	if err != nil || c.Type != TypeS3 {
		t.Errorf("environment alone: %v, %v", c, err)
	}
}
