package retention

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ExtendedVersion is the version of the extended rules file that
// [Extended.MarshalJSON] writes and [Extended.UnmarshalJSON] reads.
const ExtendedVersion = 1

// Bounds of the extended rules, so that hostile input allocates little:
// [Extended.Validate] and [Extended.UnmarshalJSON] refuse more.
const (
	// MaxExtendedSize is the largest extended rules file, in bytes.
	MaxExtendedSize = 1 << 20
	// MaxBranchRules is the largest number of branch rules.
	MaxBranchRules = 4096
	// MaxPatternLen is the longest branch name or pattern, in bytes.
	MaxPatternLen = 1024
	// MaxPatternProgram is the largest program one pattern may compile
	// to, in instructions, its counted repetitions expanded: ".{1000}"
	// is a thousand. A 1 KiB pattern could otherwise take 150,000
	// instructions, tens of megabytes and a third of a second to compile.
	MaxPatternProgram = 4 * MaxPatternLen
	// MaxRulesProgram is the largest program all patterns together may
	// compile to, in instructions: about what 1 MiB of plain patterns
	// takes (some 40 MiB compiled).
	MaxRulesProgram = 1 << 20
)

// Extended are lakegc's retention rules beside lakeFS's [Rules], in a file
// lakeFS never reads (see the package documentation, "Extended rules"). They
// refine lakeFS's rules: without lakeFS's rules a GC keeps every commit, as
// lakeFS does, whatever the extended rules say.
//
// The zero Extended changes nothing: [ActiveCommitsExtended] with it keeps
// what [ActiveCommits] keeps.
type Extended struct {
	// KeepTags keeps every tagged commit, and its ancestors as a branch
	// HEAD with the default retention keeps them. It only ever keeps more.
	// It needs a [CommitSource] that is also [Tags]; a source without tags
	// is unchanged. The JSON form keeps tags unless it says
	// "keep_tags": false.
	KeepTags bool
	// Branches are rules by branch name. The first rule that matches a
	// branch applies to it; a branch no rule matches is ruled by lakeFS's
	// rules alone.
	Branches []BranchRule
	// StaleBranchDays, when above zero, stops protecting the HEAD of a
	// branch whose HEAD was created StaleBranchDays days ago or earlier:
	// that HEAD is then kept only as a dangling commit is, by its date
	// against the branch's retention. It can only delete more. The age is
	// the HEAD commit's: a branch created today at an older commit is
	// stale at once. It never applies to the default branch, and
	// [ActiveCommitsExtended] refuses it for a source that does not name
	// that branch ([DefaultBranch]) or names one not among the branches.
	// Zero: off.
	StaleBranchDays int32
}

// A BranchRule rules the branches it matches: those named Branch, or, if
// Branch is empty, those whose whole name Pattern (a Go regular expression)
// matches. Exactly one of Branch and Pattern is set.
type BranchRule struct {
	// Branch is a branch name.
	Branch string
	// Pattern is a regular expression (Go's syntax, RE2) that must match
	// the whole branch name: "feature/.*" matches "feature/x", not
	// "old-feature/x".
	Pattern string
	// RetentionDays, if set, replaces lakeFS's default retention for the
	// matched branches that lakeFS's rules do not name: a branch rule of
	// lakeFS's own always wins. It may be shorter than the default, as a
	// lakeFS branch rule may. Nil: lakeFS's days.
	RetentionDays *int32
	// KeepLast keeps the last KeepLast commits of each matched branch: its
	// HEAD and the main parents before it, whatever their age, stale branch
	// or not. Zero: none beyond the other rules.
	KeepLast int32
}

// IsZero reports whether e changes nothing: no tags kept, no branch rules,
// no stale rule. A nil e is zero.
func (e *Extended) IsZero() bool {
	return e == nil || !e.KeepTags && len(e.Branches) == 0 && e.StaleBranchDays == 0
}

// Validate reports whether e is usable: at most [MaxBranchRules] rules,
// each with exactly one of Branch and Pattern (valid UTF-8, at most
// [MaxPatternLen] bytes, a Pattern that compiles, to at most
// [MaxPatternProgram] instructions and [MaxRulesProgram] for all the
// patterns, counted before they are compiled), days and counts of zero
// or more, and something to say (RetentionDays or KeepLast). The error
// wraps [ErrInvalidRules] and names the rule. A nil e is valid: no rules.
func (e *Extended) Validate() error {
	_, err := e.compile()
	return err
}

