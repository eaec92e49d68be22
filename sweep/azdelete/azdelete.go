package azdelete

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azblobblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/lakegc/lakegc/internal/storecode"
	"github.com/lakegc/lakegc/sweep"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// MaxBlobs is the number of blobs of one Blob Batch request, Azure's limit.
const MaxBlobs = 256

// ErrNotAzure is returned by FromBucket for a bucket that is not azureblob's.
var ErrNotAzure = errors.New("azdelete: not an Azure bucket")

// Deleter is a sweep.BatchDeleter over Azure's Blob Batch API. It is safe
// for concurrent use.
type Deleter struct {
	bucket *blob.Bucket
	client *container.Client
}

// FromBucket returns a deleter for a bucket opened with azureblob (possibly
// wrapped by blob.PrefixedBucket).
func FromBucket(b *blob.Bucket) (sweep.BatchDeleter, error) {
	if b == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrNotAzure)
	}
	var client *container.Client
	if !b.As(&client) || client == nil {
		return nil, ErrNotAzure
	}
	if _, err := client.NewBatchBuilder(); err != nil {
		return nil, fmt.Errorf("azdelete: %w", err)
	}
	d := &Deleter{bucket: b, client: client}
	if _, err := d.blobName(context.Background(), "probe"); err != nil {
		return nil, err
	}
	return d, nil
}

// errResolved stops the listing whose options blobName captured.
var errResolved = errors.New("azdelete: resolved")

// blobName returns the name azureblob gives key's blob: the bucket's prefix
// and azureblob's escaping applied. It captures them from the options of the
// listing azureblob would make for the prefix key, stopped before anything is
// sent. A listing prefix keeps a trailing "/", which a key's name escapes.
func (d *Deleter) blobName(ctx context.Context, key string) (string, error) {
	trimmed := strings.TrimSuffix(key, "/")
	var opts *container.ListBlobsHierarchyOptions
	_, _, err := d.bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{
		Prefix: trimmed,
		BeforeList: func(as func(any) bool) error {
			as(&opts)
			return errResolved
		},
	})
	if opts == nil || opts.Prefix == nil {
		if err == nil || errors.Is(err, errResolved) {
			err = ErrNotAzure
		}
		return "", fmt.Errorf("azdelete: key %q: %w", key, err)
	}
	name := *opts.Prefix
	if trimmed != key {
		name += "__0x2f__"
	}
	return name, nil
}

// deleteOptions deletes a blob with its snapshots: Azure refuses to delete a
// blob that has snapshots otherwise (409 SnapshotsPresent).
var deleteOptions = &container.BatchDeleteOptions{
	DeleteOptions: azblobblob.DeleteOptions{DeleteSnapshots: func() *azblobblob.DeleteSnapshotsOptionType {
		v := azblobblob.DeleteSnapshotsOptionTypeInclude
		return &v
	}()},
}

// DeleteBatch deletes keys with Blob Batch requests of at most MaxBlobs
// blobs, snapshots included. Blobs Azure does not delete are returned in
// failed with Azure's error (an *azcore.ResponseError, which Classifier
// classifies by its status and code); a request Azure refuses as a whole
// fails each of its keys with that error. A blob that did not exist fails
// with 404 BlobNotFound, which sweep counts as already gone. err is only
// ctx's.
func (d *Deleter) DeleteBatch(ctx context.Context, keys []string) (map[string]error, error) {
	var failed map[string]error
	fail := func(k string, err error) {
		if failed == nil {
			failed = make(map[string]error)
		}
		failed[k] = err
	}
	for len(keys) > 0 {
		n := min(len(keys), MaxBlobs)
		batch := keys[:n]
		keys = keys[n:]
		bb, err := d.client.NewBatchBuilder()
		if err != nil {
			return failed, fmt.Errorf("azdelete: %w", err)
		}
		var sent []string // the keys of bb's sub-requests, in order
		for _, k := range batch {
			name, err := d.blobName(ctx, k)
			if err == nil {
				err = bb.Delete(name, deleteOptions)
			}
			if err != nil {
				fail(k, err)
				continue
			}
			sent = append(sent, k)
		}
		if len(sent) == 0 {
			continue
		}
		resp, err := d.submit(ctx, bb)
		if cerr := ctx.Err(); cerr != nil {
			return failed, cerr
		}
		if err != nil {
			for _, k := range sent {
				fail(k, fmt.Errorf("azdelete: blob batch: %w", err))
			}
			continue
		}
		answered := make([]bool, len(sent))
		for i, item := range resp.Responses {
			if item.ContentID != nil {
				i = *item.ContentID
			}
			if i < 0 || i >= len(sent) {
				continue
			}
			answered[i] = true
			if item.Error != nil {
				fail(sent[i], fmt.Errorf("azdelete: %w", item.Error))
			}
		}
		for i, ok := range answered {
			if !ok {
				fail(sent[i], errNoAnswer)
			}
		}
	}
	return failed, nil
}

// submit sends a batch. The SDK indexes its sub-requests by the Content-ID
// of each part of Azure's answer, so a malformed answer could make it panic:
// that fails the batch instead of the sweep.
func (d *Deleter) submit(ctx context.Context, bb *container.BatchBuilder) (resp container.SubmitBatchResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errBadAnswer, r)
		}
	}()
	return d.client.SubmitBatch(ctx, bb, nil)
}

var errBadAnswer = errors.New("azdelete: blob batch: malformed answer")

// errNoAnswer fails a key of a batch whose answer has no part for it: the
// blob may or may not be deleted, so sweep retries it.
var errNoAnswer = errors.New("azdelete: blob batch: no answer for the blob")

// Classifier is a sweep.ErrorClassifier of Azure's errors: an
// *azcore.ResponseError in the chain is classified by its status and its
// x-ms-error-code (see sweep.BatchDeleter), as azureblob's own codes mislead
// (a lease, snapshots or an immutability policy, 409 or 412, are Unknown to
// it and would be retried). A host that sweeps an Azure bucket with the
// bucket's own Delete gives it to sweep.WithErrorClassifier; a Deleter
// classifies its errors with it. The zero value is ready to use.
type Classifier struct{}

// ClassifyError returns the code of the Azure answer in err's chain; ok is
// false when there is none.
func (Classifier) ClassifyError(err error) (code gcerrors.ErrorCode, ok bool) {
	var az *azcore.ResponseError
	if errors.As(err, &az) {
		return storecode.Azure(az.StatusCode, az.ErrorCode), true
	}
	return gcerrors.Unknown, false
}

// ClassifyError classifies the errors of the bucket and of DeleteBatch, as
// Classifier.
func (d *Deleter) ClassifyError(err error) (gcerrors.ErrorCode, bool) {
	return Classifier{}.ClassifyError(err)
}
