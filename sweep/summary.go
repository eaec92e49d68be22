package sweep

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc/internal/blobio"
	"github.com/lakegc/lakegc/internal/layout"
)

// Errors of the package; every error wraps at most one of them.
var (
	// ErrRunFailed: Sweep was asked to delete the candidates of a failed mark.
	ErrRunFailed = errors.New("sweep: mark run failed")
	// ErrNoRun: the run has no summary.
	ErrNoRun = errors.New("sweep: no such run")
	// ErrRunExists: Mark was given the ID of a run that already succeeded.
	ErrRunExists = errors.New("sweep: run already exists")
	// ErrUnsafeMinAge: the min age is below the link TTL.
	ErrUnsafeMinAge = errors.New("sweep: min age below link TTL")
	// ErrInvalidInput: a bad argument, option, run ID, keep key or report.
	ErrInvalidInput = errors.New("sweep: invalid input")
	// ErrBadListing: the store's listing broke its contract, so Mark cannot
	// tell what it scanned: a key outside the listed prefix, a key below a
	// delimiter (a backend that ignores delimiters), a folder without a
	// trailing delimiter, or a folder listed twice.
	ErrBadListing = errors.New("sweep: bad listing")
	// ErrImplausibleMark: the mark failed its canary (see Canary): the
	// keep set and the listing do not look like one repository's, so it
	// wrote no candidates. The message has the figures.
	ErrImplausibleMark = errors.New("sweep: implausible mark")
)

// opError is an error of op that wraps an error which may already say
// "sweep: ": its text names the package once, as "sweep: op: detail".
// errors.Is and errors.As see the wrapped error.
type opError struct {
	op  string
	err error
}

// wrapOp returns err as an error of op, or nil for a nil err.
func wrapOp(op string, err error) error {
	if err == nil {
		return nil
	}
	return &opError{op: op, err: err}
}

func (e *opError) Error() string {
	return "sweep: " + e.op + ": " + strings.TrimPrefix(e.err.Error(), "sweep: ")
}

func (e *opError) Unwrap() error { return e.err }

// Summary is lakeFS's summary.json of a mark run, written last: a run without
// one is incomplete, and Sweep only deletes the candidates of a successful one.
type Summary struct {
	RunID   string `json:"run_id"`
	Success bool   `json:"success"`
	// FirstSlice is the newest slice that was listed; an incremental run must
	// list it again, as it can hold objects newer than this run's cutoff.
	FirstSlice string `json:"first_slice"`
	// StartTime is when Mark began; CutoffTime is the age limit it applied.
	StartTime  time.Time `json:"start_time"`
	CutoffTime time.Time `json:"cutoff_time"`
	// NumDeletedObjects is the number of candidates marked for deletion.
	NumDeletedObjects int64 `json:"num_deleted_objects"`
	// NumYoungObjects counts the listed objects kept for their age: the
	// listing's modification time is at or after CutoffTime (or unknown).
	// NumKeptObjects counts the older listed objects kept because an input
	// references them or a CandidateCheck spared them. Both are Mark's own; lakeFS writes neither, and its
	// readers take summary.json's fields by name, so they ignore them.
	NumYoungObjects int64 `json:"num_young_objects,omitempty"`
	NumKeptObjects  int64 `json:"num_kept_objects,omitempty"`
	// RunKind is RunClean or RunOptimized (see WithPrevious);
	// PreviousRunID the run it was asked to start from, and CleanReason
	// why a run asked to start from one ran clean. SlicesListed and
	// SlicesSkipped count the slices older than the cutoff that were listed,
	// and those judged from the previous run's records, or taken from an
	// inventory report (WithInventory), instead. Mark's own,
	// like the counts above: empty fields are left out, and lakeFS ignores
	// them.
	RunKind       string `json:"run_kind,omitempty"`
	PreviousRunID string `json:"previous_run_id,omitempty"`
	CleanReason   string `json:"clean_reason,omitempty"`
	SlicesListed  int64  `json:"slices_listed,omitempty"`
	SlicesSkipped int64  `json:"slices_skipped,omitempty"`
	// KeepSource says how the committed keep set was read: "" for
	// Inputs.Committed in full, KeepChanges, KeepParts or KeepPartsChanged; PartsRead counts the
	// parts read (those that appeared or left since the previous run, or
	// all). Mark's own; lakeFS ignores them.
	KeepSource string `json:"keep_source,omitempty"`
	PartsRead  int64  `json:"parts_read,omitempty"`
	// IndexBlocksCopied and IndexBlocksDecoded count the blocks of the
	// previous run's committed index that an optimized run copied whole
	// (nothing it reads changes them) and decoded. Mark's own; lakeFS
	// ignores them.
	IndexBlocksCopied  int64 `json:"index_blocks_copied,omitempty"`
	IndexBlocksDecoded int64 `json:"index_blocks_decoded,omitempty"`
	// ShardIndex and ShardCount say which shard of a sharded mark the run
	// was (WithShard): shard_count is left out of a run that was not
	// sharded, and shard_index of shard 0. Mark's own; lakeFS ignores
	// them.
	ShardIndex int `json:"shard_index,omitempty"`
	ShardCount int `json:"shard_count,omitempty"`
	// NumUnrecognizedObjects counts the listed objects whose key the
	// recognizer did not accept (see WithRecognizer, WithInclude): never
	// candidates, kept whatever their age, and listed in the run's
	// unrecognized/ folder; UnrecognizedBytes is their size, and
	// UnrecognizedSample a few of their keys (the smallest, at most 20).
	// NumWalledObjects counts the recognized objects older than the cutoff
	// that were kept because they lie in another repository's folder, a
	// folder holding "_lakefs/" (or the storage prefix) below the
	// namespace's root; Walls lists those folders (the first 20). Mark's
	// own; lakeFS ignores them.
	NumUnrecognizedObjects int64    `json:"num_unrecognized_objects,omitempty"`
	UnrecognizedBytes      int64    `json:"unrecognized_bytes,omitempty"`
	UnrecognizedSample     []string `json:"unrecognized_sample,omitempty"`
	NumWalledObjects       int64    `json:"num_walled_objects,omitempty"`
	Walls                  []string `json:"walls,omitempty"`
	// InventorySource names the inventory report the run took its older
	// slices from (WithInventory), InventoryTime is the report's time
	// (whole seconds, rounded down), and InventoryObjects counts the
	// objects read from it, those of other places included. Mark's own;
	// lakeFS ignores them.
	InventorySource  string    `json:"inventory,omitempty"`
	InventoryTime    time.Time `json:"inventory_time,omitzero"`
	InventoryObjects int64     `json:"inventory_objects,omitempty"`
	// CandidatesBytes is the size in bytes of the candidates' file Mark
	// wrote under deleted/ (never 0: a file without rows has its
	// header and footer), so that a host reports it without listing the
	// folder; 0 in a failed run's summary, and in one that lakeFS's
	// client, or a Mark before this field, wrote. Mark's own; lakeFS
	// ignores it.
	CandidatesBytes int64 `json:"candidates_bytes,omitempty"`
}

