package layout

import "testing"

func TestExtendedRulesKey(t *testing.T) {
	for prefix, want := range map[string]string{
		"":        "_lakefs/retention/gc/rules/lakegc.json",
		"_lakefs": "_lakefs/retention/gc/rules/lakegc.json",
		"meta//":  "meta/retention/gc/rules/lakegc.json",
		"a/b":     "a/b/retention/gc/rules/lakegc.json",
	} {
		if got := ExtendedRulesKey(prefix); got != want {
			t.Errorf("ExtendedRulesKey(%q) = %q, want %q", prefix, got, want)
		}
	}
}
