package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// UncommittedPage is the answer to one prepare-uncommitted call: lakeFS
// exported the staged objects of some branches to one Parquet file.
type UncommittedPage struct {
	// RunID identifies the export; every page of one export shares it.
	RunID string
	// Location is the full URI of the run's folder of Parquet files, e.g.
	// "s3://bucket/repo1/_lakefs/retention/gc/uncommitted/<RunID>/uncommitted/".
	// lakeFS names it only when this call wrote a file: it is empty when the
	// branches this call covered had nothing staged.
	Location string
	// ContinuationToken is passed to the next call; empty when the export is
	// complete.
	ContinuationToken string
}

type uncommittedJSON struct {
	RunID             string  `json:"run_id"`
	Location          string  `json:"gc_uncommitted_location"`
	ContinuationToken *string `json:"continuation_token"`
}

// PrepareUncommitted makes one call of lakeFS's uncommitted export (POST
// /repositories/{repo}/gc/prepare_uncommited — lakeFS's spelling): the first
// with an empty token, the next ones with the previous page's
// ContinuationToken.
//
// It is retried like a read: a repeated first call starts another run whose
// pages are as complete as the first's, and a repeated later call exports
// the same branches again into one more file of the same run — duplicates,
// which only keep more.
func (c *Client) PrepareUncommitted(ctx context.Context, repo, token string) (*UncommittedPage, error) {
	const op = "prepare uncommitted"
	if repo == "" {
		return nil, invalidInput(op, "empty repository name")
	}
	req := struct {
		ContinuationToken string `json:"continuation_token,omitempty"`
	}{token}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, &callError{op: op, sentinel: ErrInvalidInput, cause: err}
	}
	body, err = c.call(ctx, request{
		op: op, method: http.MethodPost, path: repoPath(repo) + "/gc/prepare_uncommited", body: body,
		policy: retryIdempotent, timeout: c.prepTimeout,
	}, http.StatusCreated)
	if err != nil {
		return nil, err
	}
	p, err := decodeUncommitted(body)
	if err != nil {
		return nil, malformed(op, err)
	}
	return p, nil
}

func decodeUncommitted(b []byte) (*UncommittedPage, error) {
	var j uncommittedJSON
	if err := decodeOne(b, &j); err != nil {
		return nil, err
	}
	if j.RunID == "" {
		return nil, missing("run_id")
	}
	p := &UncommittedPage{RunID: j.RunID, Location: j.Location}
	if j.ContinuationToken != nil {
		p.ContinuationToken = *j.ContinuationToken
	}
	return p, nil
}

// UncommittedExport is a complete uncommitted export.
type UncommittedExport struct {
	// RunID identifies the export.
	RunID string
	// Location is the run's folder, as lakeFS named it; empty when no call
	// wrote a file, that is when no branch had anything staged.
	Location string
	// Calls is the number of prepare-uncommitted calls made.
	Calls int
	// Files is the number of calls that wrote a file.
	Files int
}

// PrepareAllUncommitted calls PrepareUncommitted until lakeFS returns no
// continuation token. It fails when lakeFS changes the run ID or the location
// between pages, or hands back a token it was given before, the last one
// included (which would loop for ever).
func (c *Client) PrepareAllUncommitted(ctx context.Context, repo string) (*UncommittedExport, error) {
	const op = "prepare uncommitted"
	var (
		exp   UncommittedExport
		token string
		seen  = map[string]bool{}
	)
	for {
		p, err := c.PrepareUncommitted(ctx, repo, token)
		if err != nil {
			return nil, err
		}
		exp.Calls++
		if err := exp.add(p); err != nil {
			return nil, malformed(op, fmt.Errorf("call %d: %w", exp.Calls, err))
		}
		if p.ContinuationToken == "" {
			return &exp, nil
		}
		seen[token] = true
		if seen[p.ContinuationToken] {
			return nil, malformed(op, fmt.Errorf("call %d: lakeFS returned a continuation token it was given before", exp.Calls))
		}
		token = p.ContinuationToken
	}
}

// add folds a page into the export.
func (e *UncommittedExport) add(p *UncommittedPage) error {
	switch {
	case e.RunID == "":
		e.RunID = p.RunID
	case p.RunID != e.RunID:
		return fmt.Errorf("run ID changed from %q to %q", e.RunID, p.RunID)
	}
	if p.Location != "" {
		if e.Location != "" && p.Location != e.Location {
			return fmt.Errorf("location changed from %q to %q", e.Location, p.Location)
		}
		e.Location = p.Location
		e.Files++
	}
	return nil
}
