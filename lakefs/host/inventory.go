package host

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/inventory"
	"github.com/lakegc/lakegc/namespace"
	"github.com/lakegc/lakegc/sweep"
)

// openInventory opens the inventory report whose manifest is at the URI
// manifest, an S3 Inventory report's ("s3://<bucket>/<path>/manifest.json")
// an Azure Blob inventory report's
// ("https://<account>.<domain>/<container>/<path>/<rule>-manifest.json")
// or a GCS inventory report's ("gs://<bucket>/<path>/<config>_<snapshot>_manifest.json"),
// as the listing of the namespace ns: the report's bucket is opened as the
// namespace's is, with lakeFS's blockstore settings when the host has
// them. The caller closes the bucket once the mark is done.
func openInventory(ctx context.Context, manifest, ns string, o Options, tempDir string) (sweep.Inventory, *blob.Bucket, error) {
	m, err := namespace.Parse(manifest)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: inventory: %w", ErrInvalidInput, err)
	}
	var root string
	open := inventory.OpenS3
	switch {
	case m.Kind == namespace.S3 && path.Base(m.Path) == "manifest.json":
		root = "s3://" + m.Bucket
	case m.Kind == namespace.Azure && strings.HasSuffix(m.Path, "-manifest.json"):
		root, open = "https://"+m.Account+"."+m.Domain+"/"+m.Bucket, inventory.OpenAzure
	case m.Kind == namespace.GCS && strings.HasSuffix(m.Path, "_manifest.json"):
		root, open = "gs://"+m.Bucket, inventory.OpenGCS
	default:
		return nil, nil, fmt.Errorf("%w: inventory %q is no S3 Inventory manifest (s3://<bucket>/<path>/manifest.json), Azure Blob inventory manifest (https://<account>.<domain>/<container>/<path>/<rule>-manifest.json) nor GCS inventory manifest (gs://<bucket>/<path>/<config>_<snapshot>_manifest.json)", ErrInvalidInput, manifest)
	}
	_, b, err := openNamespace(ctx, root, "", o.Blockstore)
	if err != nil {
		return nil, nil, fmt.Errorf("host: inventory bucket: %w", err)
	}
	clock := o.Clock
	if clock == nil {
		clock = time.Now
	}
	inv, err := open(ctx, b, m.Path, ns, inventory.WithClock(clock), inventory.WithTempDir(tempDir))
	if err != nil {
		b.Close()
		return nil, nil, err
	}
	return inv, b, nil
}
