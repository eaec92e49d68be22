package blockstore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// FuzzParse feeds Parse any document and one environment variable: it must
// return a Config or an error wrapping a sentinel, never panic, and never
// quote a secret it read in its summary.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		s3YAML,
		"",
		"blockstore:\n  type: local\n  local:\n    path: /var/lakefs\n",
		"blockstore:\n  type: gs\n  gs:\n    credentials_json: '{\"type\":\"service_account\"}'\n",
		"blockstore:\n  type: azure\n  azure:\n    storage_account: a\n    storage_access_key: a2V5\n    china_cloud: true\n",
		"blockstores:\n  stores: []\n",
		"a: &a [*a]\n",
		"blockstore: &b {type: s3, s3: *b}\n",
		"common: &c\n  region: x\nblockstore:\n  type: s3\n  s3:\n    <<: *c\n",
		"blockstore:\n  type: s3\n  s3:\n    max_retries: 0x10\n    force_path_style: 0.0\n",
		"- [[[[[[[[]]]]]]]]\n",
		"blockstore:\n  Type: s3\n  TYPE: gs\n",
	} {
		f.Add([]byte(seed), "LAKEFS_BLOCKSTORE_S3_ENDPOINT", "http://e")
	}
	f.Add([]byte("blockstore:\n  type: s3\n"), "LAKEFS_BLOCKSTORE_S3_MAX_RETRIES", "99999999999999999999")
	f.Add([]byte("blockstore:\n  type: azure\n"), "LAKEFS_BLOCKSTORE_AZURE_TRY_TIMEOUT", "-5h")
	f.Fuzz(func(t *testing.T, data []byte, name, value string) {
		c, err := Parse(data, func(k string) string {
			if k == name {
				return value
			}
			return ""
		})
		if err != nil {
			if c != nil {
				t.Fatalf("a Config and an error: %v", err)
			}
			if !errors.Is(err, ErrInvalidInput) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		if _, ok := kinds[c.Type]; !ok {
			t.Fatalf("type %q accepted", c.Type)
		}
		summary := fmt.Sprintf("%v %+v %#v %s", c, *c, c.S3, c.String())
		for _, s := range []Secret{c.S3.AccessKeyID, c.S3.SecretAccessKey, c.S3.SessionToken, c.GS.CredentialsJSON, c.Azure.StorageAccessKey} {
			// A secret made of what the summary always prints may be
			// found in it by chance; a longer one must not.
			if len(s) >= 12 && !strings.Contains(redacted, s.Value()) && strings.Contains(summary, s.Value()) && !strings.Contains(describe(c), s.Value()) {
				t.Fatalf("secret %q in %q", s.Value(), summary)
			}
		}
	})
}

// describe is the summary's non-secret settings, which may by chance hold a
// secret's text.
func describe(c *Config) string {
	return strings.Join([]string{c.Type, c.S3.Region, c.S3.Endpoint, c.S3.Profile, c.S3.CredentialsFile, c.GS.CredentialsFile,
		c.Azure.StorageAccount, c.Azure.Domain, c.Azure.TestEndpointURL, c.Local.Path}, " ")
}
