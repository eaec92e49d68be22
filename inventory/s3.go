package inventory

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc/namespace"
)

// s3Version is the only manifest version S3 writes.
const s3Version = "2016-11-30"

// maxManifest bounds a manifest.json: about 200 bytes a file, and S3
// writes files of millions of rows each.
const maxManifest = 16 << 20

// s3Manifest is S3 Inventory's manifest.json.
type s3Manifest struct {
	SourceBucket      string   `json:"sourceBucket"`
	DestinationBucket string   `json:"destinationBucket"`
	Version           string   `json:"version"`
	CreationTimestamp string   `json:"creationTimestamp"`
	FileFormat        string   `json:"fileFormat"`
	FileSchema        string   `json:"fileSchema"`
	Files             []s3File `json:"files"`
}

type s3File struct {
	Key         string `json:"key"`
	Size        *int64 `json:"size"`
	MD5checksum string `json:"MD5checksum"`
}

// OpenS3 opens the S3 Inventory report whose manifest.json is manifestKey
// in bucket (the report's destination bucket, opened at its root), as the
// listing of the namespace ("s3://<bucket>/<path>"). It reads the manifest
// and the manifest.checksum beside it, and refuses, with an error wrapping
// ErrInvalidInput (see the package's errors for the specific ones):
// a checksum that does not match; a manifest that is not S3's (its
// version, a file without a key, a size or an MD5, a file named twice); a
// report of another bucket (ErrNotCovered); one dated more than WithMaxAge
// ago or in the future (ErrTooOld); the ORC format (ErrUnsupported); a
// schema without the key, size and last modified date. The files are read
// by the Report's Objects.
func OpenS3(ctx context.Context, bucket *blob.Bucket, manifestKey, ns string, opts ...Option) (*Report, error) {
	cfg, n, err := openArgs(bucket, ns, namespace.S3, opts)
	if err != nil {
		return nil, err
	}
	if path.Base(manifestKey) != "manifest.json" {
		return nil, fmt.Errorf("%w: %q is not a manifest.json", ErrInvalidInput, manifestKey)
	}
	raw, err := readSmall(ctx, bucket, manifestKey, maxManifest)
	if err != nil {
		return nil, err
	}
	sumKey := strings.TrimSuffix(manifestKey, "manifest.json") + "manifest.checksum"
	sum, err := readSmall(ctx, bucket, sumKey, 1024)
	if err != nil {
		return nil, err
	}
	if got := md5.Sum(raw); !strings.EqualFold(string(bytes.TrimSpace(sum)), hex.EncodeToString(got[:])) {
		return nil, fmt.Errorf("%w: %s has MD5 %x, %s says %q", ErrChecksum, manifestKey, got, sumKey, bytes.TrimSpace(sum))
	}
	m, err := parseS3Manifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, manifestKey)
	}
	dest := strings.TrimPrefix(m.DestinationBucket, "arn:aws:s3:::")
	r := &Report{
		bucket:    bucket,
		source:    "s3://" + dest + "/" + manifestKey,
		srcBucket: m.SourceBucket,
		cfg:       cfg,
		wantRows:  -1,
	}
	if n.Path != "" {
		r.prefix = n.Path + "/"
	}
	if m.SourceBucket != n.Bucket {
		return nil, fmt.Errorf("%w: %s is a report of bucket %q, the namespace is in %q", ErrNotCovered, r.source, m.SourceBucket, n.Bucket)
	}
	r.time = s3Time(m, manifestKey)
	if err := cfg.checkTime(r.source, r.time); err != nil {
		return nil, err
	}
	for _, f := range m.Files {
		rf := reportFile{key: f.Key, size: *f.Size, hasMD5: true}
		hex.Decode(rf.md5[:], []byte(f.MD5checksum)) // checked by parseS3Manifest
		r.files = append(r.files, rf)
	}
	switch strings.ToUpper(m.FileFormat) {
	case "CSV":
		if r.csv, err = s3CSVLayout(m.FileSchema); err != nil {
			return nil, err
		}
		r.read = readCSVFile
	case "PARQUET":
		r.read = readS3Parquet
	case "ORC":
		return nil, fmt.Errorf("%w: %s is ORC: no maintained Go reader of ORC (see the package documentation); configure the report as CSV or Parquet", ErrUnsupported, r.source)
	default:
		return nil, fmt.Errorf("%w: file format %q", ErrInvalidInput, m.FileFormat)
	}
	return r, nil
}

// parseS3Manifest parses and checks a manifest.json.
func parseS3Manifest(raw []byte) (*s3Manifest, error) {
	var m s3Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrInvalidInput, err)
	}
	switch {
	case m.Version != s3Version:
		return nil, fmt.Errorf("%w: manifest version %q, not %q", ErrInvalidInput, m.Version, s3Version)
	case m.SourceBucket == "":
		return nil, fmt.Errorf("%w: manifest without a source bucket", ErrInvalidInput)
	case m.FileSchema == "":
		return nil, fmt.Errorf("%w: manifest without a file schema", ErrInvalidInput)
	}
	ms, err := strconv.ParseInt(m.CreationTimestamp, 10, 64)
	if err != nil || ms <= 0 || ms > 253402300799999 {
		return nil, fmt.Errorf("%w: manifest creation timestamp %q", ErrInvalidInput, m.CreationTimestamp)
	}
	seen := make(map[string]bool, len(m.Files))
	for i, f := range m.Files {
		var sum [md5.Size]byte
		switch {
		case f.Key == "":
			return nil, fmt.Errorf("%w: manifest file %d has no key", ErrInvalidInput, i)
		case f.Size == nil || *f.Size < 0:
			return nil, fmt.Errorf("%w: manifest file %q has no size", ErrInvalidInput, f.Key)
		case len(f.MD5checksum) != 2*md5.Size:
			return nil, fmt.Errorf("%w: manifest file %q: MD5 %q", ErrInvalidInput, f.Key, f.MD5checksum)
		case seen[f.Key]:
			return nil, fmt.Errorf("%w: manifest names file %q twice", ErrInvalidInput, f.Key)
		}
		if _, err := hex.Decode(sum[:], []byte(f.MD5checksum)); err != nil {
			return nil, fmt.Errorf("%w: manifest file %q: MD5 %q", ErrInvalidInput, f.Key, f.MD5checksum)
		}
		seen[f.Key] = true
	}
	return &m, nil
}

// s3Time is the report's time on the safe side: the earlier of the
// manifest's creationTimestamp and the time in the name of its folder
// (YYYY-MM-DDTHH-MMZ), which S3 documents as when it began to scan the
// bucket.
func s3Time(m *s3Manifest, manifestKey string) time.Time {
	ms, _ := strconv.ParseInt(m.CreationTimestamp, 10, 64)
	t := time.UnixMilli(ms).UTC()
	if ft, err := time.Parse("2006-01-02T15-04Z", path.Base(path.Dir(manifestKey))); err == nil && ft.Before(t) {
		t = ft
	}
	return t
}

// readSmall reads an object of at most limit bytes.
func readSmall(ctx context.Context, bucket *blob.Bucket, key string, limit int64) ([]byte, error) {
	rd, err := bucket.NewReader(ctx, key, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fmt.Errorf("%w: %s", ErrMissingFile, key)
		}
		return nil, fmt.Errorf("inventory: read %s: %w", key, err)
	}
	defer rd.Close()
	b, err := io.ReadAll(io.LimitReader(rd, limit+1))
	if err != nil {
		return nil, fmt.Errorf("inventory: read %s: %w", key, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrInvalidInput, key, limit)
	}
	return b, nil
}
