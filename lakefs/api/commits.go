package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// PrepareCommitsResult is a finished prepare-commits run: lakeFS walked the
// repository's commits, applied the GC rules, and wrote the commits report
// (CSV: commit_id, expired, metarange_id — one row per kept commit).
type PrepareCommitsResult struct {
	// RunID identifies the GC run.
	RunID string
	// CommitsLocation is the full URI of the commits report, e.g.
	// "s3://bucket/repo1/_lakefs/retention/gc/commits/run_id=<RunID>/commits.csv";
	// RelativeKey turns it into a key under the storage namespace.
	CommitsLocation string
	// AddressesLocation is the full URI of the folder where a GC client writes
	// the expired addresses, partitioned by run ID.
	AddressesLocation string
	// CommitsPresignedURL is a pre-signed URL of the report, when the
	// blockstore supports them; empty otherwise.
	CommitsPresignedURL string
	// Warning is lakeFS's error message when it answered 400 after having
	// written the report (the quirk of the local blockstore, see the package
	// documentation); empty after a clean 201.
	Warning string
}

type prepareCommitsJSON struct {
	RunID               string  `json:"run_id"`
	CommitsLocation     string  `json:"gc_commits_location"`
	AddressesLocation   string  `json:"gc_addresses_location"`
	CommitsPresignedURL *string `json:"gc_commits_presigned_url"`
}

func (j *prepareCommitsJSON) result() (*PrepareCommitsResult, error) {
	switch {
	case j.RunID == "":
		return nil, missing("run_id")
	case j.CommitsLocation == "":
		return nil, missing("gc_commits_location")
	case j.AddressesLocation == "":
		return nil, missing("gc_addresses_location")
	}
	r := &PrepareCommitsResult{RunID: j.RunID, CommitsLocation: j.CommitsLocation, AddressesLocation: j.AddressesLocation}
	if j.CommitsPresignedURL != nil {
		r.CommitsPresignedURL = *j.CommitsPresignedURL
	}
	return r, nil
}

// PrepareCommits runs lakeFS's prepare-commits synchronously (POST
// /repositories/{repo}/gc/prepare_commits) and returns where the report is.
//
// The call is not repeated once it may have reached lakeFS (see the package
// documentation). When lakeFS answers 400 with its error followed by the
// complete result — what it does when it wrote the report but could not
// pre-sign a URL to it — the result is returned with Warning set.
func (c *Client) PrepareCommits(ctx context.Context, repo string) (*PrepareCommitsResult, error) {
	const op = "prepare commits"
	if repo == "" {
		return nil, invalidInput(op, "empty repository name")
	}
	resp, err := c.send(ctx, request{
		op: op, method: http.MethodPost, path: repoPath(repo) + "/gc/prepare_commits",
		policy: retryRefusedOnly, timeout: c.prepTimeout,
	})
	if err != nil {
		return nil, err
	}
	switch resp.status {
	case http.StatusCreated:
		r, err := decodePrepareCommits(resp.body)
		if err != nil {
			return nil, malformed(op, err)
		}
		return r, nil
	case http.StatusBadRequest:
		if r, ok := decodePresignQuirk(resp.body); ok {
			return r, nil
		}
	}
	return nil, resp.statusError(op)
}

func decodePrepareCommits(b []byte) (*PrepareCommitsResult, error) {
	var j prepareCommitsJSON
	if err := decodeOne(b, &j); err != nil {
		return nil, err
	}
	return j.result()
}

// decodePresignQuirk recognises lakeFS's answer to a prepare-commits call that
// succeeded except for pre-signing the report's URL: its handler writes the
// error ({"message": …}, status 400) and then, the status being sent already,
// appends the full result. Only that exact shape is accepted — one error
// object, then one complete result, then nothing — since lakeFS writes the
// result only after the report was stored.
func decodePresignQuirk(b []byte) (*PrepareCommitsResult, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var e errorBody
	if err := dec.Decode(&e); err != nil || e.Message == nil {
		return nil, false
	}
	var j prepareCommitsJSON
	if err := dec.Decode(&j); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	r, err := j.result()
	if err != nil {
		return nil, false
	}
	r.Warning = clip(*e.Message)
	return r, true
}

// StartPrepareCommits starts lakeFS's prepare-commits as a task (POST
// /repositories/{repo}/gc/prepare_commits/async) and returns the task's ID,
// for PrepareCommitsStatus and WaitPrepareCommits. Like PrepareCommits, it is
// not repeated once it may have reached lakeFS.
func (c *Client) StartPrepareCommits(ctx context.Context, repo string) (string, error) {
	const op = "start prepare commits"
	if repo == "" {
		return "", invalidInput(op, "empty repository name")
	}
	body, err := c.call(ctx, request{
		op: op, method: http.MethodPost, path: repoPath(repo) + "/gc/prepare_commits/async",
		policy: retryRefusedOnly, timeout: c.timeout,
	}, http.StatusAccepted)
	if err != nil {
		return "", err
	}
	id, err := decodeTaskCreation(body)
	if err != nil {
		return "", malformed(op, err)
	}
	return id, nil
}

