package inventory

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/namespace"
)

// azureVersion is the manifest version Azure writes.
const azureVersion = "1.0"

// azureManifest is Azure Blob inventory's <rule>-manifest.json.
type azureManifest struct {
	DestinationContainer string `json:"destinationContainer"`
	Endpoint             string `json:"endpoint"`
	Files                []struct {
		Blob string `json:"blob"`
		Size *int64 `json:"size"`
	} `json:"files"`
	InventoryStartTime string `json:"inventoryStartTime"`
	RuleDefinition     struct {
		Filters struct {
			BlobTypes     []string        `json:"blobTypes"`
			PrefixMatch   []string        `json:"prefixMatch"`
			ExcludePrefix []string        `json:"excludePrefix"`
			CreationTime  json.RawMessage `json:"creationTime"`
		} `json:"filters"`
		Format       string   `json:"format"`
		ObjectType   string   `json:"objectType"`
		SchemaFields []string `json:"schemaFields"`
	} `json:"ruleDefinition"`
	RuleName string `json:"ruleName"`
	Status   string `json:"status"`
	Summary  struct {
		ObjectCount *int64 `json:"objectCount"`
	} `json:"summary"`
	Version string `json:"version"`
}

// azureParquetColumns are Azure Blob inventory's.
var azureParquetColumns = parquetColumns{
	key: "Name", size: "Content-Length", modified: "Last-Modified",
	latest: "IsCurrentVersion", marker: "Deleted", snapshot: "Snapshot",
}

// OpenAzure opens the Azure Blob inventory report of one rule, whose
// manifest is manifestKey ("<YYYY>/<MM>/<DD>/<HH-MM-SS>/<rule>/<rule>-manifest.json")
// in bucket (the rule's destination container, opened at its root), as
// the listing of the namespace ("https://<account>.<domain>/<container>/<path>").
// It reads the manifest and the <rule>-manifest.checksum beside it, and
// refuses, with an error wrapping ErrInvalidInput (see the package's errors
// for the specific ones): a checksum that does not match; a manifest that
// is not Azure's (its version, a file without a name or a size, no object
// count); a run whose status is not Succeeded; a report of another
// account, or whose filters leave out part of the namespace (a prefix
// match that does not hold it, an exclude prefix inside or above it, a
// creation time filter, block blobs left out) (ErrNotCovered); one dated
// more than WithMaxAge ago or in the future (ErrTooOld); a report of
// containers, or without Name, Content-Length and Last-Modified.
func OpenAzure(ctx context.Context, bucket *blob.Bucket, manifestKey, ns string, opts ...Option) (*Report, error) {
	cfg, n, err := openArgs(bucket, ns, namespace.Azure, opts)
	if err != nil {
		return nil, err
	}
	base, ok := strings.CutSuffix(manifestKey, "-manifest.json")
	if !ok || path.Base(base) == "" {
		return nil, fmt.Errorf("%w: %q is not a <rule>-manifest.json", ErrInvalidInput, manifestKey)
	}
	raw, err := readSmall(ctx, bucket, manifestKey, maxManifest)
	if err != nil {
		return nil, err
	}
	sumKey := base + "-manifest.checksum"
	sum, err := readSmall(ctx, bucket, sumKey, 1024)
	if err != nil {
		return nil, err
	}
	if !md5Matches(raw, bytes.TrimSpace(sum)) {
		got := md5.Sum(raw)
		return nil, fmt.Errorf("%w: %s has MD5 %x, %s says %q", ErrChecksum, manifestKey, got, sumKey, bytes.TrimSpace(sum))
	}
	m, err := parseAzureManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, manifestKey)
	}
	r := &Report{
		bucket:   bucket,
		source:   strings.TrimSuffix(m.Endpoint, "/") + "/" + m.DestinationContainer + "/" + manifestKey,
		prefix:   n.Bucket + "/",
		cfg:      cfg,
		wantRows: *m.Summary.ObjectCount,
	}
	if n.Path != "" {
		r.prefix += n.Path + "/"
	}
	if err := azureCovers(m, n, r.prefix); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrNotCovered, r.source, err)
	}
	r.time, _ = time.Parse(time.RFC3339Nano, m.InventoryStartTime) // checked by parseAzureManifest
	r.time = r.time.UTC()
	// The folder is named for the run's start too: the earlier of both.
	if ft, err := time.Parse("2006/01/02/15-04-05", path.Dir(path.Dir(manifestKey))); err == nil && ft.Before(r.time) {
		r.time = ft
	}
	if err := cfg.checkTime(r.source, r.time); err != nil {
		return nil, err
	}
	for _, f := range m.Files {
		r.files = append(r.files, reportFile{key: f.Blob, size: *f.Size})
	}
	switch m.RuleDefinition.Format {
	case "csv":
		r.csv = csvLayout{header: true}
		r.read = readCSVFile
	case "parquet":
		r.read = func(ctx context.Context, r *Report, f reportFile, rows *int64, yield func(Object, error) bool) bool {
			return readParquetFile(ctx, r, f, azureParquetColumns, rows, yield)
		}
	default:
		return nil, fmt.Errorf("%w: format %q", ErrInvalidInput, m.RuleDefinition.Format)
	}
	return r, nil
}

// md5Matches reports whether sum, in hexadecimal or base64, is the MD5 of
// b: Azure's documentation does not say which.
func md5Matches(b, sum []byte) bool {
	got := md5.Sum(b)
	return strings.EqualFold(string(sum), hex.EncodeToString(got[:])) || string(sum) == base64.StdEncoding.EncodeToString(got[:])
}

