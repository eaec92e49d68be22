package blockstore

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob" // local namespaces, through namespace.OpenBucket
	"gocloud.dev/blob/gcsblob"
	"gocloud.dev/blob/s3blob"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"

	"github.com/lakegc/lakegc/namespace"
)

// kinds maps each blockstore type to the kind of namespace it holds.
var kinds = map[string]namespace.Kind{
	TypeS3:    namespace.S3,
	TypeGS:    namespace.GCS,
	TypeAzure: namespace.Azure,
	TypeLocal: namespace.Local,
}

// OpenBucket opens a repository's storage namespace (as lakeFS's API names
// it) with the blockstore's settings, rooted at the namespace as
// namespace.OpenBucket roots it: its keys are the repository's relative
// addresses. The namespace's kind must be the blockstore's (an s3://
// namespace on an "s3" blockstore, gs:// on "gs", https:// on "azure",
// local:// on "local"); the bucket or container is the namespace's own.
//
//   - s3: an AWS SDK v2 client made as lakeFS makes its own (S3Client),
//     through gocloud's s3blob; bucket.As gives that *s3.Client, so that
//     package sweep/s3delete deletes with it.
//   - gs: a Google Cloud Storage client with the service account of
//     credentials_file or credentials_json (else Application Default
//     Credentials), through gcsblob.
//   - azure: a container client for the namespace's account and container at
//     https://<account>.<domain> (or test_endpoint_url), signed with
//     storage_access_key when the namespace's account is storage_account,
//     else with Azure's default credential chain, as lakeFS does; through
//     azureblob.
//   - local: the namespace's folder under Local.Path, through fileblob.
//
// OpenBucket does no I/O but for S3's region discovery (DiscoverBucketRegion).
// Errors name settings, never the secrets.
func (c *Config) OpenBucket(ctx context.Context, ns string) (*blob.Bucket, error) {
	n, err := namespace.Parse(ns)
	if err != nil {
		return nil, err
	}
	if want, ok := kinds[c.Type]; !ok || n.Kind != want {
		return nil, fmt.Errorf("%w: namespace %s is not on lakeFS's blockstore.type %q", ErrInvalidInput, n, c.Type)
	}
	var b *blob.Bucket
	switch n.Kind {
	case namespace.Local:
		return namespace.OpenBucket(ctx, ns, namespace.WithLocalRoot(c.Local.Path))
	case namespace.S3:
		client, err := c.S3Client(ctx, n.Bucket)
		if err != nil {
			return nil, err
		}
		if b, err = s3blob.OpenBucket(ctx, client, n.Bucket, nil); err != nil {
			return nil, fmt.Errorf("blockstore: open %s: %w", n, err)
		}
	case namespace.GCS:
		client, err := c.gcsClient(ctx)
		if err != nil {
			return nil, err
		}
		if b, err = gcsblob.OpenBucket(ctx, nil, n.Bucket, &gcsblob.Options{Client: client}); err != nil {
			_ = client.Close()
			return nil, fmt.Errorf("blockstore: open %s: %w", n, err)
		}
	case namespace.Azure:
		client, err := c.azureContainer(n)
		if err != nil {
			return nil, err
		}
		if b, err = azureblob.OpenBucket(ctx, client, nil); err != nil {
			return nil, fmt.Errorf("blockstore: open %s: %w", n, err)
		}
	}
	if n.Path != "" {
		b = blob.PrefixedBucket(b, n.Path+"/")
	}
	return b, nil
}

