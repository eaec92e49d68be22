package lakegc

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/lakegc/lakegc/uncommitted"
)

// FuzzDecodeExportState feeds the state reader what a bucket may hold: it
// never panics, and a state it accepts can continue a run.
func FuzzDecodeExportState(f *testing.F) {
	good, _ := json.Marshal(exportState{
		Start:     time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC),
		Namespace: "s3://bucket/repo1",
		Next:      uncommitted.EncodeToken(&uncommitted.Checkpoint{BranchID: "main", Path: "a/b", RunID: "g0ootg1ksdudqv37g7d0"}),
		Files:     2, Rows: 40,
	})
	f.Add(good)
	f.Add([]byte(`{"start":"2026-06-01T12:00:00Z","namespace":"s3://b/r","done":true,"files":3,"rows":13,"copy_records":1}`))
	f.Add([]byte(`{"start":"0001-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"start":"2026-06-01T12:00:00Z","done":true,"next":"x"}`))
	f.Add([]byte(`{"start":"2026-06-01T12:00:00Z","rows":-1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeExportState(b)
		if err != nil {
			if !errors.Is(err, ErrNoExport) {
				t.Fatalf("error %v does not wrap ErrNoExport", err)
			}
			return
		}
		if st.Start.IsZero() || st.Done && st.Next != "" || st.Files < 0 || st.Rows < 0 || st.CopyRecords < 0 {
			t.Fatalf("accepted an unusable state %+v", st)
		}
	})
}

func TestDecodeExportStateRefusesLargeStates(t *testing.T) {
	b := make([]byte, maxStateSize+1)
	if _, err := decodeExportState(b); !errors.Is(err, ErrNoExport) {
		t.Errorf("a state of %d bytes: %v", len(b), err)
	}
}
