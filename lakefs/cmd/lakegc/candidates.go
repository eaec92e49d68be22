package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"text/tabwriter"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/host"
)

func init() { commands["candidates"] = candidatesCommand }

const candidatesHead = `
Usage: lakegc candidates --repo NAME --run ID [--offset N] [--limit N] [--json]

Lists the candidates of run ID, a dry run of "lakegc gc": what "lakegc sweep
--run ID" deletes. Each is statted in the namespace (one request each): its
address, size, modification time, slice, and why it was marked, as far as
its key and the run tell. --offset and --limit page through them in the
order of the run's report; the last line (or "next_offset" in JSON) says
where the next page starts. --limit 0 prints every candidate as it is
statted, holding none (with --offset, the ones before it are statted too);
with --json, an "error" field says why such a listing stopped early.

Exit codes: 0 listed, 1 failed, 2 usage, 3 lakeFS error, 4 the run is
unknown or failed.
`

// candidatesPage is the JSON of "lakegc candidates".
type candidatesPage struct {
	RunID      string             `json:"run_id"`
	Offset     int                `json:"offset"`
	Candidates []lakegc.Candidate `json:"candidates"`
	// Bytes is the size of this page's candidates.
	Bytes int64 `json:"bytes"`
	// NextOffset is the offset of the next page; absent after the last.
	NextOffset int `json:"next_offset,omitempty"`
	// Error, of --limit 0 only, says why the listing stopped early.
	Error string `json:"error,omitempty"`
}

// candidatesCommand is "lakegc candidates".
func candidatesCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var out bytes.Buffer
	c := &common{name: "lakegc candidates"}
	fs := newFlagSet(c.name, candidatesHead, &out)
	c.register(fs)
	runID := fs.String("run", "", "the run `ID`, as lakegc gc printed it (required)")
	offset := fs.Int("offset", 0, "skip this many candidates first")
	limit := fs.Int("limit", 1000, "list at most this many; 0: all, printed as they are statted")
	if code := c.parseRun(fs, &out, runID, args, getenv, stdout, stderr); code >= 0 {
		return code
	}
	if *offset < 0 || *limit < 0 {
		return c.usage(stderr, "--offset and --limit must not be negative")
	}
	client, err := c.client()
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	o := c.hostOptions(newLogger(stderr, c.logLevel, c.quiet))
	if *limit == 0 {
		return c.streamCandidates(ctx, host.Candidates(ctx, client, nil, o, *runID), *runID, *offset, stdout, stderr)
	}
	page := candidatesPage{RunID: *runID, Offset: *offset}
	page.Candidates, page.NextOffset, err = host.CandidatePage(ctx, client, nil, o, *runID, *offset, *limit)
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	for _, cand := range page.Candidates {
		page.Bytes += cand.Size
	}
	if c.json {
		if !writeJSON(stdout, stderr, page) {
			return exitFailed
		}
		return exitOK
	}
	tw := newCandidateTable(stdout)
	for _, cand := range page.Candidates {
		tw.row(cand)
	}
	tw.flush()
	fmt.Fprintf(stdout, "%d candidates from %d, %d bytes", len(page.Candidates), page.Offset, page.Bytes)
	if page.NextOffset > 0 {
		fmt.Fprintf(stdout, "; more from --offset %d", page.NextOffset)
	}
	fmt.Fprintln(stdout)
	return exitOK
}

// candidateTable prints candidates as a table, aligned in blocks of
// tableBlock rows: a table of every candidate is never held whole.
type candidateTable struct {
	w    io.Writer
	tw   *tabwriter.Writer
	rows int
}

const tableBlock = 1000

func newCandidateTable(w io.Writer) *candidateTable {
	t := &candidateTable{w: w, tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	fmt.Fprintln(t.tw, "ADDRESS\tSIZE\tMODIFIED\tSLICE\tWHY")
	return t
}

func (t *candidateTable) row(cand lakegc.Candidate) {
	mod, size := "gone", fmt.Sprint(cand.Size)
	if !cand.Gone {
		mod = cand.ModTime.Format(time.RFC3339)
	}
	fmt.Fprintf(t.tw, "%s\t%s\t%s\t%s\t%s\n", cand.Address, size, mod, cand.Slice, cand.Reason)
	if t.rows++; t.rows%tableBlock == 0 {
		t.flush()
	}
}

func (t *candidateTable) flush() { _ = t.tw.Flush() }

// streamCandidates prints every candidate from offset (--limit 0) as it
// is statted, holding none but the one printed: as a table, or as the JSON
// of a candidatesPage written piece by piece, whose "error" field says why
// it stopped early (the JSON stays whole). The candidates before offset
// are statted too.
func (c *common) streamCandidates(ctx context.Context, seq iter.Seq2[lakegc.Candidate, error], runID string, offset int, stdout, stderr io.Writer) int {
	var (
		n, bytes int64
		tw       *candidateTable
		err      error
	)
	if c.json {
		head, _ := json.Marshal(runID)
		fmt.Fprintf(stdout, "{\n  \"run_id\": %s,\n  \"offset\": %d,\n  \"candidates\": [", head, offset)
	} else {
		tw = newCandidateTable(stdout)
	}
	skip := offset
	for cand, cerr := range seq {
		if cerr != nil {
			err = cerr
			break
		}
		if skip > 0 {
			skip--
			continue
		}
		if c.json {
			b, merr := json.Marshal(cand)
			if merr != nil {
				err = merr
				break
			}
			sep := ","
			if n == 0 {
				sep = ""
			}
			fmt.Fprintf(stdout, "%s\n    %s", sep, b)
		} else {
			tw.row(cand)
		}
		n++
		bytes += cand.Size
	}
	if c.json {
		fmt.Fprintf(stdout, "\n  ],\n  \"bytes\": %d", bytes)
		if err != nil {
			msg, _ := json.Marshal(err.Error())
			fmt.Fprintf(stdout, ",\n  \"error\": %s", msg)
		}
		fmt.Fprintln(stdout, "\n}")
	} else {
		tw.flush()
		fmt.Fprintf(stdout, "%d candidates from %d, %d bytes\n", n, offset, bytes)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", c.name, err)
		return exitCode(ctx, err)
	}
	return exitOK
}
