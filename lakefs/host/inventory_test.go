package host

import (
	"context"
	"errors"
	"testing"
)

// An --inventory that is no S3 Inventory, Azure Blob inventory nor GCS
// inventory manifest is refused before any bucket is opened.
func TestOpenInventoryRefusesOtherURIs(t *testing.T) {
	for _, uri := range []string{
		"", "s3://bucket", "s3://bucket/cfg/2026-11-20T00-00Z/other.json", "gs://bucket/x/manifest.json", "gs://bucket/x/cfg_manifest.jsonx",
		"local:///tmp/x/manifest.json", "https://acct.blob.core.windows.net/c/rule-manifest.checksum",
		"https://acct.blob.core.windows.net/c/manifest.json", "ftp://x/manifest.json",
	} {
		inv, b, err := openInventory(context.Background(), uri, "s3://bucket/repo", Options{}, t.TempDir())
		if !errors.Is(err, ErrInvalidInput) || inv != nil || b != nil {
			t.Errorf("%q: %v", uri, err)
		}
	}
}
