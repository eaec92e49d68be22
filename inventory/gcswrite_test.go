package inventory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"gocloud.dev/blob"
)

// This file writes Storage Insights inventory reports for the tests, as
// Google lays them out: <path>/<config>_<snapshot>_manifest.json and the
// shards <config>_<snapshot>_<n>.csv beside it, each with a header row.

// gcsReport is a report to write; its rows' keys are object names in
// bucket Source. Noncurr and DelMarker rows are not written: a GCS report
// lists live objects.
type gcsReport struct {
	Source  string
	Time    time.Time // snapshot_time
	Files   int
	Rows    []s3Row
	Count   int64 // records_processed; -1: the rows'
	Shards  int64 // shard_count; -1: the files'
	CSV     map[string]any
	Parquet bool
}

func writeGCS(t testing.TB, bucket *blob.Bucket, rep gcsReport) string {
	t.Helper()
	ctx := context.Background()
	base := "reports/cfg1_" + rep.Time.UTC().Format("2006-01-02T15:04:05Z")
	var names []string
	var rows []s3Row
	for _, r := range rep.Rows {
		if !r.Noncurr && !r.DelMarker {
			rows = append(rows, r)
		}
	}
	files := max(rep.Files, 1)
	for i := range files {
		lo, hi := len(rows)*i/files, len(rows)*(i+1)/files
		var body bytes.Buffer
		body.WriteString("project,bucket,name,size,timeCreated,updated,storageClass\n")
		for _, r := range rows[lo:hi] {
			mod := r.Mod.UTC().Format(time.RFC3339Nano)
			fmt.Fprintf(&body, "12345,%s,%s,%d,%s,%s,STANDARD\n", rep.Source, csvQuote(r.Key), r.Size, mod, mod)
		}
		name := fmt.Sprintf("cfg1_%s_%d.csv", rep.Time.UTC().Format("2006-01-02T15:04:05Z"), i)
		if err := bucket.WriteAll(ctx, "reports/"+name, body.Bytes(), nil); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	count := rep.Count
	if count < 0 {
		count = int64(len(rows))
	}
	shards := rep.Shards
	if shards < 0 {
		shards = int64(len(names))
	}
	csvOpts := rep.CSV
	if csvOpts == nil {
		csvOpts = map[string]any{"recordSeparator": "\n", "delimiter": ",", "headerRequired": true}
	}
	config := map[string]any{
		"name":       "projects/p/locations/us/reportConfigs/cfg1",
		"csvOptions": csvOpts,
		"objectMetadataReportOptions": map[string]any{
			"metadataFields":            []string{"project", "bucket", "name", "size", "timeCreated", "updated", "storageClass"},
			"storageFilters":            map[string]any{"bucket": rep.Source},
			"storageDestinationOptions": map[string]any{"bucket": "reports-bucket", "destinationPath": "reports"},
		},
	}
	if rep.Parquet {
		delete(config, "csvOptions")
		config["parquetOptions"] = map[string]any{}
	}
	m, err := json.MarshalIndent(map[string]any{
		"report_config":            config,
		"records_processed":        count,
		"snapshot_time":            rep.Time.UTC().Format(time.RFC3339),
		"shard_count":              shards,
		"report_shards_file_names": names,
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	mkey := base + "_manifest.json"
	if err := bucket.WriteAll(ctx, mkey, m, nil); err != nil {
		t.Fatal(err)
	}
	return mkey
}
