package lakegc_test

import (
	"context"
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// The mistakes a host driving the primitives itself can make, and Collect
// cannot: each ends in a clear error of the mark, which marks nothing.
func TestPrimitivesMistakesMarkNothing(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	repo := uncommitted.Repository{ID: "repo1", StorageNamespace: w.ns}
	preparer := must(uncommitted.NewPreparer(w.bucket, uncommitted.WithMaxFileSize(100)))

	// A complete run, for the mistyped reads.
	var complete string
	for mark := (*uncommitted.Checkpoint)(nil); ; {
		res, err := preparer.Prepare(ctx, repo, w.host, mark)
		if err != nil {
			t.Fatal(err)
		}
		complete = res.RunID
		if mark = res.Checkpoint; mark == nil {
			break
		}
	}
	// A loop stopped after its first call.
	first, err := preparer.Prepare(ctx, repo, w.host, nil)
	if err != nil || first.Checkpoint == nil {
		t.Fatalf("first call: %+v, %v; want a mark", first, err)
	}
	// A run whose second call is cancelled, over a Source that stops
	// quietly: the call fails, and a host that reads the run anyway finds
	// it unfinished.
	started, err := preparer.Prepare(ctx, repo, w.host, nil)
	if err != nil || started.Checkpoint == nil {
		t.Fatalf("first call: %+v, %v; want a mark", started, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	quiet := &quietSource{Source: w.host, cancelAfter: 2, cancel: cancel}
	res, err := must(uncommitted.NewPreparer(w.bucket)).Prepare(cctx, repo, quiet, started.Checkpoint)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Prepare over a quiet Source, cancelled: %+v, %v; want context.Canceled", res, err)
	}

	for i, tc := range []struct {
		name  string
		input iter.Seq2[string, error]
		want  error
	}{
		{"mistyped run ID", uncommitted.Addresses(ctx, w.bucket, "_lakefs", "g0ootg1ksdudqv37g7d0"), uncommitted.ErrNoRun},
		{"the GC's run ID", uncommitted.Addresses(ctx, w.bucket, "_lakefs", "fsdams1ksdu91hadege0"), uncommitted.ErrNoRun},
		{"wrong storage prefix", uncommitted.Addresses(ctx, w.bucket, "lakefs", complete), uncommitted.ErrNoRun},
		{"loop stopped early", uncommitted.Addresses(ctx, w.bucket, "_lakefs", first.RunID), uncommitted.ErrIncomplete},
		{"cancelled export", uncommitted.Addresses(ctx, w.bucket, "_lakefs", started.RunID), uncommitted.ErrIncomplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runID := "mistake-" + string(rune('a'+i))
			_, err := sweep.Mark(ctx, w.bucket, runID, sweep.Inputs{
				Uncommitted: tc.input,
				Committed:   w.host.CommittedAddresses(ctx, nil),
				ExportStart: gcTime,
			}, sweep.WithClock(func() time.Time { return gcTime }))
			if !errors.Is(err, tc.want) {
				t.Errorf("Mark = %v, want an error wrapping %v", err, tc.want)
			}
			if got := w.candidates(runID); len(got) > 0 {
				t.Errorf("marked %q", got)
			}
			s, err := sweep.ReadSummary(ctx, w.bucket, "_lakefs", runID)
			if err != nil || s.Success {
				t.Errorf("summary %+v, %v; want a failed run", s, err)
			}
		})
	}
	// The complete run is read whole: the mistakes above are the reads'.
	n := 0
	for _, err := range uncommitted.Addresses(ctx, w.bucket, "_lakefs", complete) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != stagedRows {
		t.Errorf("the complete run holds %d addresses, want %d", n, stagedRows)
	}
}
