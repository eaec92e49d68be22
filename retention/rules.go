package retention

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"
)

// ErrInvalidRules is wrapped by every error about rules that are malformed:
// negative days, an empty or non-UTF-8 branch ID, JSON missing a required
// field, or protobuf bytes that are truncated or malformed.
var ErrInvalidRules = errors.New("retention: invalid rules")

// ErrInvalidInput is wrapped by the error of a call given an argument it
// cannot take (ActiveCommits without branches or a commit source, the
// extended rules' stale-branch rule with a commit source that names no
// default branch). Rules
// that do not decode are ErrInvalidRules: they are data read from the
// store, not an argument.
var ErrInvalidInput = errors.New("retention: invalid input")

// Rules say how long a repository keeps its commits: a commit is kept while it
// is within the retention period of a branch whose history holds it (see
// [ActiveCommits]). A branch listed in BranchRetentionDays uses its own number
// of days; every other branch, and every dangling commit, uses
// DefaultRetentionDays.
//
// Rules is lakeFS's graveler.GarbageCollectionRules. A nil BranchRetentionDays
// is the same as an empty one.
//
// The zero Rules (0 days, no branch rules) are no rules, as in lakeFS: it
// stores them as an empty file, which it reads as no rules, and its GC then
// keeps every commit. [Rules.MarshalBinary] writes them as no bytes,
// [Rules.UnmarshalBinary] and [RulesStore.Get] return [ErrNotFound] for
// them, and [ActiveCommits] refuses them with [ErrNotFound].
type Rules struct {
	DefaultRetentionDays int32
	BranchRetentionDays  map[string]int32
}

// isZero reports whether r are the zero rules, which mean no rules.
func (r *Rules) isZero() bool {
	return r.DefaultRetentionDays == 0 && len(r.BranchRetentionDays) == 0
}

// Validate reports whether r is usable: every number of days is zero or
// more, and every branch ID is non-empty, valid UTF-8 (protobuf strings must
// be). The error wraps [ErrInvalidRules].
func (r *Rules) Validate() error {
	if r == nil {
		return fmt.Errorf("%w: nil rules", ErrInvalidRules)
	}
	if r.DefaultRetentionDays < 0 {
		return fmt.Errorf("%w: negative default retention days %d", ErrInvalidRules, r.DefaultRetentionDays)
	}
	for _, branch := range r.sortedBranches() {
		days := r.BranchRetentionDays[branch]
		switch {
		case branch == "":
			return fmt.Errorf("%w: empty branch ID", ErrInvalidRules)
		case !utf8.ValidString(branch):
			return fmt.Errorf("%w: branch ID %q is not valid UTF-8", ErrInvalidRules, branch)
		case days < 0:
			return fmt.Errorf("%w: negative retention days %d for branch %q", ErrInvalidRules, days, branch)
		}
	}
	return nil
}

// RetentionDays returns the number of days branch keeps its commits: its own
// rule if it has one, else the default. r must not be nil.
func (r *Rules) RetentionDays(branch string) int32 {
	if days, ok := r.BranchRetentionDays[branch]; ok {
		return days
	}
	return r.DefaultRetentionDays
}

// sortedBranches returns the branch IDs that have a rule, sorted, so that
// encodings and error messages do not depend on map order.
func (r *Rules) sortedBranches() []string {
	return slices.Sorted(maps.Keys(r.BranchRetentionDays))
}

// jsonRules and jsonBranchRule are the lakeFS API form of the rules
// (GarbageCollectionRules in openapi.yaml). Pointers tell a missing field
// from a zero one: every field is required. Branches is decoded in a second
// step, because a missing list and a null one differ: lakeFS answers
// "branches": null when no branch has a rule.
type jsonRules struct {
	DefaultRetentionDays *int32          `json:"default_retention_days"`
	Branches             json.RawMessage `json:"branches"`
}

type jsonBranchRule struct {
	BranchID      *string `json:"branch_id"`
	RetentionDays *int32  `json:"retention_days"`
}

// MarshalJSON encodes r in the lakeFS API form,
// {"default_retention_days":N,"branches":[{"branch_id":"b","retention_days":M}]},
// with branches sorted by ID and [] when there are none. Invalid rules are
// an error wrapping [ErrInvalidRules].
func (r Rules) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	branches := make([]jsonBranchRule, 0, len(r.BranchRetentionDays))
	for _, branch := range r.sortedBranches() {
		days := r.BranchRetentionDays[branch]
		branches = append(branches, jsonBranchRule{BranchID: &branch, RetentionDays: &days})
	}
	list, err := json.Marshal(branches)
	if err != nil {
		return nil, err
	}
	return json.Marshal(jsonRules{DefaultRetentionDays: &r.DefaultRetentionDays, Branches: list})
}

// UnmarshalJSON decodes the lakeFS API form written by [Rules.MarshalJSON].
// Both default_retention_days and branches are required, and so are both
// fields of every branch rule. branches may be [] or null, both meaning no
// branch rules: lakeFS's GET /settings/gc_rules answers null when no branch
// has a rule. Input that is not
// UTF-8, a branch listed twice, a number that is not an int32, or rules that
// fail [Rules.Validate] are an error wrapping [ErrInvalidRules]. On error r
// is left unchanged.
func (r *Rules) UnmarshalJSON(b []byte) error {
	// encoding/json replaces invalid UTF-8 with U+FFFD, which would turn a
	// rule for one branch into a rule for another.
	if !utf8.Valid(b) {
		return fmt.Errorf("%w: JSON is not valid UTF-8", ErrInvalidRules)
	}
	var in jsonRules
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRules, err)
	}
	if in.DefaultRetentionDays == nil {
		return fmt.Errorf("%w: default_retention_days is required", ErrInvalidRules)
	}
	if in.Branches == nil {
		return fmt.Errorf("%w: branches is required", ErrInvalidRules)
	}
	var branches []jsonBranchRule // stays nil for null
	if err := json.Unmarshal(in.Branches, &branches); err != nil {
		return fmt.Errorf("%w: branches: %w", ErrInvalidRules, err)
	}
	out := Rules{
		DefaultRetentionDays: *in.DefaultRetentionDays,
		BranchRetentionDays:  make(map[string]int32, len(branches)),
	}
	for i, rule := range branches {
		if rule.BranchID == nil || rule.RetentionDays == nil {
			return fmt.Errorf("%w: branches[%d]: branch_id and retention_days are required", ErrInvalidRules, i)
		}
		if _, dup := out.BranchRetentionDays[*rule.BranchID]; dup {
			return fmt.Errorf("%w: branch %q has two rules", ErrInvalidRules, *rule.BranchID)
		}
		out.BranchRetentionDays[*rule.BranchID] = *rule.RetentionDays
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*r = out
	return nil
}
