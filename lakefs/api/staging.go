package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
)

// pageSize is the number of entries a listing asks lakeFS for per page.
const pageSize = 1000

// maxPages bounds a listing, so that a server that always answers has_more
// cannot loop a caller for ever: 10⁹ entries at pageSize.
const maxPages = 1_000_000

// ListBranches yields the name of every branch of repo, with hidden branches
// when showHidden is set (lakeFS lists them only then), page by page (GET
// /repositories/{repo}/branches). It ends with an error if any page fails.
func (c *Client) ListBranches(ctx context.Context, repo string, showHidden bool) iter.Seq2[string, error] {
	const op = "list branches"
	q := url.Values{}
	if showHidden {
		q.Set("show_hidden", "true")
	}
	return func(yield func(string, error) bool) {
		if repo == "" {
			yield("", invalidInput(op, "empty repository name"))
			return
		}
		for id, err := range listDecoded(c, ctx, op, repoPath(repo)+"/branches", q, decodeBranch) {
			if !yield(id, err) || err != nil {
				return
			}
		}
	}
}

// Change is one uncommitted change of a branch: its staging area against
// its HEAD.
type Change struct {
	// Type is lakeFS's diff type: "added", "removed", "changed", "conflict"
	// or "prefix_changed".
	Type string
	// Path is the object's path in the branch.
	Path string
	// PathType is "object" or "common_prefix".
	PathType string
}

// BranchChanges yields the uncommitted changes of branch, page by page (GET
// /repositories/{repo}/branches/{branch}/diff): lakeFS lists only what is
// staged, so the work is bounded by the staged entries, not by the branch.
// It ends with an error if any page fails.
func (c *Client) BranchChanges(ctx context.Context, repo, branch string) iter.Seq2[Change, error] {
	const op = "list branch changes"
	return func(yield func(Change, error) bool) {
		if repo == "" || branch == "" {
			yield(Change{}, invalidInput(op, "empty repository or branch name"))
			return
		}
		path := repoPath(repo) + "/branches/" + url.PathEscape(branch) + "/diff"
		for ch, err := range listDecoded(c, ctx, op, path, nil, decodeChange) {
			if !yield(ch, err) || err != nil {
				return
			}
		}
	}
}

// ObjectStats is what lakeFS says of one object at a ref.
type ObjectStats struct {
	Path string
	// PhysicalAddress is where the object's data is: a full URI, with a
	// linked object's signature (",<signature>") when it has one.
	PhysicalAddress string
}

// StatObject returns the stats of path at ref, a branch (its staged
// version) or a commit (GET /repositories/{repo}/refs/{ref}/objects/stat).
// A path that ref does not hold is ErrNotFound.
func (c *Client) StatObject(ctx context.Context, repo, ref, path string) (*ObjectStats, error) {
	const op = "stat object"
	if repo == "" || ref == "" || path == "" {
		return nil, invalidInput(op, "empty repository, ref or path")
	}
	body, err := c.call(ctx, request{
		op: op, method: http.MethodGet, path: repoPath(repo) + "/refs/" + url.PathEscape(ref) + "/objects/stat",
		query: url.Values{"path": {path}}, policy: retryIdempotent, timeout: c.timeout,
	}, http.StatusOK)
	if err != nil {
		return nil, err
	}
	st, err := decodeObjectStats(body)
	if err != nil {
		return nil, malformed(op, err)
	}
	return st, nil
}

// listDecoded yields the results of the paginated listing at path, each
// decoded by decode: a result it cannot decode ends the listing with a
// malformed-answer error of op.
func listDecoded[T any](c *Client, ctx context.Context, op, path string, q url.Values, decode func([]byte) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for r, err := range c.paginate(ctx, op, path, q) {
			var v T
			if err == nil {
				if v, err = decode(r); err != nil {
					err = malformed(op, err)
				}
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// paginate yields the raw results of a paginated listing at path.
func (c *Client) paginate(ctx context.Context, op, path string, q url.Values) iter.Seq2[json.RawMessage, error] {
	return func(yield func(json.RawMessage, error) bool) {
		query := url.Values{}
		for k, v := range q {
			query[k] = v
		}
		query.Set("amount", strconv.Itoa(pageSize))
		after := ""
		for range maxPages {
			if after != "" {
				query.Set("after", after)
			}
			body, err := c.call(ctx, request{op: op, method: http.MethodGet, path: path, query: query,
				policy: retryIdempotent, timeout: c.timeout}, http.StatusOK)
			if err != nil {
				yield(nil, err)
				return
			}
			results, next, err := decodePage(body, after)
			if err != nil {
				yield(nil, malformed(op, err))
				return
			}
			for _, r := range results {
				if !yield(r, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			after = next
		}
		yield(nil, malformed(op, fmt.Errorf("more than %d pages", maxPages)))
	}
}

// decodePage decodes a page of a listing asked for with after: its results,
// and the offset of the next page, empty after the last. A page that says
// there is more without an offset past after is an error: it would end the
// listing early or loop it.
func decodePage(b []byte, after string) (results []json.RawMessage, next string, err error) {
	var page struct {
		Pagination *struct {
			HasMore    *bool  `json:"has_more"`
			NextOffset string `json:"next_offset"`
		} `json:"pagination"`
		Results *json.RawMessage `json:"results"`
	}
	if err := decodeOne(b, &page); err != nil {
		return nil, "", err
	}
	switch p := page.Pagination; {
	case p == nil || p.HasMore == nil:
		return nil, "", missing("pagination")
	case page.Results == nil:
		return nil, "", missing("results")
	case *p.HasMore && (p.NextOffset == "" || p.NextOffset == after):
		return nil, "", errors.New("has_more without a new next_offset")
	case *p.HasMore:
		next = p.NextOffset
	}
	if err := json.Unmarshal(*page.Results, &results); err != nil {
		return nil, "", err
	}
	return results, next, nil
}

// decodeBranch decodes a branch of a branch listing: its name.
func decodeBranch(b []byte) (string, error) {
	var j struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return "", err
	}
	if j.ID == "" {
		return "", missing("id")
	}
	return j.ID, nil
}

// decodeChange decodes a change of a diff listing.
func decodeChange(b []byte) (Change, error) {
	var j struct {
		Type     string `json:"type"`
		Path     string `json:"path"`
		PathType string `json:"path_type"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return Change{}, err
	}
	if j.Type == "" || j.Path == "" {
		return Change{}, missing("type or path")
	}
	return Change{Type: j.Type, Path: j.Path, PathType: j.PathType}, nil
}

// decodeObjectStats decodes an object's stats.
func decodeObjectStats(b []byte) (*ObjectStats, error) {
	var j struct {
		Path            string `json:"path"`
		PhysicalAddress string `json:"physical_address"`
	}
	if err := decodeOne(b, &j); err != nil {
		return nil, err
	}
	if j.PhysicalAddress == "" {
		return nil, missing("physical_address")
	}
	return &ObjectStats{Path: j.Path, PhysicalAddress: j.PhysicalAddress}, nil
}
