package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/host"
)

func init() { commands["explain"] = explainCommand }

const explainHead = `
Usage: lakegc explain --repo NAME --run ID [--json] ADDRESS|PATH...

Says why run ID, a run of "lakegc gc", marked or kept each object: marked
(what kind of object, why garbage), or kept — outside the namespace, not of
a shape lakeFS writes (unrecognized), in another repository's folder
(walled), younger than the run's cutoff, referenced by a kept commit (named),
or staged / a copy record. An argument is an address relative to the
namespace (data/<slice>/<id>), a full address, or a lakeFS path
lakefs://<repo>/<ref>/<path>, which lakeFS resolves to its object now. It
reads the run's records and the kept commits' ranges again, one commit at a
time.

Exit codes: 0 explained, 1 failed, 2 usage, 3 lakeFS error, 4 the run is
unknown or failed.
`

// explainCommand is "lakegc explain".
func explainCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var out bytes.Buffer
	c := &common{name: "lakegc explain"}
	fs := newFlagSet(c.name, explainHead, &out)
	c.register(fs)
	runID := fs.String("run", "", "the run `ID`, as lakegc gc printed it (required)")
	rest, code := c.parse(fs, &out, args, getenv, stdout, stderr)
	if code >= 0 {
		return code
	}
	switch {
	case *runID == "":
		return c.usage(stderr, "--run is required: the run ID lakegc gc printed")
	case len(rest) == 0:
		return c.usage(stderr, "name at least one address or lakeFS path to explain")
	}
	client, err := c.client()
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	o := c.hostOptions(newLogger(stderr, c.logLevel, c.quiet))
	exps, err := host.Explain(ctx, client, nil, o, *runID, rest)
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	if c.json {
		if !writeJSON(stdout, stderr, struct {
			RunID        string               `json:"run_id"`
			Explanations []lakegc.Explanation `json:"explanations"`
		}{*runID, exps}) {
			return exitFailed
		}
		return exitOK
	}
	for _, e := range exps {
		fmt.Fprintf(stdout, "%s: %s — %s", e.Query, e.Verdict, e.Reason)
		if e.Exists {
			fmt.Fprintf(stdout, " [%d bytes, modified %s]", e.Size, e.ModTime.Format(time.RFC3339))
		} else if e.Address != "" {
			fmt.Fprint(stdout, " [not in the bucket now]")
		}
		fmt.Fprintln(stdout)
	}
	return exitOK
}
