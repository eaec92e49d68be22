package api

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Repository is what lakeFS says of a repository.
type Repository struct {
	// ID is the repository's name.
	ID string
	// StorageNamespace is the URI under which lakeFS keeps the repository's
	// data and metadata, e.g. "s3://bucket/repo1" or, on the local
	// blockstore, "local://repo1".
	StorageNamespace string
	// DefaultBranch is the branch a new repository starts with, e.g. "main".
	DefaultBranch string
	// StorageID names the underlying store when lakeFS has several; empty otherwise.
	StorageID string
	// CreationDate is when the repository was created.
	CreationDate time.Time
	// ReadOnly is true for a read-only repository; lakeFS refuses to prepare
	// the uncommitted export of one.
	ReadOnly bool
}

type repositoryJSON struct {
	ID               string  `json:"id"`
	CreationDate     *int64  `json:"creation_date"`
	DefaultBranch    string  `json:"default_branch"`
	StorageID        *string `json:"storage_id"`
	StorageNamespace string  `json:"storage_namespace"`
	ReadOnly         *bool   `json:"read_only"`
}

// GetRepository returns the repository named repo (GET /repositories/{repo}).
func (c *Client) GetRepository(ctx context.Context, repo string) (*Repository, error) {
	const op = "get repository"
	if repo == "" {
		return nil, invalidInput(op, "empty repository name")
	}
	body, err := c.call(ctx, request{
		op: op, method: http.MethodGet, path: repoPath(repo),
		policy: retryIdempotent, timeout: c.timeout,
	}, http.StatusOK)
	if err != nil {
		return nil, err
	}
	r, err := decodeRepository(body)
	if err != nil {
		return nil, malformed(op, err)
	}
	return r, nil
}

func decodeRepository(b []byte) (*Repository, error) {
	var j repositoryJSON
	if err := decodeOne(b, &j); err != nil {
		return nil, err
	}
	switch {
	case j.ID == "":
		return nil, missing("id")
	case j.StorageNamespace == "":
		return nil, missing("storage_namespace")
	case j.DefaultBranch == "":
		return nil, missing("default_branch")
	case j.CreationDate == nil:
		return nil, missing("creation_date")
	}
	r := &Repository{
		ID:               j.ID,
		StorageNamespace: j.StorageNamespace,
		DefaultBranch:    j.DefaultBranch,
		CreationDate:     time.Unix(*j.CreationDate, 0).UTC(),
	}
	if j.StorageID != nil {
		r.StorageID = *j.StorageID
	}
	if j.ReadOnly != nil {
		r.ReadOnly = *j.ReadOnly
	}
	return r, nil
}

// repoPath is the API path of a repository, its name escaped.
func repoPath(repo string) string {
	return "/repositories/" + url.PathEscape(repo)
}
