package lakegc

import (
	"time"

	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

// Report is what a GC cycle did, phase by phase; it marshals to JSON. Keys
// are relative to the namespace; locations are URIs. Bytes are what a phase
// wrote to the bucket, durations are measured with Config.Clock. A phase
// that did not run is nil.
type Report struct {
	// ExportRunID names the uncommitted export: Config.ResumeExport
	// continues it.
	ExportRunID string `json:"export_run_id,omitempty"`
	// RunID names the GC run: its commits report and its mark.
	// Config.ResumeMark sweeps its candidates.
	RunID string `json:"run_id,omitempty"`
	// DryRun is set when nothing was deleted because Config.Sweep was not.
	DryRun bool `json:"dry_run"`

	Export  *ExportReport  `json:"export,omitempty"`
	Rules   *RulesReport   `json:"rules,omitempty"`
	Commits *CommitsReport `json:"commits,omitempty"`
	Mark    *MarkReport    `json:"mark,omitempty"`
	Sweep   *SweepReport   `json:"sweep,omitempty"`
	// Pruned is what Config.KeepRuns pruned.
	Pruned *PruneReport `json:"pruned,omitempty"`
}

// ExportReport is the uncommitted export.
type ExportReport struct {
	// Start is when the export began: the anchor of the mark's cutoff.
	Start time.Time `json:"start"`
	// Location is the URI of the folder of the export's files, lakeFS's
	// gc_uncommitted_location.
	Location string `json:"location"`
	// Resumed is set when the export continued an interrupted one.
	Resumed bool `json:"resumed,omitempty"`
	// Host is set when the host ran the export itself (Host.Export): then
	// Location is the host's, Calls is 1 and the counts are zero.
	Host bool `json:"host,omitempty"`
	// Calls is the number of Prepare calls this Collect made.
	Calls int `json:"calls"`
	// Files and Rows count the run's files and rows, those of the calls
	// before a resume included; CopyRecords counts the rows from the copy
	// table.
	Files       int   `json:"files"`
	Rows        int64 `json:"rows"`
	CopyRecords int64 `json:"copy_records"`
	// Foreign counts the staged full addresses (and copy records) outside
	// the namespace, such as imports, that this Collect's calls found
	// (uncommitted.Result.Foreign); a host's own export's are in the
	// mark's report.
	Foreign int64 `json:"foreign,omitempty"`
	// Bytes is the size of the run's files.
	Bytes    int64         `json:"bytes"`
	Duration time.Duration `json:"duration_ns"`
}

// RulesReport is the retention rules the cycle applied.
type RulesReport struct {
	// Source is where the rules came from: RulesFromConfig (Config.Rules)
	// or RulesFromFiles (the namespace's rules files).
	Source string `json:"source"`
	// Key is where lakeFS's rules were read; ExtendedKey where lakegc's
	// extended rules were. Both empty when Source is RulesFromConfig.
	Key         string `json:"key,omitempty"`
	ExtendedKey string `json:"extended_key,omitempty"`
	// Found is false when the repository has no rules: then every commit is
	// kept, as lakeFS does, Rules and Extended are nil, and Warning says
	// so.
	Found bool             `json:"found"`
	Rules *retention.Rules `json:"rules,omitempty"`
	// Extended are the extended rules applied beside Rules; nil: none.
	Extended *retention.Extended `json:"extended,omitempty"`
	// Applied describes in one line the rules the cycle applied.
	Applied string `json:"applied"`
	// Warning, if set, is what the cycle also logged at WARN: no rules, so
	// every commit was kept.
	Warning  string        `json:"warning,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Sources of a cycle's rules (RulesReport.Source).
const (
	RulesFromConfig = "config"
	RulesFromFiles  = "files"
)

// CommitsReport is the active commits and their report.
type CommitsReport struct {
	// Active is the number of commits the rules keep.
	Active int `json:"active"`
	// Key is the commits report, lakeFS's commits.csv.
	Key      string        `json:"key"`
	Bytes    int64         `json:"bytes"`
	Duration time.Duration `json:"duration_ns"`
}

// MarkReport is the mark: what a sweep deletes.
type MarkReport struct {
	// Summary is the mark's summary.json: its cutoff, and in
	// NumDeletedObjects the number of candidates.
	Summary *sweep.Summary `json:"summary"`
	// Report is the folder of the mark's report (summary.json, and the
	// candidates under deleted/).
	Report string `json:"report"`
	// Counters of the objects the mark listed, kept and marked; zero for a
	// resumed mark.
	Listed int64 `json:"listed"`
	Kept   int64 `json:"kept"`
	Marked int64 `json:"marked"`
	// Foreign counts the full addresses of the host's inputs (committed,
	// its own export, copy records) that are outside the namespace, such
	// as imports: their objects are not in its listing. ForeignSample names
	// the first few. Zero for a resumed mark. Only what reaches Collect is
	// counted: a host that drops outside addresses itself (the lakeFS
	// command's metarange reader counts them in its own progress) adds
	// none here. With CommittedParts, the committed addresses counted are
	// those of the parts the mark read: every part in a clean cycle, in an
	// optimized one only those that appeared or left; with CommittedChanges
	// read in place of every address, those added and removed.
	Foreign       int64    `json:"foreign"`
	ForeignSample []string `json:"foreign_sample,omitempty"`
	// Of the listed objects, Recognized have a shape of the repository's
	// own (Config.Recognize, Config.Include) and are judged; Unrecognized
	// ones (UnrecognizedBytes in size; a sample in
	// Summary.UnrecognizedSample, all of them in the report's
	// unrecognized/ folder) are kept: other tenants' files, import
	// sources. Walled counts the recognized objects kept because they lie
	// in another repository's folder (Summary.Walls). Zero for a resumed
	// mark.
	Recognized        int64 `json:"recognized"`
	Unrecognized      int64 `json:"unrecognized"`
	UnrecognizedBytes int64 `json:"unrecognized_bytes"`
	Walled            int64 `json:"walled"`
	// Bytes is the size of the candidates' files.
	Bytes    int64         `json:"bytes"`
	Duration time.Duration `json:"duration_ns"`
}

// SweepReport is the sweep: what was deleted.
type SweepReport struct {
	// Deleted, AlreadyGone, Failed and Refused are sweep.Result's.
	Deleted     int64 `json:"deleted"`
	AlreadyGone int64 `json:"already_gone"`
	Failed      int64 `json:"failed"`
	Refused     int64 `json:"refused"`
	// Report is the folder of the sweep's report (sweep.json, failed/),
	// the mark's.
	Report string `json:"report"`
	// Quarantine is, with Config.Quarantine, the folder the candidates
	// were moved into (Deleted counts them).
	Quarantine string        `json:"quarantine,omitempty"`
	Duration   time.Duration `json:"duration_ns"`
}

// Phases of a cycle, as Progress names them.
const (
	PhaseExport  = "export"
	PhaseRules   = "rules"
	PhaseCommits = "commits"
	PhaseMark    = "mark"
	PhaseSweep   = "sweep"
)

// Progress is a step of a GC cycle, given to Config.Progress.
type Progress struct {
	// Phase is one of the Phase constants.
	Phase string
	// ExportRunID and RunID are the cycle's run IDs, once made.
	ExportRunID, RunID string
	// ExportNext is, after each call of the export, where the next call
	// resumes: nil once the export is complete.
	ExportNext *uncommitted.Checkpoint
	// Files and Rows count what the export wrote so far.
	Files int
	Rows  int64
	// Counters are those of the mark and the sweep: zero, with an empty
	// Counters.Phase, in the call at the mark's or the sweep's start.
	Counters sweep.Progress
}