// parseAzureManifest parses and checks a <rule>-manifest.json.
func parseAzureManifest(raw []byte) (*azureManifest, error) {
	var m azureManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrInvalidInput, err)
	}
	def := &m.RuleDefinition
	switch {
	case m.Version != azureVersion:
		return nil, fmt.Errorf("%w: manifest version %q, not %q", ErrInvalidInput, m.Version, azureVersion)
	case m.Status != "Succeeded":
		return nil, fmt.Errorf("%w: the inventory run's status is %q, not Succeeded", ErrInvalidInput, m.Status)
	case def.ObjectType != "blob":
		return nil, fmt.Errorf("%w: a report of %q, not of blobs", ErrInvalidInput, def.ObjectType)
	case m.Summary.ObjectCount == nil || *m.Summary.ObjectCount < 0:
		return nil, fmt.Errorf("%w: manifest without an object count", ErrInvalidInput)
	case m.Endpoint == "" || m.DestinationContainer == "":
		return nil, fmt.Errorf("%w: manifest without an endpoint or a destination container", ErrInvalidInput)
	}
	if t, err := time.Parse(time.RFC3339Nano, m.InventoryStartTime); err != nil || t.Year() < 1970 || t.Year() > 9999 {
		return nil, fmt.Errorf("%w: manifest inventory start time %q", ErrInvalidInput, m.InventoryStartTime)
	}
	for _, want := range []string{"Name", "Content-Length", "Last-Modified"} {
		found := false
		for _, f := range def.SchemaFields {
			found = found || f == want
		}
		if !found {
			return nil, fmt.Errorf("%w: schema fields %q lack %s", ErrInvalidInput, def.SchemaFields, want)
		}
	}
	seen := make(map[string]bool, len(m.Files))
	for i, f := range m.Files {
		switch {
		case f.Blob == "":
			return nil, fmt.Errorf("%w: manifest file %d has no name", ErrInvalidInput, i)
		case f.Size == nil || *f.Size < 0:
			return nil, fmt.Errorf("%w: manifest file %q has no size", ErrInvalidInput, f.Blob)
		case seen[f.Blob]:
			return nil, fmt.Errorf("%w: manifest names file %q twice", ErrInvalidInput, f.Blob)
		}
		seen[f.Blob] = true
	}
	return &m, nil
}

// azureCovers says why the report does not list every blob of the
// namespace, whose names start with prefix ("<container>/<path>/"), or nil.
func azureCovers(m *azureManifest, n namespace.Namespace, prefix string) error {
	u, err := url.Parse(m.Endpoint)
	if err != nil || !strings.EqualFold(u.Host, n.Account+"."+n.Domain) {
		return fmt.Errorf("a report of %q, the namespace is in %s.%s", m.Endpoint, n.Account, n.Domain)
	}
	f := &m.RuleDefinition.Filters
	if c := bytes.TrimSpace(f.CreationTime); len(c) > 0 && string(c) != "null" {
		return fmt.Errorf("a creation time filter %s", c)
	}
	block := false
	for _, t := range f.BlobTypes {
		block = block || t == "blockBlob"
	}
	if !block {
		return fmt.Errorf("blob types %q leave out block blobs", f.BlobTypes)
	}
	matched := len(f.PrefixMatch) == 0
	for _, p := range f.PrefixMatch {
		matched = matched || p == "" || strings.HasPrefix(prefix, p)
	}
	if !matched {
		return fmt.Errorf("prefix matches %q do not hold %q", f.PrefixMatch, prefix)
	}
	for _, e := range f.ExcludePrefix {
		if e != "" && (strings.HasPrefix(prefix, e) || strings.HasPrefix(e, prefix)) {
			return fmt.Errorf("exclude prefix %q leaves out part of %q", e, prefix)
		}
	}
	return nil
}

// azureCSVLayout reads the columns of an Azure CSV file from its header
// row, parsed with row's buffers.
func azureCSVLayout(header []byte, row *csvRow) (csvLayout, error) {
	l, err := headerLayout(header, row, map[string]func(*csvLayout) *int{
		"Name":             func(l *csvLayout) *int { return &l.key },
		"Content-Length":   func(l *csvLayout) *int { return &l.size },
		"Last-Modified":    func(l *csvLayout) *int { return &l.modified },
		"IsCurrentVersion": func(l *csvLayout) *int { return &l.latest },
		"Deleted":          func(l *csvLayout) *int { return &l.marker },
		"Snapshot":         func(l *csvLayout) *int { return &l.snapshot },
	})
	if err == nil && (l.key < 0 || l.size < 0 || l.modified < 0) {
		err = fmt.Errorf("%w: header %q lacks Name, Content-Length or Last-Modified", ErrInvalidInput, header)
	}
	return l, err
}

// headerLayout reads the columns of a CSV file from its header row, parsed
// with row's buffers: each name of columns found sets its column; a name
// found twice is an error, other names are ignored.
func headerLayout(header []byte, row *csvRow, columns map[string]func(*csvLayout) *int) (csvLayout, error) {
	l := csvLayout{bucket: -1, key: -1, size: -1, modified: -1, latest: -1, marker: -1, snapshot: -1}
	var err error
	if row.fields, row.scratch, err = splitCSV(header, row.fields[:0], row.scratch[:0]); err != nil {
		return l, err
	}
	l.columns = len(row.fields)
	for i, name := range row.fields {
		field, ok := columns[string(name)]
		if !ok {
			continue
		}
		at := field(&l)
		if *at >= 0 {
			return l, fmt.Errorf("%w: header names %q twice", ErrInvalidInput, name)
		}
		*at = i
	}
	return l, nil
}