// compiled are extended rules ready to apply.
type compiled struct {
	ext *Extended
	res []*regexp.Regexp // per rule; nil for a Branch rule
}

func (e *Extended) compile() (*compiled, error) {
	if e == nil {
		return &compiled{ext: &Extended{}}, nil
	}
	invalid := func(format string, args ...any) (*compiled, error) {
		return nil, fmt.Errorf("%w: extended rules: %s", ErrInvalidRules, fmt.Sprintf(format, args...))
	}
	if e.StaleBranchDays < 0 {
		return invalid("negative stale_branch_days %d", e.StaleBranchDays)
	}
	if len(e.Branches) > MaxBranchRules {
		return invalid("%d branch rules, more than %d", len(e.Branches), MaxBranchRules)
	}
	c := &compiled{ext: e, res: make([]*regexp.Regexp, len(e.Branches))}
	total := 0 // instructions of the patterns
	for i, r := range e.Branches {
		name := r.Branch
		if name == "" {
			name = r.Pattern
		}
		switch {
		case (r.Branch == "") == (r.Pattern == ""):
			return invalid("branches[%d]: exactly one of branch and pattern is needed", i)
		case len(name) > MaxPatternLen:
			return invalid("branches[%d]: %d bytes, more than %d", i, len(name), MaxPatternLen)
		case !utf8.ValidString(name):
			return invalid("branches[%d]: %q is not valid UTF-8", i, name)
		case r.RetentionDays != nil && *r.RetentionDays < 0:
			return invalid("branches[%d] (%s): negative retention_days %d", i, name, *r.RetentionDays)
		case r.KeepLast < 0:
			return invalid("branches[%d] (%s): negative keep_last %d", i, name, r.KeepLast)
		case r.RetentionDays == nil && r.KeepLast == 0:
			return invalid("branches[%d] (%s): neither retention_days nor keep_last: the rule says nothing", i, name)
		}
		if r.Pattern != "" {
			full := `^(?:` + r.Pattern + `)$`
			// The parse is linear in the pattern; its size is counted
			// before the compilation expands the counted repetitions.
			tree, err := syntax.Parse(full, syntax.Perl)
			if err != nil {
				return invalid("branches[%d]: pattern %q does not compile: %v", i, r.Pattern, err)
			}
			n := programSize(tree, MaxPatternProgram)
			if n > MaxPatternProgram {
				return invalid("branches[%d]: pattern %q compiles to more than %d instructions", i, r.Pattern, MaxPatternProgram)
			}
			if total += n; total > MaxRulesProgram {
				return invalid("branches[%d]: the patterns compile to more than %d instructions in all", i, MaxRulesProgram)
			}
		}
	}
	// Compiled once every rule is known valid and the total small enough.
	for i, r := range e.Branches {
		if r.Pattern != "" {
			re, err := regexp.Compile(`^(?:` + r.Pattern + `)$`)
			if err != nil {
				return invalid("branches[%d]: pattern %q does not compile: %v", i, r.Pattern, err)
			}
			c.res[i] = re
		}
	}
	return c, nil
}