// S3Client returns an S3 client made from the settings as lakeFS makes its
// own: the AWS SDK's default configuration (its environment, shared files
// and credential chain) with the region, profile, credentials file, static
// keys, retries and TLS setting of the blockstore, then the endpoint and
// path style. With DiscoverBucketRegion, the bucket's region is asked of
// S3 (HeadBucket) and, as in lakeFS, the configured region is kept when
// that fails. The SDK's warning for a response without a checksum, which
// S3-compatible servers often send, is not logged.
func (c *Config) S3Client(ctx context.Context, bucket string) (*s3.Client, error) {
	s := c.S3
	var opts []func(*awsconfig.LoadOptions) error
	if s.Region != "" {
		opts = append(opts, awsconfig.WithRegion(s.Region))
	}
	if s.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(s.Profile))
	}
	if s.CredentialsFile != "" {
		opts = append(opts, awsconfig.WithSharedCredentialsFiles([]string{s.CredentialsFile}))
	}
	if s.AccessKeyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(
			s.AccessKeyID.Value(), s.SecretAccessKey.Value(), s.SessionToken.Value())))
	}
	if s.MaxRetries > 0 {
		opts = append(opts, awsconfig.WithRetryMaxAttempts(s.MaxRetries))
	}
	if s.SkipVerifyCertificate {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // lakeFS's skip_verify_certificate_test_only
		opts = append(opts, awsconfig.WithHTTPClient(&http.Client{Transport: tr}))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		// The SDK's errors name files and profiles, not keys.
		return nil, fmt.Errorf("blockstore: AWS configuration: %w", err)
	}
	client := func(region string) *s3.Client {
		return s3.NewFromConfig(cfg, func(o *s3.Options) {
			if s.Endpoint != "" {
				o.BaseEndpoint = aws.String(s.Endpoint)
			}
			if s.ForcePathStyle {
				o.UsePathStyle = true
			}
			o.Region = region
			// S3-compatible servers often send no checksums: the SDK
			// would log a warning on stderr for every read.
			o.DisableLogOutputChecksumValidationSkipped = true
		})
	}
	cl := client(cfg.Region)
	if s.DiscoverBucketRegion && bucket != "" {
		if region, err := manager.GetBucketRegion(ctx, cl, bucket); err == nil && region != "" && region != cfg.Region {
			cl = client(region)
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return cl, nil
}

// gcsClient is a Google Cloud Storage client with the blockstore's service
// account, as lakeFS makes its own: the key must be a service account's
// (lakeFS asks the Google client for that type; here the key's "type" is
// checked before the client reads it).
func (c *Config) gcsClient(ctx context.Context) (*storage.Client, error) {
	var opts []option.ClientOption
	var key []byte
	setting := "blockstore.gs.credentials_json"
	switch {
	case c.GS.CredentialsFile != "":
		setting = "blockstore.gs.credentials_file"
		var err error
		if key, err = readKeyFile(c.GS.CredentialsFile); err != nil {
			return nil, err
		}
	case c.GS.CredentialsJSON != "":
		key = []byte(c.GS.CredentialsJSON.Value())
	}
	if key != nil {
		if err := serviceAccountKey(setting, key); err != nil {
			return nil, err
		}
		creds, err := google.CredentialsFromJSONWithType(ctx, key, google.ServiceAccount, storage.ScopeFullControl)
		if err != nil {
			// The parser's message could quote the key: say only that
			// it was refused.
			return nil, fmt.Errorf("%w: %s: the Google client refused the service account key", ErrInvalidInput, setting)
		}
		opts = append(opts, option.WithCredentials(creds))
	}
	client, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("blockstore: GCS client: %w", err)
	}
	return client, nil
}

// maxKeyFile bounds a service account key file; real ones are about 2 KiB.
const maxKeyFile = 64 << 10

func readKeyFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("blockstore: blockstore.gs.credentials_file: %w", err)
	}
	defer f.Close()
	key, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("blockstore: blockstore.gs.credentials_file: %w", err)
	}
	if len(key) > maxKeyFile {
		return nil, fmt.Errorf("%w: blockstore.gs.credentials_file %s is larger than %d bytes", ErrInvalidInput, name, maxKeyFile)
	}
	return key, nil
}

// serviceAccountKey checks that key is a JSON object whose "type" is
// "service_account", naming key's setting and never its content.
func serviceAccountKey(setting string, key []byte) error {
	var k struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(key, &k); err != nil {
		return fmt.Errorf("%w: %s is not a JSON key", ErrInvalidInput, setting)
	}
	if k.Type != "service_account" {
		return fmt.Errorf("%w: %s is not a service account key (lakeFS takes only those)", ErrInvalidInput, setting)
	}
	return nil
}

// azureContainer is the client of the namespace's container, as lakeFS
// makes its clients: the shared key for the configured account, the
// default credential chain for any other.
func (c *Config) azureContainer(n namespace.Namespace) (*container.Client, error) {
	a := c.Azure
	if n.Domain != a.Domain {
		return nil, fmt.Errorf("%w: namespace %s is on %s, lakeFS's blockstore.azure.domain is %q", ErrInvalidInput, n, n.Domain, a.Domain)
	}
	endpoint := "https://" + n.Account + "." + a.Domain
	if a.TestEndpointURL != "" {
		u, err := url.Parse(a.TestEndpointURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("%w: blockstore.azure.test_endpoint_url is not an http(s) URL without a query", ErrInvalidInput)
		}
		endpoint = a.TestEndpointURL
	}
	containerURL := strings.TrimRight(endpoint, "/") + "/" + url.PathEscape(n.Bucket)
	opts := &container.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{TryTimeout: a.TryTimeout}}}
	if a.StorageAccessKey != "" && n.Account == a.StorageAccount {
		cred, err := container.NewSharedKeyCredential(a.StorageAccount, a.StorageAccessKey.Value())
		if err != nil {
			// The SDK's message is about the key's encoding; it does
			// not quote it, but say no more than that.
			return nil, fmt.Errorf("%w: blockstore.azure.storage_access_key is not a base64 account key", ErrInvalidInput)
		}
		return container.NewClientWithSharedKeyCredential(containerURL, cred, opts)
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("blockstore: Azure default credentials for account %s: %w", n.Account, err)
	}
	client, err := container.NewClient(containerURL, cred, opts)
	if err != nil {
		return nil, fmt.Errorf("blockstore: Azure container %s: %w", n.Bucket, err)
	}
	return client, nil
}
