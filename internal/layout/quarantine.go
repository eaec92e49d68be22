package layout

import "strings"

// The quarantine: where a sweep with quarantine moves its candidates instead
// of deleting them, one folder per mark run, below the storage prefix (so
// never scanned by a mark: the storage and data folders are apart, see
// PrefixesOverlap). A run's quarantine folder holds
//
//	quarantine.json         QuarantineFile: when the quarantine was started
//	manifest/<part>.json    QuarantineManifest: the addresses a sweep moved, written before their originals' delete
//	objects/<address>       QuarantineObjects: each moved object, at its address below the folder
//
// An object's place in the quarantine spells the address it came from, so
// the move and its record are one write: whatever a crash leaves in
// objects/ names where it goes back to.

// quarantineFolder is the folder of every quarantine below gcFolder.
const quarantineFolder = "quarantine/"

// leaseFolder is the folder of the lease of one run at a time below
// gcFolder.
const leaseFolder = "lease/"

// Names inside a quarantine's folder.
const (
	// QuarantineFile is a quarantine's record, written before anything else
	// in its folder and removed last.
	QuarantineFile = "quarantine.json"
	// QuarantineManifest holds the parts of a quarantine's manifest.
	QuarantineManifest = "manifest/"
	// QuarantineObjects holds the moved objects, each at its address.
	QuarantineObjects = "objects/"
)

// Quarantines returns the folder of every quarantine,
// "<storagePrefix>/retention/gc/quarantine/".
func Quarantines(storagePrefix string) string {
	return under(storagePrefix, gcFolder+quarantineFolder)
}

// QuarantinePath returns the quarantine folder of the mark run runID,
// "<storagePrefix>/retention/gc/quarantine/<runID>/".
func QuarantinePath(storagePrefix, runID string) string {
	return Quarantines(storagePrefix) + runID + "/"
}

// QuarantineKey returns where the object at address (a key relative to the
// namespace's root) goes in run runID's quarantine,
// "<storagePrefix>/retention/gc/quarantine/<runID>/objects/<address>".
func QuarantineKey(storagePrefix, runID, address string) string {
	return QuarantinePath(storagePrefix, runID) + QuarantineObjects + address
}

// QuarantineAddress returns the address a key of run runID's quarantine
// objects came from, and whether key is one (below the objects folder, with
// a non-empty rest).
func QuarantineAddress(storagePrefix, runID, key string) (string, bool) {
	a, ok := strings.CutPrefix(key, QuarantinePath(storagePrefix, runID)+QuarantineObjects)
	return a, ok && a != ""
}

// LeaseFolder returns the folder of the lease one run at a time takes,
// "<storagePrefix>/retention/gc/lease/", which holds one object per
// generation of the lease.
func LeaseFolder(storagePrefix string) string {
	return under(storagePrefix, gcFolder+leaseFolder)
}

// QuarantinePart is one part of a quarantine's manifest, as JSON: the
// addresses one sweep batch moved. The quarantine writes it; a mark from an
// inventory report reads it to keep what was moved back since the report.
type QuarantinePart struct {
	Addresses []string `json:"addresses"`
}
