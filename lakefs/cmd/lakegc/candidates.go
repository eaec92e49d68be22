package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
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
where the next page starts.

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
}

// candidatesCommand is "lakegc candidates".
func candidatesCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var out bytes.Buffer
	c := &common{name: "lakegc candidates"}
	fs := newFlagSet(c.name, candidatesHead, &out)
	c.register(fs)
	runID := fs.String("run", "", "the run `ID`, as lakegc gc printed it (required)")
	offset := fs.Int("offset", 0, "skip this many candidates first")
	limit := fs.Int("limit", 1000, "list at most this many; 0: all")
	rest, code := c.parse(fs, &out, args, getenv, stdout, stderr)
	if code >= 0 {
		return code
	}
	switch {
	case len(rest) > 0:
		return c.usage(stderr, "unexpected argument %q", rest[0])
	case *runID == "":
		return c.usage(stderr, "--run is required: the run ID a dry run of lakegc gc printed")
	case *offset < 0 || *limit < 0:
		return c.usage(stderr, "--offset and --limit must not be negative")
	}
	client, err := c.client()
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	o := c.hostOptions(newLogger(stderr, c.logLevel, c.quiet))
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
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ADDRESS\tSIZE\tMODIFIED\tSLICE\tWHY")
	for _, cand := range page.Candidates {
		mod, size := "gone", fmt.Sprint(cand.Size)
		if !cand.Gone {
			mod = cand.ModTime.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cand.Address, size, mod, cand.Slice, cand.Reason)
	}
	_ = tw.Flush()
	fmt.Fprintf(stdout, "%d candidates from %d, %d bytes", len(page.Candidates), page.Offset, page.Bytes)
	if page.NextOffset > 0 {
		fmt.Fprintf(stdout, "; more from --offset %d", page.NextOffset)
	}
	fmt.Fprintln(stdout)
	return exitOK
}
