package sweep

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestSummaryJSONEveryField: every field of a Summary is written, in
// summary.json's order and spelling, and read back as it was.
func TestSummaryJSONEveryField(t *testing.T) {
	in := Summary{
		RunID: "r", Success: true, FirstSlice: "s",
		StartTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CutoffTime: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		NumDeletedObjects: 1, NumYoungObjects: 2, NumKeptObjects: 3,
		RunKind: RunOptimized, PreviousRunID: "p", CleanReason: "c", SlicesListed: 4, SlicesSkipped: 5,
		ShardIndex: 1, ShardCount: 2,
		NumUnrecognizedObjects: 6, UnrecognizedBytes: 7, UnrecognizedSample: []string{"u"}, NumWalledObjects: 8, Walls: []string{"w/"},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"run_id":"r","success":true,"first_slice":"s","start_time":"2026-01-02T03:04:05Z","cutoff_time":"2025-01-02T03:04:05Z",` +
		`"num_deleted_objects":1,"num_young_objects":2,"num_kept_objects":3,"run_kind":"optimized","previous_run_id":"p","clean_reason":"c",` +
		`"slices_listed":4,"slices_skipped":5,"shard_index":1,"shard_count":2,"num_unrecognized_objects":6,"unrecognized_bytes":7,` +
		`"unrecognized_sample":["u"],"num_walled_objects":8,"walls":["w/"]}`
	if string(b) != want {
		t.Fatalf("summary.json:\n%s\nwant\n%s", b, want)
	}
	var out Summary
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("read back %+v, want %+v", out, in)
	}
	// A bad summary leaves the value as it was.
	keep := out
	if err := json.Unmarshal([]byte(`{"run_id":"x","num_kept_objects":-1}`), &out); err == nil || !reflect.DeepEqual(out, keep) {
		t.Fatalf("a negative count: %v, %+v", err, out)
	}
}

// TestSummaryInventoryFields: an inventory run's report time is written in
// UTC whole seconds and read back; a summary without it reads as no report;
// a negative count of its objects is refused.
func TestSummaryInventoryFields(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.FixedZone("+01", 3600))
	b, err := json.Marshal(Summary{RunID: "r", InventorySource: "s3://b/m.json", InventoryTime: at, InventoryObjects: 3})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["inventory_time"] != "2026-03-04T04:06:07Z" {
		t.Fatalf("inventory_time written as %v (%v): %s", m["inventory_time"], err, b)
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil || !s.InventoryTime.Equal(at.Truncate(time.Second)) || s.InventoryObjects != 3 {
		t.Fatalf("read back %+v, %v", s, err)
	}
	s = Summary{}
	if err := json.Unmarshal([]byte(`{"run_id":"r","success":true}`), &s); err != nil || !s.InventoryTime.IsZero() {
		t.Fatalf("without inventory fields: %+v, %v", s, err)
	}
	if err := json.Unmarshal([]byte(`{"run_id":"r","inventory_objects":-1}`), &s); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("negative inventory_objects: %v", err)
	}
}
