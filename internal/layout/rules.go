package layout

import "strings"

// ExtendedRulesName is the name of lakegc's extended retention rules file,
// below the storage prefix: next to lakeFS's own rules
// (retention/gc/rules/config.json), which lakeFS keeps reading and which
// never name this file.
const ExtendedRulesName = "retention/gc/rules/lakegc.json"

// ExtendedRulesKey returns the key of lakegc's extended retention rules in a
// namespace whose storage prefix is storagePrefix: "<storagePrefix>/" +
// ExtendedRulesName. Trailing slashes of storagePrefix are ignored and an
// empty one is StoragePrefix.
func ExtendedRulesKey(storagePrefix string) string {
	storagePrefix = strings.TrimRight(storagePrefix, "/")
	if storagePrefix == "" {
		storagePrefix = StoragePrefix
	}
	return storagePrefix + "/" + ExtendedRulesName
}
