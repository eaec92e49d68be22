package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
)

// GCRules are a repository's garbage-collection rules: how many days the
// commits of each branch are kept.
type GCRules struct {
	// DefaultRetentionDays applies to every branch without a rule of its own,
	// and to the commits of deleted branches.
	DefaultRetentionDays int
	// Branches are the per-branch rules, sorted by branch name (lakeFS keeps
	// them in a map and answers in any order). Nil when there are none.
	Branches []BranchRule
}

// BranchRule is one branch's retention.
type BranchRule struct {
	BranchID      string
	RetentionDays int
}

type gcRulesJSON struct {
	DefaultRetentionDays *int             `json:"default_retention_days"`
	Branches             []branchRuleJSON `json:"branches"`
}

type branchRuleJSON struct {
	BranchID      string `json:"branch_id"`
	RetentionDays *int   `json:"retention_days"`
}

// GetGCRules returns the repository's GC rules (GET
// /repositories/{repo}/settings/gc_rules). lakeFS answers 404 both when the
// repository does not exist and when it has no rules; either way the error
// wraps ErrNotFound (GetRepository tells the two apart).
func (c *Client) GetGCRules(ctx context.Context, repo string) (*GCRules, error) {
	const op = "get GC rules"
	if repo == "" {
		return nil, invalidInput(op, "empty repository name")
	}
	body, err := c.call(ctx, request{
		op: op, method: http.MethodGet, path: repoPath(repo) + "/settings/gc_rules",
		policy: retryIdempotent, timeout: c.timeout,
	}, http.StatusOK)
	if err != nil {
		return nil, err
	}
	rules, err := decodeGCRules(body)
	if err != nil {
		return nil, malformed(op, err)
	}
	return rules, nil
}

// SetGCRules replaces the repository's GC rules (PUT
// /repositories/{repo}/settings/gc_rules). Retention days must be
// non-negative and fit lakeFS's int32; branch names must be unique.
func (c *Client) SetGCRules(ctx context.Context, repo string, rules GCRules) error {
	const op = "set GC rules"
	if repo == "" {
		return invalidInput(op, "empty repository name")
	}
	if err := rules.validate(); err != nil {
		return &callError{op: op, sentinel: ErrInvalidInput, cause: err}
	}
	j := gcRulesJSON{DefaultRetentionDays: &rules.DefaultRetentionDays, Branches: []branchRuleJSON{}}
	for _, b := range rules.Branches {
		j.Branches = append(j.Branches, branchRuleJSON{BranchID: b.BranchID, RetentionDays: &b.RetentionDays})
	}
	body, err := json.Marshal(j)
	if err != nil {
		return &callError{op: op, sentinel: ErrInvalidInput, cause: err}
	}
	_, err = c.call(ctx, request{
		op: op, method: http.MethodPut, path: repoPath(repo) + "/settings/gc_rules", body: body,
		policy: retryIdempotent, timeout: c.timeout,
	}, http.StatusNoContent)
	return err
}

// DeleteGCRules removes the repository's GC rules (DELETE
// /repositories/{repo}/settings/gc_rules). lakeFS answers 204 also when there
// were none.
func (c *Client) DeleteGCRules(ctx context.Context, repo string) error {
	const op = "delete GC rules"
	if repo == "" {
		return invalidInput(op, "empty repository name")
	}
	_, err := c.call(ctx, request{
		op: op, method: http.MethodDelete, path: repoPath(repo) + "/settings/gc_rules",
		policy: retryIdempotent, timeout: c.timeout,
	}, http.StatusNoContent)
	return err
}

// decodeGCRules reads lakeFS's rules answer. "branches": null (what lakeFS
// sends for a repository without branch rules) reads as no branch rules; a
// missing default, a negative or oversized day count, an unnamed or a repeated
// branch is an error: a GC must not guess what a rule meant.
func decodeGCRules(b []byte) (*GCRules, error) {
	var j gcRulesJSON
	if err := decodeOne(b, &j); err != nil {
		return nil, err
	}
	if j.DefaultRetentionDays == nil {
		return nil, missing("default_retention_days")
	}
	rules := &GCRules{DefaultRetentionDays: *j.DefaultRetentionDays}
	for i, br := range j.Branches {
		if br.RetentionDays == nil {
			return nil, fmt.Errorf("branches[%d]: %w", i, missing("retention_days"))
		}
		rules.Branches = append(rules.Branches, BranchRule{BranchID: br.BranchID, RetentionDays: *br.RetentionDays})
	}
	slices.SortFunc(rules.Branches, func(a, b BranchRule) int { return strings.Compare(a.BranchID, b.BranchID) })
	if err := rules.validate(); err != nil {
		return nil, err
	}
	return rules, nil
}

func (r *GCRules) validate() error {
	if err := validDays(r.DefaultRetentionDays); err != nil {
		return fmt.Errorf("default_retention_days: %w", err)
	}
	seen := make(map[string]bool, len(r.Branches))
	for _, b := range r.Branches {
		if b.BranchID == "" {
			return errors.New("a branch rule without a branch name")
		}
		if seen[b.BranchID] {
			return fmt.Errorf("branch %q has two rules", b.BranchID)
		}
		seen[b.BranchID] = true
		if err := validDays(b.RetentionDays); err != nil {
			return fmt.Errorf("branch %q: %w", b.BranchID, err)
		}
	}
	return nil
}

func validDays(d int) error {
	if d < 0 || d > math.MaxInt32 {
		return fmt.Errorf("retention days %d out of range [0, %d]", d, math.MaxInt32)
	}
	return nil
}
