package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/namespace"
)

// gcsManifest is a Storage Insights inventory report's
// <config>_<snapshot>_manifest.json.
type gcsManifest struct {
	ReportConfig struct {
		CSVOptions *struct {
			RecordSeparator string `json:"recordSeparator"`
			Delimiter       string `json:"delimiter"`
			HeaderRequired  bool   `json:"headerRequired"`
		} `json:"csvOptions"`
		ParquetOptions              json.RawMessage `json:"parquetOptions"`
		ObjectMetadataReportOptions struct {
			MetadataFields []string `json:"metadataFields"`
			StorageFilters struct {
				Bucket string `json:"bucket"`
			} `json:"storageFilters"`
		} `json:"objectMetadataReportOptions"`
	} `json:"report_config"`
	RecordsProcessed *int64   `json:"records_processed"`
	SnapshotTime     string   `json:"snapshot_time"`
	ShardCount       *int64   `json:"shard_count"`
	ShardNames       []string `json:"report_shards_file_names"`
}

// OpenGCS opens the Storage Insights inventory report whose manifest is
// manifestKey ("<path>/<config>_<snapshot>_manifest.json") in bucket (the
// report's destination bucket, opened at its root), as the listing of the
// namespace ("gs://<bucket>/<path>"). Its shards are read from the
// manifest's folder. It refuses, with an error wrapping ErrInvalidInput
// (see the package's errors for the specific ones): a manifest that is not
// Google's (no snapshot time, no count of records, a shard count that is
// not the number of shard names, a shard named twice or with a '/'); a
// report of another bucket (ErrNotCovered); one dated more than
// WithMaxAge ago or in the future (ErrTooOld); Parquet (ErrUnsupported,
// not read yet); CSV options other than a ',' delimiter, a "\n" record
// separator and a header row; metadata fields without name, size, updated
// and bucket.
func OpenGCS(ctx context.Context, bucket *blob.Bucket, manifestKey, ns string, opts ...Option) (*Report, error) {
	cfg, n, err := openArgs(bucket, ns, namespace.GCS, opts)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(manifestKey, "_manifest.json") {
		return nil, fmt.Errorf("%w: %q is not a <config>_<snapshot>_manifest.json", ErrInvalidInput, manifestKey)
	}
	raw, err := readSmall(ctx, bucket, manifestKey, maxManifest)
	if err != nil {
		return nil, err
	}
	m, err := parseGCSManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, manifestKey)
	}
	r := &Report{
		bucket:    bucket,
		source:    manifestKey,
		srcBucket: n.Bucket,
		cfg:       cfg,
		wantRows:  *m.RecordsProcessed,
	}
	if n.Path != "" {
		r.prefix = n.Path + "/"
	}
	opt := &m.ReportConfig.ObjectMetadataReportOptions
	if src := opt.StorageFilters.Bucket; src != n.Bucket {
		return nil, fmt.Errorf("%w: %s is a report of bucket %q, the namespace is in %q", ErrNotCovered, r.source, src, n.Bucket)
	}
	r.time, _ = time.Parse(time.RFC3339Nano, m.SnapshotTime) // checked by parseGCSManifest
	r.time = r.time.UTC()
	if err := cfg.checkTime(r.source, r.time); err != nil {
		return nil, err
	}
	dir := path.Dir(manifestKey)
	for _, name := range m.ShardNames {
		// The manifest gives no shard's size: the size read is checked
		// against itself, the rows against records_processed.
		r.files = append(r.files, reportFile{key: path.Join(dir, name), size: -1})
	}
	c := m.ReportConfig.CSVOptions
	switch {
	case len(m.ReportConfig.ParquetOptions) > 0 && string(m.ReportConfig.ParquetOptions) != "null":
		return nil, fmt.Errorf("%w: %s is Parquet: GCS's Parquet reports are not read yet; configure CSV", ErrUnsupported, r.source)
	case c == nil:
		return nil, fmt.Errorf("%w: %s: no CSV options", ErrInvalidInput, r.source)
	case c.Delimiter != "" && c.Delimiter != ",", c.RecordSeparator != "" && c.RecordSeparator != "\n", !c.HeaderRequired:
		return nil, fmt.Errorf("%w: %s: CSV delimiter %q, record separator %q, header %t: only ',', \"\\n\" and a header are read", ErrInvalidInput, r.source, c.Delimiter, c.RecordSeparator, c.HeaderRequired)
	}
	r.csv = csvLayout{header: true, gcsHeader: true}
	r.read = readGCSFile
	return r, nil
}

// readGCSFile reads a CSV shard, skipping (so keeping) a name that holds
// a '%': Google does not document how a name is written in a report, and
// one percent-encoded would be read as another name. The rows skipped
// still count against records_processed.
func readGCSFile(ctx context.Context, r *Report, f reportFile, rows *int64, yield func(Object, error) bool) bool {
	return readCSVFile(ctx, r, f, rows, func(o Object, err error) bool {
		if err == nil && strings.Contains(o.Key, "%") {
			return true
		}
		return yield(o, err)
	})
}

// parseGCSManifest parses and checks a manifest.
func parseGCSManifest(raw []byte) (*gcsManifest, error) {
	var m gcsManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrInvalidInput, err)
	}
	switch {
	case m.RecordsProcessed == nil || *m.RecordsProcessed < 0:
		return nil, fmt.Errorf("%w: manifest without records_processed", ErrInvalidInput)
	case m.ShardCount == nil || *m.ShardCount != int64(len(m.ShardNames)):
		return nil, fmt.Errorf("%w: manifest shard_count is not the %d shard names", ErrInvalidInput, len(m.ShardNames))
	}
	if t, err := time.Parse(time.RFC3339Nano, m.SnapshotTime); err != nil || t.Year() < 1970 || t.Year() > 9999 {
		return nil, fmt.Errorf("%w: manifest snapshot_time %q", ErrInvalidInput, m.SnapshotTime)
	}
	fields := m.ReportConfig.ObjectMetadataReportOptions.MetadataFields
	for _, want := range []string{"bucket", "name", "size", "updated"} {
		found := false
		for _, f := range fields {
			found = found || f == want
		}
		if !found {
			return nil, fmt.Errorf("%w: metadata fields %q lack %s", ErrInvalidInput, fields, want)
		}
	}
	seen := make(map[string]bool, len(m.ShardNames))
	for _, s := range m.ShardNames {
		switch {
		case s == "" || strings.Contains(s, "/") || s == "." || s == "..":
			return nil, fmt.Errorf("%w: manifest shard name %q", ErrInvalidInput, s)
		case seen[s]:
			return nil, fmt.Errorf("%w: manifest names shard %q twice", ErrInvalidInput, s)
		}
		seen[s] = true
	}
	return &m, nil
}

// gcsCSVLayout reads the columns of a GCS CSV shard from its header row,
// parsed with row's buffers.
func gcsCSVLayout(header []byte, row *csvRow) (csvLayout, error) {
	l, err := headerLayout(header, row, map[string]func(*csvLayout) *int{
		"bucket":  func(l *csvLayout) *int { return &l.bucket },
		"name":    func(l *csvLayout) *int { return &l.key },
		"size":    func(l *csvLayout) *int { return &l.size },
		"updated": func(l *csvLayout) *int { return &l.modified },
	})
	if err == nil && (l.bucket < 0 || l.key < 0 || l.size < 0 || l.modified < 0) {
		err = fmt.Errorf("%w: header %q lacks bucket, name, size or updated", ErrInvalidInput, header)
	}
	return l, err
}
