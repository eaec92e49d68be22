package host

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/lakegc/lakegc/retention"
)

// DefaultExtended are the extended rules Collect applies when the
// repository has no extended rules file: tagged commits are kept, a
// difference from lakeFS towards keeping.
func DefaultExtended() *retention.Extended { return &retention.Extended{KeepTags: true} }

// RulesStats say which rules a run of Collect applied (Stats.Rules, the
// command's report's "host"."rules").
type RulesStats struct {
	// LakeFS are lakeFS's own rules, which its prepare_commits applied.
	LakeFS string `json:"lakefs"`
	// Extended are lakegc's extended rules; ExtendedKey is their file, and
	// ExtendedFound says it exists (else DefaultExtended: tags kept).
	Extended      *retention.Extended `json:"extended,omitempty"`
	ExtendedKey   string              `json:"extended_key"`
	ExtendedFound bool                `json:"extended_found"`
	// Added is how many commits the extended rules kept beyond lakeFS's.
	Added int `json:"added"`
	// CommitsRead counts the commits read through the API for them.
	CommitsRead int64 `json:"commits_read"`
	// NotApplied lists what of the extended rules Collect cannot
	// apply: lakeFS's prepare_commits decides its own set, which Collect
	// only adds to.
	NotApplied []string `json:"not_applied,omitempty"`
}

// String is the line the summary prints.
func (r *RulesStats) String() string {
	ext := "lakegc's: " + r.Extended.String()
	if !r.ExtendedFound {
		ext += " (no " + r.ExtendedKey + ": the command's default)"
	}
	s := fmt.Sprintf("rules: lakeFS's: %s; %s; %d commits kept beyond lakeFS's", r.LakeFS, ext, r.Added)
	if len(r.NotApplied) > 0 {
		s += "; not applied here: " + strings.Join(r.NotApplied, ", ")
	}
	return s
}

// extendActive adds to lakeFS's kept commits those that lakegc's extended
// rules keep (retention.ActiveCommitsExtended over lakeFS's API): the
// tagged commits and the commits of the branches a rule names, with their
// ancestors as the rules say. It only ever adds: lakeFS's prepare_commits
// has decided its own set, so a rule that would keep less than lakeFS — the
// stale-branch rule, a retention_days below lakeFS's — is reported as not
// applied. It walks only from tags and from the HEADs of branches a rule
// matches, one GetCommit per commit of their main ancestry.
func (h *lakeFSHost) extendActive(ctx context.Context, now time.Time, active []retention.ActiveCommit) ([]retention.ActiveCommit, error) {
	st := &RulesStats{}
	h.rules = st
	store := retention.NewExtendedStore(h.bucket, retention.WithStoragePrefix(storagePrefix))
	st.ExtendedKey = store.Key()
	ext, err := store.Get(ctx)
	switch {
	case errors.Is(err, retention.ErrNotFound):
		ext = DefaultExtended()
	case err != nil:
		return nil, err
	default:
		st.ExtendedFound = true
	}
	st.Extended = ext
	lr, err := h.client.GetGCRules(ctx, h.repo)
	if err != nil {
		return nil, lakeFSError(err)
	}
	rules := &retention.Rules{DefaultRetentionDays: int32(lr.DefaultRetentionDays), BranchRetentionDays: map[string]int32{}}
	st.LakeFS = fmt.Sprintf("%d days by default", lr.DefaultRetentionDays)
	for _, b := range lr.Branches {
		rules.BranchRetentionDays[b.BranchID] = int32(b.RetentionDays)
		st.LakeFS += fmt.Sprintf(", %q %d days", b.BranchID, b.RetentionDays)
	}
	applied := *ext
	if applied.StaleBranchDays > 0 {
		st.NotApplied = append(st.NotApplied, fmt.Sprintf("stale_branch_days %d (lakeFS keeps every HEAD)", applied.StaleBranchDays))
		applied.StaleBranchDays = 0
	}
	if applied.IsZero() {
		return active, nil
	}
	match, err := applied.Matcher()
	if err != nil {
		return nil, err
	}
	// The starting points: the tags, and the HEADs of the branches a rule
	// matches (lakeFS decided the others). Without any, nothing is read.
	src := &apiCommits{lakeFSHost: h}
	if applied.KeepTags {
		for t, err := range h.Tags(ctx) {
			if err != nil {
				return nil, err
			}
			src.tags = append(src.tags, t)
		}
	}
	var heads []retention.Branch
	if len(applied.Branches) > 0 {
		for b, err := range h.client.ListBranchHeads(ctx, h.repo, true) {
			if err != nil {
				return nil, lakeFSError(err)
			}
			if match(b.ID) != nil {
				heads = append(heads, retention.Branch{ID: b.ID, CommitID: b.CommitID})
			}
		}
	}
	for _, r := range applied.Branches {
		if r.RetentionDays != nil && *r.RetentionDays < rules.DefaultRetentionDays {
			st.NotApplied = append(st.NotApplied, fmt.Sprintf("retention_days %d below lakeFS's default (lakeFS keeps more)", *r.RetentionDays))
		}
	}
	if len(src.tags) == 0 && len(heads) == 0 {
		return active, nil
	}
	more, err := retention.ActiveCommitsExtended(ctx, func(yield func(retention.Branch, error) bool) {
		for _, b := range heads {
			if !yield(b, nil) {
				return
			}
		}
	}, src, rules, &applied, now)
	st.CommitsRead = src.read
	if err != nil {
		return nil, fmt.Errorf("extended rules: %w", err)
	}
	kept := make(map[string]bool, len(active))
	for _, a := range active {
		kept[a.CommitID] = true
	}
	for _, m := range more {
		if !kept[m.CommitID] {
			active = append(active, m)
			st.Added++
		}
	}
	h.logger.Info("lakegc: extended rules", "rules", ext.String(), "added", st.Added, "commits_read", st.CommitsRead)
	return active, nil
}

// apiCommits is the repository's commits as the extended rules read them,
// through lakeFS's API: List yields none (the API lists no commit of a
// deleted branch; lakeFS's own rules judge those), Get reads one commit,
// Tags yields the tags read through lakeFSHost.Tags.
type apiCommits struct {
	*lakeFSHost
	tags []retention.Tag // read once, by extendActive
	read int64
}

// Tags yields the tags extendActive read.
func (s *apiCommits) Tags(ctx context.Context) iter.Seq2[retention.Tag, error] {
	return func(yield func(retention.Tag, error) bool) {
		for _, t := range s.tags {
			if !yield(t, nil) {
				return
			}
		}
	}
}

// List yields nothing: Get is asked for every commit.
func (s *apiCommits) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	return func(func(retention.Commit, error) bool) {}
}

// Get reads a commit through the API. Its date, which the API gives to the
// second, is taken as the last instant of that second: a commit the rules
// keep by its date is then kept whatever its fraction of a second was.
func (s *apiCommits) Get(ctx context.Context, id string) (retention.Commit, error) {
	c, err := s.client.GetCommit(ctx, s.repo, id)
	if err != nil {
		return retention.Commit{}, lakeFSError(err)
	}
	s.read++
	return retention.Commit{ID: c.ID, Parents: c.Parents, MetaRangeID: c.MetaRangeID, Version: c.Version,
		CreationDate: c.CreationDate.Add(time.Second - time.Nanosecond)}, nil
}

var _ retention.Tags = (*apiCommits)(nil)
