package inventory

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"
)

// This file writes S3 Inventory reports for the tests, as S3 lays them
// out: <dest prefix>/<source bucket>/<config>/<YYYY-MM-DDTHH-MMZ>/manifest.json
// and manifest.checksum, and the data files under <config>/data/.

// s3Row is a row of a test report: a key of the source bucket.
type s3Row struct {
	Key       string
	Size      int64
	Mod       time.Time
	Noncurr   bool // a noncurrent version (IsLatest false)
	DelMarker bool
}

// s3Report is a report to write.
type s3Report struct {
	Source  string    // the source bucket
	Time    time.Time // creationTimestamp and the folder's name
	Format  string    // "CSV" or "Parquet"
	Files   int       // files to split the rows into (at least 1)
	Rows    []s3Row
	Version bool // IsLatest and IsDeleteMarker columns
}

// encodeS3Key encodes a key as S3 Inventory's CSV does: an HTML form's URL
// encoding (Java's URLEncoder), a space as '+', letters, digits and "-_.*"
// as they are, every other byte as %XX.
func encodeS3Key(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '*':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// s3ParquetRow is a row of a Parquet report, with S3's column names.
type s3ParquetRow struct {
	Bucket         string  `parquet:"bucket"`
	Key            string  `parquet:"key"`
	VersionID      *string `parquet:"version_id,optional"`
	IsLatest       *bool   `parquet:"is_latest,optional"`
	IsDeleteMarker *bool   `parquet:"is_delete_marker,optional"`
	Size           *int64  `parquet:"size,optional"`
	LastModified   *int64  `parquet:"last_modified_date,optional,timestamp(millisecond)"`
	ETag           *string `parquet:"e_tag,optional"`
}

// writeS3 writes rep into bucket under prefix and returns its manifest's
// key.
func writeS3(t testing.TB, bucket *blob.Bucket, prefix string, rep s3Report) string {
	t.Helper()
	ctx := context.Background()
	dir := prefix + rep.Source + "/cfg/"
	files := max(rep.Files, 1)
	type mfile struct {
		Key  string `json:"key"`
		Size int64  `json:"size"`
		MD5  string `json:"MD5checksum"`
	}
	var mfiles []mfile
	for i := range files {
		var lo, hi = len(rep.Rows) * i / files, len(rep.Rows) * (i + 1) / files
		var body []byte
		var name string
		switch rep.Format {
		case "CSV":
			name = fmt.Sprintf("%sdata/file-%d.csv.gz", dir, i)
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			for _, r := range rep.Rows[lo:hi] {
				f := []string{rep.Source, encodeS3Key(r.Key)}
				if rep.Version {
					f = append(f, "v1", strconv.FormatBool(!r.Noncurr), strconv.FormatBool(r.DelMarker))
				}
				size, mod := strconv.FormatInt(r.Size, 10), r.Mod.UTC().Format("2006-01-02T15:04:05.000Z")
				if r.DelMarker {
					size, mod = "", ""
				}
				f = append(f, size, mod, "etag")
				fmt.Fprintf(zw, "\"%s\"\n", strings.Join(f, "\",\""))
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			body = buf.Bytes()
		case "Parquet":
			name = fmt.Sprintf("%sdata/file-%d.parquet", dir, i)
			rows := make([]s3ParquetRow, 0, hi-lo)
			for _, r := range rep.Rows[lo:hi] {
				latest, marker := !r.Noncurr, r.DelMarker
				pr := s3ParquetRow{Bucket: rep.Source, Key: r.Key}
				if !r.DelMarker {
					size, ms := r.Size, r.Mod.UnixMilli()
					pr.Size, pr.LastModified = &size, &ms
				}
				if rep.Version {
					pr.IsLatest, pr.IsDeleteMarker = &latest, &marker
				}
				rows = append(rows, pr)
			}
			var buf bytes.Buffer
			if err := parquet.Write(&buf, rows, parquet.Compression(&parquet.Snappy)); err != nil {
				t.Fatal(err)
			}
			body = buf.Bytes()
		default:
			t.Fatalf("format %q", rep.Format)
		}
		if err := bucket.WriteAll(ctx, name, body, nil); err != nil {
			t.Fatal(err)
		}
		sum := md5.Sum(body)
		mfiles = append(mfiles, mfile{Key: name, Size: int64(len(body)), MD5: hex.EncodeToString(sum[:])})
	}
	schema := "Bucket, Key, Size, LastModifiedDate, ETag"
	if rep.Version {
		schema = "Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size, LastModifiedDate, ETag"
	}
	if rep.Format == "Parquet" {
		schema = "message s3.inventory { required binary bucket (STRING); required binary key (STRING); optional int64 size; optional int64 last_modified_date (TIMESTAMP(MILLIS,true)); optional binary e_tag (STRING);}"
	}
	m, err := json.MarshalIndent(map[string]any{
		"sourceBucket":      rep.Source,
		"destinationBucket": "arn:aws:s3:::dest",
		"version":           "2016-11-30",
		"creationTimestamp": strconv.FormatInt(rep.Time.UnixMilli(), 10),
		"fileFormat":        rep.Format,
		"fileSchema":        schema,
		"files":             mfiles,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	mkey := dir + rep.Time.UTC().Format("2006-01-02T15-04Z") + "/manifest.json"
	if err := bucket.WriteAll(ctx, mkey, m, nil); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(m)
	if err := bucket.WriteAll(ctx, strings.TrimSuffix(mkey, "json")+"checksum", []byte(hex.EncodeToString(sum[:])+"\n"), nil); err != nil {
		t.Fatal(err)
	}
	return mkey
}