// summaryJSON is a Summary as summary.json spells it: its fields by their
// tags, but the times as strings (UTC, whole seconds; any RFC 3339 time
// read). The fields it names itself shadow the Summary's of the same name
// and keep their place, first, in the output.
type summaryJSON struct {
	RunID      string `json:"run_id"`
	Success    bool   `json:"success"`
	FirstSlice string `json:"first_slice"`
	StartTime  string `json:"start_time"`
	CutoffTime string `json:"cutoff_time"`
	// InventoryTime shadows the Summary's as the times above do.
	InventoryTime string `json:"inventory_time,omitempty"`
	*summaryFields
}

// summaryFields is Summary without its methods.
type summaryFields Summary

// MarshalJSON writes the summary with lakeFS's field names and times in
// UTC whole seconds.
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(summaryJSON{s.RunID, s.Success, s.FirstSlice, layout.FormatTime(s.StartTime), layout.FormatTime(s.CutoffTime), layout.FormatTime(s.InventoryTime), (*summaryFields)(&s)})
}

// UnmarshalJSON reads a summary written by Mark or by lakeFS's Spark client;
// times may be RFC 3339 with any offset and fraction, or empty.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var v Summary
	j := summaryJSON{summaryFields: (*summaryFields)(&v)}
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("%w: summary: %v", ErrInvalidInput, err)
	}
	var err error
	if v.StartTime, err = parseTime(j.StartTime); err != nil {
		return err
	}
	if v.CutoffTime, err = parseTime(j.CutoffTime); err != nil {
		return err
	}
	if v.InventoryTime, err = parseTime(j.InventoryTime); err != nil {
		return err
	}
	if v.NumDeletedObjects < 0 || v.NumYoungObjects < 0 || v.NumKeptObjects < 0 || v.SlicesListed < 0 || v.SlicesSkipped < 0 || v.PartsRead < 0 || v.IndexBlocksCopied < 0 || v.IndexBlocksDecoded < 0 ||
		v.NumUnrecognizedObjects < 0 || v.UnrecognizedBytes < 0 || v.NumWalledObjects < 0 || v.InventoryObjects < 0 || v.CandidatesBytes < 0 {
		return fmt.Errorf("%w: summary: negative count or size", ErrInvalidInput)
	}
	if v.ShardCount < 0 || v.ShardIndex < 0 || v.ShardIndex > 0 && v.ShardIndex >= v.ShardCount {
		return fmt.Errorf("%w: summary: shard %d of %d", ErrInvalidInput, v.ShardIndex, v.ShardCount)
	}
	v.RunID, v.Success, v.FirstSlice = j.RunID, j.Success, j.FirstSlice
	*s = v
	return nil
}

// parseTime reads a time of summary.json (layout.ParseTime).
func parseTime(s string) (time.Time, error) {
	t, err := layout.ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: summary time %q: %v", ErrInvalidInput, s, err)
	}
	return t, nil
}