// programSize returns about how many instructions re compiles to, counted
// repetitions expanded, or a number above limit once it exceeds limit.
func programSize(re *syntax.Regexp, limit int) int {
	sum := func(subs []*syntax.Regexp) int {
		n := len(subs)
		for _, sub := range subs {
			if n += programSize(sub, limit); n > limit {
				return limit + 1
			}
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpConcat, syntax.OpAlternate:
		return sum(re.Sub)
	case syntax.OpRepeat:
		times := max(re.Min, re.Max, 1)
		if re.Max < 0 {
			times = re.Min + 1
		}
		one := sum(re.Sub)
		if one > limit/times {
			return limit + 1
		}
		return one * times
	}
	return 1
}

// rule returns the first rule that matches branch, or nil.
func (c *compiled) rule(branch string) *BranchRule {
	for i := range c.ext.Branches {
		r := &c.ext.Branches[i]
		if r.Branch == branch || c.res[i] != nil && c.res[i].MatchString(branch) {
			return r
		}
	}
	return nil
}

// Matcher returns a function that returns the first rule of e matching a
// branch, or nil: the rule [ActiveCommitsExtended] applies to that branch.
// Invalid rules are an error wrapping [ErrInvalidRules]. The function is
// safe for concurrent use.
func (e *Extended) Matcher() (func(branch string) *BranchRule, error) {
	c, err := e.compile()
	if err != nil {
		return nil, err
	}
	return c.rule, nil
}

// String describes e in one line, for logs and reports: "lakeFS's rules
// only" for the zero rules.
func (e *Extended) String() string {
	if e.IsZero() {
		return "lakeFS's rules only"
	}
	var parts []string
	if e.KeepTags {
		parts = append(parts, "tagged commits kept")
	}
	for _, r := range e.Branches {
		name := strconv.Quote(r.Branch)
		if r.Branch == "" {
			name = "/" + r.Pattern + "/"
		}
		var what []string
		if r.RetentionDays != nil {
			what = append(what, fmt.Sprintf("%d days", *r.RetentionDays))
		}
		if r.KeepLast > 0 {
			what = append(what, fmt.Sprintf("last %d commits", r.KeepLast))
		}
		parts = append(parts, name+": "+strings.Join(what, ", "))
	}
	if e.StaleBranchDays > 0 {
		parts = append(parts, fmt.Sprintf("HEADs of branches stale for %d days unprotected", e.StaleBranchDays))
	}
	return strings.Join(parts, "; ")
}

// extendedJSON and branchRuleJSON are the file's form. Pointers tell a
// missing field from a zero one.
type extendedJSON struct {
	Version         *int             `json:"version"`
	KeepTags        *bool            `json:"keep_tags,omitempty"`
	StaleBranchDays int32            `json:"stale_branch_days,omitempty"`
	Branches        []branchRuleJSON `json:"branches,omitempty"`
}

type branchRuleJSON struct {
	Branch        string `json:"branch,omitempty"`
	Pattern       string `json:"pattern,omitempty"`
	RetentionDays *int32 `json:"retention_days,omitempty"`
	KeepLast      int32  `json:"keep_last,omitempty"`
}

// MarshalJSON encodes e as the extended rules file:
// {"version":1,"keep_tags":true,"stale_branch_days":D,"branches":[{"branch":"main","keep_last":10},{"pattern":"tmp-.*","retention_days":1}]},
// keep_tags always written, the others when set. Invalid rules are an error
// wrapping [ErrInvalidRules].
func (e Extended) MarshalJSON() ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	v := ExtendedVersion
	out := extendedJSON{Version: &v, KeepTags: &e.KeepTags, StaleBranchDays: e.StaleBranchDays}
	for _, r := range e.Branches {
		out.Branches = append(out.Branches, branchRuleJSON(r))
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes the extended rules file. version is required and
// must be [ExtendedVersion]; keep_tags defaults to true; an unknown field,
// input larger than [MaxExtendedSize] or not valid UTF-8, a second JSON
// value, or rules that fail [Extended.Validate] are an error wrapping
// [ErrInvalidRules]. On error e is left unchanged.
func (e *Extended) UnmarshalJSON(b []byte) error {
	if len(b) > MaxExtendedSize {
		return fmt.Errorf("%w: extended rules: %d bytes, more than %d", ErrInvalidRules, len(b), MaxExtendedSize)
	}
	// encoding/json replaces invalid UTF-8 with U+FFFD, which would turn a
	// rule for one branch into a rule for another.
	if !utf8.Valid(b) {
		return fmt.Errorf("%w: extended rules: not valid UTF-8", ErrInvalidRules)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var in extendedJSON
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("%w: extended rules: %w", ErrInvalidRules, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: extended rules: more after the JSON object", ErrInvalidRules)
	}
	switch {
	case in.Version == nil:
		return fmt.Errorf("%w: extended rules: version is required", ErrInvalidRules)
	case *in.Version != ExtendedVersion:
		return fmt.Errorf("%w: extended rules: version %d, this lakegc reads version %d", ErrInvalidRules, *in.Version, ExtendedVersion)
	case len(in.Branches) > MaxBranchRules:
		return fmt.Errorf("%w: extended rules: %d branch rules, more than %d", ErrInvalidRules, len(in.Branches), MaxBranchRules)
	}
	out := Extended{KeepTags: in.KeepTags == nil || *in.KeepTags, StaleBranchDays: in.StaleBranchDays}
	for _, r := range in.Branches {
		out.Branches = append(out.Branches, BranchRule(r))
	}
	if err := out.Validate(); err != nil {
		return err
	}
	*e = out
	return nil
}
