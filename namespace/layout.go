package namespace

import "github.com/lakegc/lakegc/internal/layout"

// The folders of a storage namespace, as lakeFS lays it out.
const (
	// DefaultStoragePrefix is the folder of lakeFS's own files (rules,
	// exports, reports), lakeFS's committed.block_storage_prefix unless
	// configured otherwise: "_lakefs".
	DefaultStoragePrefix = layout.StoragePrefix
	// DefaultDataPrefix is the folder of the data slices: "data".
	DefaultDataPrefix = layout.DataPrefix
)

// The keys below are relative to the namespace, as a bucket of OpenBucket
// names them. storagePrefix is a folder name without leading or trailing
// '/' (DefaultStoragePrefix unless lakeFS is configured otherwise); "" gives
// the path below it. They check nothing: a run ID is ValidRunID's.

// RulesKey returns the key of a repository's garbage-collection rules,
// "<storagePrefix>/retention/gc/rules/config.json".
func RulesKey(storagePrefix string) string { return layout.RulesKey(storagePrefix) }

// CommitsKey returns the key of the commits report of run runID, the file
// lakeFS's GC client reads,
// "<storagePrefix>/retention/gc/commits/run_id=<runID>/commits.csv".
func CommitsKey(storagePrefix, runID string) string {
	return layout.CommitsKey(storagePrefix, runID)
}

// UncommittedFolder returns the folder of the files of the uncommitted
// export runID, lakeFS's gc_uncommitted_location,
// "<storagePrefix>/retention/gc/uncommitted/<runID>/uncommitted/".
func UncommittedFolder(storagePrefix, runID string) string {
	return layout.UncommittedFiles(storagePrefix, runID)
}

// ReportFolder returns the folder of the report of mark run runID (its
// deleted/ folder and summary.json),
// "<storagePrefix>/retention/gc/unified/<runID>/".
func ReportFolder(storagePrefix, runID string) string {
	return layout.RunPath(storagePrefix, layout.Report, runID)
}

// ValidRunID reports whether id is a run ID that names a folder of the
// namespace's retention/gc tree: 1 to 128 letters, digits, '-', '_', '.'
// and '=', not "." or "..", as lakeFS's and lakegc's run IDs are.
func ValidRunID(id string) bool { return layout.ValidRunID(id) }
