package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/lakegc/lakegc/sweep/quarantine"
)

const restoreUsage = `Usage: lakegc restore --repo NAME --run ID [--address ADDRESS]... [--json]

Puts the objects a sweep with --quarantine moved into run ID's quarantine back
at their addresses: all of them, or only those given with --address (a key
relative to the storage namespace, or a full address in it). An object already
at its place is never overwritten: when it holds the same bytes the quarantine
copy is dropped, else the object stays in the quarantine and is listed.

Exit codes (5: another lakegc run holds the repository's lease): 0 every object restored, 1 some left in the quarantine (another
object at their place, or not in it) or the restore failed, 2 usage, 3 lakeFS
error.

Flags:
`

// restoreOutput is restore's --json output.
type restoreOutput struct {
	Error        string                      `json:"error,omitempty"`
	RunID        string                      `json:"run_id"`
	Restored     int64                       `json:"restored"`
	AlreadyThere int64                       `json:"already_there"`
	Refused      []quarantine.RestoreRefusal `json:"refused,omitempty"`
	Missing      []string                    `json:"missing,omitempty"`
}

// restoreCmd is "lakegc restore".
func restoreCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	c := newNSCommand("lakegc restore", restoreUsage)
	runID := c.fs.String("run", "", "the GC run `ID` whose quarantine to restore (required)")
	var addresses []string
	c.fs.Func("address", "restore only this `ADDRESS` (repeatable): a key relative to the storage namespace, or a full address in it", func(a string) error {
		addresses = append(addresses, a)
		return nil
	})
	if code := c.parse(args, stdout, stderr); code >= 0 {
		return code
	}
	if *runID == "" {
		return c.usage(stderr, "--run is required")
	}
	if err := c.n.finish(getenv); err != nil {
		return c.usage(stderr, "%v", err)
	}
	out := &restoreOutput{RunID: *runID}
	ctx, bucket, ns, done, code, err := c.openHeld(ctx)
	if err != nil {
		return c.fail(stdout, stderr, out, code, err)
	}
	defer done()
	keys := make([]string, len(addresses))
	for i, a := range addresses {
		keys[i] = relativeAddress(ns, a)
	}
	res, err := quarantine.Restore(ctx, bucket, *runID, keys, classifierOptions()...)
	err = lostLease(ctx, err)
	if res != nil {
		out.Restored, out.AlreadyThere, out.Refused, out.Missing = res.Restored, res.AlreadyThere, res.Refused, res.Missing
	}
	if err != nil {
		return c.fail(stdout, stderr, out, sweepCode(err), err)
	}
	if c.n.json {
		if !writeJSON(stdout, stderr, out) {
			return exitFailed
		}
	} else {
		fmt.Fprintf(stdout, "run %s: %d restored, %d already at their place\n", *runID, res.Restored, res.AlreadyThere)
		for _, r := range res.Refused {
			fmt.Fprintf(stdout, "left in the quarantine: %s: %s\n", r.Address, r.Reason)
		}
		for _, m := range res.Missing {
			fmt.Fprintf(stdout, "not in the quarantine: %s\n", m)
		}
	}
	if len(res.Refused)+len(res.Missing) > 0 {
		return exitFailed
	}
	return exitOK
}

func (o *restoreOutput) setError(s string) { o.Error = s }

// relativeAddress returns address relative to the namespace when it is a
// full address in it (one of the spellings ns), else as given.
func relativeAddress(ns []string, address string) string {
	for _, n := range ns {
		if rest, ok := strings.CutPrefix(address, n+"/"); ok {
			return rest
		}
	}
	return address
}