// Result counts what Sweep did with a run's candidates. It is also
// written as sweep.json beside the run's summary, with the start and end times.
type Result struct {
	Deleted     int64 // deleted (or, on S3's DeleteObjects, absent already)
	AlreadyGone int64 // the store said the object did not exist
	Failed      int64 // not deleted after the retries; listed in failed/
	Refused     int64 // outside what Mark scans, or unrecognized: never deleted, listed in failed/
	// Quarantine is, with WithMover, the folder the candidates were moved
	// into (Deleted counts them); "" when they were deleted.
	Quarantine string
}

type sweepJSON struct {
	Deleted     int64  `json:"deleted"`
	AlreadyGone int64  `json:"already_gone"`
	Failed      int64  `json:"failed"`
	Refused     int64  `json:"refused"`
	StartTime   string `json:"start_time"`
	EndTime     string `json:"end_time"`
	Quarantine  string `json:"quarantine,omitempty"`
}

// Progress is a snapshot of the counters of Mark or Sweep, given to the
// function of WithProgress. Phase is one of "start" (Mark's checks, a
// failed run's leftovers removed and, for an optimized run, the previous
// run's records read), "keep" (reading the inputs, while the listing runs
// beside it), "list" (the listing, once the inputs are read), "join"
// (sorting and subtracting), "write", "delete" and "done".
//
// Of the Listed objects, Unrecognized ones are never judged (their key has
// no shape the recognizer accepts: WithRecognizer, WithInclude), Young ones
// are kept for their age (the listing's modification time is at or after
// the cutoff, or unknown), Walled ones are older but in another
// repository's folder, Kept ones are older but referenced by an input (or
// spared by a CandidateCheck), and
// Marked ones are candidates.
type Progress struct {
	Phase                                 string
	Listed, Young, Kept, Marked           int64
	Unrecognized, Walled                  int64
	Deleted, AlreadyGone, Failed, Refused int64
	// Inventory counts the objects read from an inventory report
	// (WithInventory), those ignored included; the objects of the slices
	// taken from it count in Listed too.
	Inventory int64
}

// reportRoot is the folder of every run's report, with a trailing '/'.
func reportRoot(storagePrefix string) string {
	return layout.Runs(storagePrefix, layout.Report)
}

// reportDir is the folder of a run's report, with a trailing '/'.
func reportDir(storagePrefix, runID string) string {
	return layout.RunPath(storagePrefix, layout.Report, runID)
}

// validRunID accepts the run IDs of Mark (descending xids) and of lakeFS's
// Spark client (UUIDs): the module's one rule, layout.ValidRunID.
func validRunID(id string) error {
	if !layout.ValidRunID(id) {
		return fmt.Errorf("%w: run ID %q", ErrInvalidInput, id)
	}
	return nil
}

// maxSummarySize bounds what ReadSummary reads: a summary is one short line.
const maxSummarySize = 64 << 10

// ReadSummary reads the summary of a run, written by Mark or by lakeFS's
// Spark client. A run without one gives ErrNoRun. An empty storagePrefix is
// DefaultStoragePrefix. classify are classifiers of the bucket's errors (see
// ErrorClassifier), which tell a summary the store refuses to read from a
// missing one.
func ReadSummary(ctx context.Context, bucket *blob.Bucket, storagePrefix, runID string, classify ...ErrorClassifier) (*Summary, error) {
	if bucket == nil {
		return nil, fmt.Errorf("%w: nil bucket", ErrInvalidInput)
	}
	if err := validRunID(runID); err != nil {
		return nil, err
	}
	storagePrefix = cmp.Or(storagePrefix, DefaultStoragePrefix)
	if err := validPrefix(storagePrefix); err != nil {
		return nil, err
	}
	key := reportDir(storagePrefix, runID) + layout.SummaryFile
	b, err := readSmall(ctx, bucket, key, maxSummarySize)
	// The store's own answer, not gocloud's code: gcsblob calls GCS's 403
	// NotFound, and a summary that exists but cannot be read may say
	// success.
	if classifiers(classify).isNotFound(err) {
		return nil, fmt.Errorf("%w: %s", ErrNoRun, key)
	}
	if err != nil {
		return nil, err
	}
	// UnmarshalJSON itself, rather than json.Unmarshal, so that malformed
	// JSON wraps ErrInvalidInput like a bad value does.
	var s Summary
	if err := s.UnmarshalJSON(bytes.TrimSpace(b)); err != nil {
		return nil, wrapOp(key, err)
	}
	return &s, nil
}

// readSmall reads a small object whole, refusing one over limit bytes.
func readSmall(ctx context.Context, bucket *blob.Bucket, key string, limit int64) ([]byte, error) {
	b, err := blobio.ReadAll(ctx, bucket, key, limit)
	switch {
	case errors.Is(err, blobio.ErrTooLarge):
		return nil, fmt.Errorf("%w: %s larger than %d bytes", ErrInvalidInput, key, limit)
	case err != nil:
		return nil, fmt.Errorf("sweep: read %s: %w", key, err)
	}
	return b, nil
}

// writeJSON writes v as one line of JSON at key.
func writeJSON(ctx context.Context, bucket *blob.Bucket, key string, v any) error {
	if err := blobio.WriteJSON(ctx, bucket, key, v); err != nil {
		return fmt.Errorf("sweep: write %s: %w", key, err)
	}
	return nil
}
