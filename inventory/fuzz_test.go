package inventory

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// The manifest: any bytes give a checked manifest or an error wrapping
// ErrInvalidInput, never a panic.
func FuzzS3Manifest(f *testing.F) {
	f.Add([]byte(`{"sourceBucket":"src","destinationBucket":"arn:aws:s3:::dest","version":"2016-11-30","creationTimestamp":"1763636400000","fileFormat":"CSV","fileSchema":"Bucket, Key, Size, LastModifiedDate","files":[{"key":"a/b.csv.gz","size":12,"MD5checksum":"0123456789abcdef0123456789abcdef"}]}`))
	f.Add([]byte(`{"sourceBucket":"s","version":"2016-11-30","creationTimestamp":"1","fileFormat":"Parquet","fileSchema":"message s3.inventory {}","files":[]}`))
	f.Add([]byte(`{"files":[{"key":"","size":-1}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := parseS3Manifest(raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "inventory: invalid input") {
				t.Fatalf("error %v", err)
			}
			return
		}
		for _, file := range m.Files {
			if file.Key == "" || file.Size == nil || *file.Size < 0 {
				t.Fatalf("accepted file %+v", file)
			}
		}
		_ = s3Time(m, "a/2026-11-20T11-00Z/manifest.json")
		if l, err := s3CSVLayout(m.FileSchema); err == nil && (l.key < 0 || l.size < 0 || l.modified < 0 || l.bucket < 0) {
			t.Fatalf("layout %+v", l)
		}
	})
}

// A CSV row: decoded or refused, never a panic; a decoded key is what
// the encoding of that key decodes to.
func FuzzCSVRow(f *testing.F) {
	f.Add([]byte(`"src","ns/a+b%2Bc","3","2026-11-18T09:30:00.000Z"`), "Bucket, Key, Size, LastModifiedDate")
	f.Add([]byte(`"src","ns/k","v1","false","true","","",""`), "Bucket, Key, VersionId, IsLatest, IsDeleteMarker, Size, LastModifiedDate, ETag")
	f.Add([]byte(`src,ns/%zz,1,`), "Bucket, Key, Size, LastModifiedDate")
	f.Add([]byte(`"src","a""b",1,"x"`), "Bucket, Key, Size, LastModifiedDate")
	f.Fuzz(func(t *testing.T, line []byte, schema string) {
		l, err := s3CSVLayout(schema)
		if err != nil {
			return
		}
		var row csvRow
		o, ok, err := row.decode(line, &l, "src")
		if err != nil || !ok {
			return
		}
		if o.Key == "" || o.Size < 0 {
			t.Fatalf("object %+v", o)
		}
		if got, err := decodeKey([]byte(encodeS3Key(o.Key))); err != nil || got != o.Key {
			t.Fatalf("key %q round-trips to %q, %v", o.Key, got, err)
		}
		if !o.ModTime.IsZero() && o.ModTime.Location() != time.UTC {
			t.Fatalf("time %v not in UTC", o.ModTime)
		}
	})
}

// A Parquet file: any bytes are read or refused, within parquetguard's
// limits, never a panic.
func FuzzParquetFile(f *testing.F) {
	var buf bytes.Buffer
	size, ms := int64(3), int64(1763636400000)
	latest := true
	rows := []s3ParquetRow{{Bucket: "src", Key: "ns/a", Size: &size, LastModified: &ms, IsLatest: &latest}}
	if err := parquet.Write(&buf, rows); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	buf.Reset()
	if err := parquet.Write(&buf, rows, parquet.Compression(&parquet.Snappy)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, file []byte) {
		pr, err := openParquet(bytes.NewReader(file), int64(len(file)), s3ParquetColumns)
		if err != nil {
			return
		}
		defer pr.closeReaders()
		for range 1 << 12 {
			batch, err := pr.next()
			if err != nil || batch == nil {
				return
			}
			for _, r := range batch {
				if r.obj.Key == "" || r.current && r.obj.Size < 0 {
					t.Fatalf("row %+v", r)
				}
			}
		}
	})
}
