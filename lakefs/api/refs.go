package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"time"
)

// Ref is a named reference of a repository, a branch or a tag, and the
// commit it points to.
type Ref struct {
	ID, CommitID string
}

// ListTags yields every tag of repo with its commit, page by page (GET
// /repositories/{repo}/tags). It ends with an error if any page fails.
func (c *Client) ListTags(ctx context.Context, repo string) iter.Seq2[Ref, error] {
	return c.listRefs(ctx, "list tags", repo, "/tags", nil)
}

// ListBranchHeads yields every branch of repo with its HEAD commit, hidden
// branches too when showHidden is set, page by page (GET
// /repositories/{repo}/branches). It ends with an error if any page fails.
func (c *Client) ListBranchHeads(ctx context.Context, repo string, showHidden bool) iter.Seq2[Ref, error] {
	q := url.Values{}
	if showHidden {
		q.Set("show_hidden", "true")
	}
	return c.listRefs(ctx, "list branch heads", repo, "/branches", q)
}

func (c *Client) listRefs(ctx context.Context, op, repo, path string, q url.Values) iter.Seq2[Ref, error] {
	return func(yield func(Ref, error) bool) {
		if repo == "" {
			yield(Ref{}, invalidInput(op, "empty repository name"))
			return
		}
		for ref, err := range listDecoded(c, ctx, op, repoPath(repo)+path, q, decodeRef) {
			if !yield(ref, err) || err != nil {
				return
			}
		}
	}
}

// decodeRef decodes a ref of a listing; both its fields are required.
func decodeRef(b []byte) (Ref, error) {
	var j struct {
		ID       string `json:"id"`
		CommitID string `json:"commit_id"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return Ref{}, err
	}
	switch {
	case j.ID == "":
		return Ref{}, missing("id")
	case j.CommitID == "":
		return Ref{}, fmt.Errorf("ref %q: %w", j.ID, missing("commit_id"))
	}
	return Ref{ID: j.ID, CommitID: j.CommitID}, nil
}

// Commit is what lakeFS's API says of a commit.
type Commit struct {
	ID      string
	Parents []string
	// CreationDate is the commit's time, which the API gives in whole
	// seconds (lakeFS keeps it to the microsecond).
	CreationDate time.Time
	// MetaRangeID is empty for a repository's first commit.
	MetaRangeID string
	// Version is lakeFS's commit version: before version 1 a merge listed
	// its main parent last.
	Version int
}

type commitJSON struct {
	ID           string    `json:"id"`
	Parents      *[]string `json:"parents"`
	CreationDate *int64    `json:"creation_date"`
	MetaRangeID  *string   `json:"meta_range_id"`
	Version      *int      `json:"version"`
}

// GetCommit returns the commit id of repo (GET
// /repositories/{repo}/commits/{id}); a missing one is an error wrapping
// ErrNotFound.
func (c *Client) GetCommit(ctx context.Context, repo, id string) (*Commit, error) {
	const op = "get commit"
	if repo == "" || id == "" {
		return nil, invalidInput(op, "empty repository name or commit ID")
	}
	body, err := c.call(ctx, request{
		op: op, method: http.MethodGet, path: repoPath(repo) + "/commits/" + url.PathEscape(id),
		policy: retryIdempotent, timeout: c.timeout,
	}, http.StatusOK)
	if err != nil {
		return nil, err
	}
	cm, err := decodeCommit(body)
	if err == nil && cm.ID != id {
		err = fmt.Errorf("asked for commit %q, got %q", id, cm.ID)
	}
	if err != nil {
		return nil, malformed(op, err)
	}
	return cm, nil
}

// decodeCommit reads a commit. id, parents, creation_date and
// meta_range_id are required, and so is version for a merge, whose main
// parent it decides: a GC must not guess which history is a merge's own.
func decodeCommit(b []byte) (*Commit, error) {
	var j commitJSON
	if err := decodeOne(b, &j); err != nil {
		return nil, err
	}
	switch {
	case j.ID == "":
		return nil, missing("id")
	case j.Parents == nil:
		return nil, missing("parents")
	case j.CreationDate == nil:
		return nil, missing("creation_date")
	case j.MetaRangeID == nil:
		return nil, missing("meta_range_id")
	case j.Version == nil && len(*j.Parents) > 1:
		return nil, missing("version of a merge")
	case j.Version != nil && (*j.Version < 0 || *j.Version > 1):
		return nil, fmt.Errorf("version %d, not 0 or 1", *j.Version)
	}
	for _, p := range *j.Parents {
		if p == "" {
			return nil, errors.New("an empty parent ID")
		}
	}
	cm := &Commit{ID: j.ID, Parents: *j.Parents, CreationDate: time.Unix(*j.CreationDate, 0).UTC(), MetaRangeID: *j.MetaRangeID, Version: 1}
	if j.Version != nil {
		cm.Version = *j.Version
	}
	return cm, nil
}
