package layout

import "strings"

// The retention/gc tree: where lakeFS, its GC client and lakegc keep the
// files of garbage collection below a namespace's storage prefix. Each
// function takes the storage prefix as a folder name without leading or
// trailing '/' (callers apply their own default first); an empty one gives
// the path below the storage prefix, without a leading '/'. A run's folder
// ends with '/'; a run ID is checked by ValidRunID, not here.

// gcFolder is the folder of every garbage-collection file below the
// storage prefix.
const gcFolder = "retention/gc/"

// RunKind names the kind of a run whose files sit in a folder of their own
// under the storage prefix.
type RunKind int

// The kinds of run, each a folder of lakeFS's retention/gc tree.
const (
	// Commits is a prepare-commits run: its report, CommitsFile, is what
	// lakeFS's GC client reads (lakeFS's folder "commits/run_id=<id>/").
	Commits RunKind = iota + 1
	// Uncommitted is an export of uncommitted addresses: lakeFS's Parquet
	// files under UncommittedFolder, and lakegc's resume state, ExportState.
	Uncommitted
	// Report is a mark run's report, lakeFS's "unified" report: deleted/,
	// summary.json, and the records of an optimized run, RecordsFolder.
	Report
)

// runFolders holds each kind's folder below gcFolder and what comes before
// the run ID in the run's folder name.
var runFolders = [...]struct{ folder, before string }{
	Commits:     {"commits/", "run_id="},
	Uncommitted: {"uncommitted/", ""},
	Report:      {"unified/", ""},
}

// Names inside a run's folder.
const (
	// CommitsFile is the commits report in a Commits run's folder.
	CommitsFile = "commits.csv"
	// UncommittedFolder holds an Uncommitted run's Parquet files and
	// lakegc's manifest of them (lakeFS's gc_uncommitted_location).
	UncommittedFolder = "uncommitted/"
	// ExportState is lakegc's resume state of an export, in an Uncommitted
	// run's folder beside UncommittedFolder.
	ExportState = "_lakegc_export.json"
	// SummaryFile is a Report run's summary, written last.
	SummaryFile = "summary.json"
	// DeletedFolder holds a Report run's candidates, the addresses a sweep
	// deletes.
	DeletedFolder = "deleted/"
	// RecordsFolder holds what an optimized run leaves for the next, in a
	// Report run's folder: lakeFS's readers read DeletedFolder and
	// SummaryFile only, and Hadoop's readers skip names that start with '_'.
	RecordsFolder = "_lakegc/"
)

// rulesFile is the retention rules below gcFolder; the file holds protobuf
// despite its name (lakeFS's GarbageCollectionManager).
const rulesFile = "rules/config.json"

// under joins the storage prefix and a path below it with one '/'.
func under(storagePrefix, rest string) string {
	if storagePrefix == "" {
		return rest
	}
	return storagePrefix + "/" + rest
}

// Runs returns the folder of every run of kind:
// "<storagePrefix>/retention/gc/<kind's folder>", with a trailing '/'.
// kind is one of Commits, Uncommitted and Report.
func Runs(storagePrefix string, kind RunKind) string {
	return under(storagePrefix, gcFolder+runFolders[kind].folder)
}

// RunPath returns the folder of the run runID of kind, with a trailing '/':
//
//	Commits:     <storagePrefix>/retention/gc/commits/run_id=<runID>/
//	Uncommitted: <storagePrefix>/retention/gc/uncommitted/<runID>/
//	Report:      <storagePrefix>/retention/gc/unified/<runID>/
func RunPath(storagePrefix string, kind RunKind, runID string) string {
	return Runs(storagePrefix, kind) + runFolders[kind].before + runID + "/"
}

// CommitsKey returns the key of run runID's commits report,
// <storagePrefix>/retention/gc/commits/run_id=<runID>/commits.csv.
func CommitsKey(storagePrefix, runID string) string {
	return RunPath(storagePrefix, Commits, runID) + CommitsFile
}

// UncommittedFiles returns the folder of the files of export runID,
// <storagePrefix>/retention/gc/uncommitted/<runID>/uncommitted/.
func UncommittedFiles(storagePrefix, runID string) string {
	return RunPath(storagePrefix, Uncommitted, runID) + UncommittedFolder
}

// ExportStateKey returns the key of lakegc's resume state of export runID,
// <storagePrefix>/retention/gc/uncommitted/<runID>/_lakegc_export.json.
func ExportStateKey(storagePrefix, runID string) string {
	return RunPath(storagePrefix, Uncommitted, runID) + ExportState
}

// RulesKey returns the key of the retention rules,
// <storagePrefix>/retention/gc/rules/config.json.
func RulesKey(storagePrefix string) string {
	return under(storagePrefix, gcFolder+rulesFile)
}

// ValidPrefix reports whether p, a storage or data prefix, is a folder name:
// not empty, without a leading or trailing '/', an empty element ("//") or
// a URI's "://".
func ValidPrefix(p string) bool {
	return p != "" && p[0] != '/' && p[len(p)-1] != '/' && !strings.Contains(p, "//")
}

// PrefixesOverlap reports whether one of the folders storage and data holds
// the other (or they are the same): the data folder is scanned for garbage
// and the storage folder never is, so they must be apart.
func PrefixesOverlap(storage, data string) bool {
	return storage == data || strings.HasPrefix(data+"/", storage+"/") || strings.HasPrefix(storage+"/", data+"/")
}

// The range cache of the lakeFS host (package lakefs/metarange): one object
// per range ID, and per run the list of the range IDs it used, from which
// the cache is pruned. Neither is a run folder: Prune's kinds do not list
// them.
const (
	rangeCacheFolder = "lakegc-ranges/"
	rangeCacheRuns   = "runs/"
)

// RangeCache returns the folder of the range cache,
// <storagePrefix>/retention/gc/lakegc-ranges/, with a trailing '/'; its
// objects are named by range ID, its run records are under RangeCacheRuns.
func RangeCache(storagePrefix string) string {
	return under(storagePrefix, gcFolder+rangeCacheFolder)
}

// RangeCacheKey returns the key of the cache of range rangeID,
// <storagePrefix>/retention/gc/lakegc-ranges/<rangeID>. The ID is checked
// by the caller (64 lower-case hex digits), not here.
func RangeCacheKey(storagePrefix, rangeID string) string {
	return RangeCache(storagePrefix) + rangeID
}

// RangeCacheRuns returns the folder of the range cache's run records,
// <storagePrefix>/retention/gc/lakegc-ranges/runs/, with a trailing '/'.
func RangeCacheRuns(storagePrefix string) string {
	return RangeCache(storagePrefix) + rangeCacheRuns
}

// RangeCacheRunKey returns the key of run runID's record of the ranges it
// used, <storagePrefix>/retention/gc/lakegc-ranges/runs/<runID>.
func RangeCacheRunKey(storagePrefix, runID string) string {
	return RangeCacheRuns(storagePrefix) + runID
}