func decodeTaskCreation(b []byte) (string, error) {
	var j struct {
		ID string `json:"id"`
	}
	if err := decodeOne(b, &j); err != nil {
		return "", err
	}
	if j.ID == "" {
		return "", missing("id")
	}
	return j.ID, nil
}

// PrepareCommitsTask is the state of a prepare-commits task.
type PrepareCommitsTask struct {
	TaskID string
	// Completed is true once the task ended, with a result or an error.
	Completed bool
	// UpdateTime is when lakeFS last updated the task; zero when it did not say.
	UpdateTime time.Time
	// Result is set once the task completed without error.
	Result *PrepareCommitsResult
	// Error is lakeFS's message when the task failed.
	Error string
}

type taskStatusJSON struct {
	TaskID     string              `json:"task_id"`
	Completed  *bool               `json:"completed"`
	UpdateTime *time.Time          `json:"update_time"`
	Result     *prepareCommitsJSON `json:"result"`
	Error      *errorBody          `json:"error"`
}

// PrepareCommitsStatus returns the state of a task StartPrepareCommits started
// (GET /repositories/{repo}/gc/prepare_commits/status?id=…).
func (c *Client) PrepareCommitsStatus(ctx context.Context, repo, taskID string) (*PrepareCommitsTask, error) {
	const op = "prepare commits status"
	if repo == "" || taskID == "" {
		return nil, invalidInput(op, "empty repository name or task ID")
	}
	body, err := c.call(ctx, request{
		op: op, method: http.MethodGet, path: repoPath(repo) + "/gc/prepare_commits/status",
		query:  url.Values{"id": {taskID}},
		policy: retryIdempotent, timeout: c.timeout,
	}, http.StatusOK)
	if err != nil {
		return nil, err
	}
	t, err := decodeTaskStatus(body)
	if err != nil {
		return nil, malformed(op, err)
	}
	if t.TaskID != taskID {
		return nil, malformed(op, fmt.Errorf("asked for task %q, got %q", taskID, t.TaskID))
	}
	return t, nil
}

// decodeTaskStatus reads a task's state. A completed task has either an error
// or a complete result; anything else is malformed. A running task's partial
// result is ignored.
func decodeTaskStatus(b []byte) (*PrepareCommitsTask, error) {
	var j taskStatusJSON
	if err := decodeOne(b, &j); err != nil {
		return nil, err
	}
	if j.TaskID == "" {
		return nil, missing("task_id")
	}
	if j.Completed == nil {
		return nil, missing("completed")
	}
	t := &PrepareCommitsTask{TaskID: j.TaskID, Completed: *j.Completed}
	if j.UpdateTime != nil {
		t.UpdateTime = *j.UpdateTime
	}
	if !t.Completed {
		return t, nil
	}
	if j.Error != nil {
		if j.Error.Message == nil || *j.Error.Message == "" {
			return nil, errors.New("task failed without a message")
		}
		t.Error = clip(*j.Error.Message)
		return t, nil
	}
	if j.Result == nil {
		return nil, errors.New("completed task without result or error")
	}
	r, err := j.Result.result()
	if err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}
	t.Result = r
	return t, nil
}

// WaitPrepareCommits polls the task until it completes and returns its
// result; a failed task is an ErrTaskFailed with lakeFS's message. The
// first wait is short and each next one twice the last, up to the poll
// interval (WithPollInterval). It ends with ctx.
func (c *Client) WaitPrepareCommits(ctx context.Context, repo, taskID string) (*PrepareCommitsResult, error) {
	wait := c.firstPoll
	for {
		t, err := c.PrepareCommitsStatus(ctx, repo, taskID)
		if err != nil {
			return nil, err
		}
		if t.Completed {
			if t.Error != "" {
				return nil, &callError{op: "prepare commits task " + taskID, sentinel: ErrTaskFailed, cause: errors.New(t.Error)}
			}
			return t.Result, nil
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, &callError{op: "wait prepare commits", sentinel: ErrTransport, cause: err}
		}
		wait = min(2*wait, c.pollInterval)
	}
}

// PrepareCommitsAsync starts a prepare-commits task and waits for its result:
// StartPrepareCommits then WaitPrepareCommits. Unlike PrepareCommits it is
// bounded by ctx alone, not by a single request's timeout.
func (c *Client) PrepareCommitsAsync(ctx context.Context, repo string) (*PrepareCommitsResult, error) {
	id, err := c.StartPrepareCommits(ctx, repo)
	if err != nil {
		return nil, err
	}
	return c.WaitPrepareCommits(ctx, repo, id)
}
