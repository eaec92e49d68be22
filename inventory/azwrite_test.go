package inventory

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"
)

// This file writes Azure Blob inventory reports for the tests, as Azure
// lays them out: <YYYY>/<MM>/<DD>/<HH-MM-SS>/<rule>/<rule>-manifest.json and
// <rule>-manifest.checksum, and the rule's files beside them.

// azReport is a report to write; its rows' keys are blob names with their
// container ("<container>/<path>"). Noncurr rows are versions that are not
// current, DelMarker rows deleted blobs.
type azReport struct {
	Account string
	Time    time.Time
	Format  string // "csv" or "parquet"
	Files   int
	Rows    []s3Row
	Prefix  []string // prefixMatch
	Exclude []string // excludePrefix
	Count   int64    // objectCount; -1: the rows'
	Status  string   // "": Succeeded
}

type azParquetRow struct {
	Name             string `parquet:"Name"`
	ContentLength    int64  `parquet:"Content-Length"`
	LastModified     int64  `parquet:"Last-Modified,timestamp(millisecond)"`
	IsCurrentVersion bool   `parquet:"IsCurrentVersion"`
	Deleted          bool   `parquet:"Deleted"`
	Snapshot         string `parquet:"Snapshot"`
}

func writeAzure(t testing.TB, bucket *blob.Bucket, rep azReport) string {
	t.Helper()
	ctx := context.Background()
	dir := rep.Time.UTC().Format("2006/01/02/15-04-05") + "/rule1/"
	type mfile struct {
		Blob string `json:"blob"`
		Size int64  `json:"size"`
	}
	var mfiles []mfile
	files := max(rep.Files, 1)
	for i := range files {
		lo, hi := len(rep.Rows)*i/files, len(rep.Rows)*(i+1)/files
		var body bytes.Buffer
		name := fmt.Sprintf("%srule1_%d.%s", dir, i, rep.Format)
		switch rep.Format {
		case "csv":
			body.WriteString("Name,Creation-Time,Last-Modified,Content-Length,IsCurrentVersion,Deleted,Snapshot\n")
			for _, r := range rep.Rows[lo:hi] {
				mod := r.Mod.UTC().Format("2006-01-02T15:04:05.0000000Z")
				fmt.Fprintf(&body, "%s,%s,%s,%d,%t,%t,\n", csvQuote(r.Key), mod, mod, r.Size, !r.Noncurr, r.DelMarker)
			}
		case "parquet":
			rows := make([]azParquetRow, 0, hi-lo)
			for _, r := range rep.Rows[lo:hi] {
				rows = append(rows, azParquetRow{Name: r.Key, ContentLength: r.Size, LastModified: r.Mod.UnixMilli(), IsCurrentVersion: !r.Noncurr, Deleted: r.DelMarker})
			}
			if err := parquet.Write(&body, rows, parquet.Compression(&parquet.Snappy)); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("format %q", rep.Format)
		}
		if err := bucket.WriteAll(ctx, name, body.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
		mfiles = append(mfiles, mfile{Blob: name, Size: int64(body.Len())})
	}
	count := rep.Count
	if count < 0 {
		count = int64(len(rep.Rows))
	}
	status := rep.Status
	if status == "" {
		status = "Succeeded"
	}
	filters := map[string]any{"blobTypes": []string{"blockBlob"}, "includeBlobVersions": true, "includeSnapshots": false}
	if rep.Prefix != nil {
		filters["prefixMatch"] = rep.Prefix
	}
	if rep.Exclude != nil {
		filters["excludePrefix"] = rep.Exclude
	}
	m, err := json.MarshalIndent(map[string]any{
		"destinationContainer":    "inventory",
		"endpoint":                "https://" + rep.Account + ".blob.core.windows.net",
		"files":                   mfiles,
		"inventoryCompletionTime": rep.Time.Add(10 * time.Minute).UTC().Format(time.RFC3339),
		"inventoryStartTime":      rep.Time.UTC().Format(time.RFC3339),
		"ruleDefinition": map[string]any{
			"filters": filters, "format": rep.Format, "objectType": "blob", "schedule": "daily",
			"schemaFields": []string{"Name", "Creation-Time", "Last-Modified", "Content-Length", "IsCurrentVersion", "Deleted", "Snapshot"},
		},
		"ruleName": "rule1",
		"status":   status,
		"summary":  map[string]any{"objectCount": count, "totalObjectSize": 0},
		"version":  "1.0",
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	mkey := dir + "rule1-manifest.json"
	if err := bucket.WriteAll(ctx, mkey, m, nil); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(m)
	if err := bucket.WriteAll(ctx, dir+"rule1-manifest.checksum", []byte(base64.StdEncoding.EncodeToString(sum[:])), nil); err != nil {
		t.Fatal(err)
	}
	return mkey
}

// csvQuote quotes a field as RFC 4180 does when it must.
func csvQuote(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return "\"" + strings.ReplaceAll(s, "\"", "\"\"") + "\""
}
