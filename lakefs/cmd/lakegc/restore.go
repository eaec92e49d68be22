package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/lakegc/lakegc/sweep"
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
	Error        string                 `json:"error,omitempty"`
	RunID        string                 `json:"run_id"`
	Restored     int64                  `json:"restored"`
	AlreadyThere int64                  `json:"already_there"`
	Refused      []sweep.RestoreRefusal `json:"refused,omitempty"`
	Missing      []string               `json:"missing,omitempty"`
}

// restoreCmd is "lakegc restore".
func restoreCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lakegc restore", flag.ContinueOnError)
	var n nsFlags
	n.register(fs)
	var lf leaseFlags
	addLeaseFlags(fs, &lf)
	runID := fs.String("run", "", "the GC run `ID` whose quarantine to restore (required)")
	var addresses []string
	fs.Func("address", "restore only this `ADDRESS` (repeatable): a key relative to the storage namespace, or a full address in it", func(a string) error {
		addresses = append(addresses, a)
		return nil
	})
	fs.Usage = func() { fmt.Fprint(fs.Output(), restoreUsage); fs.PrintDefaults() }
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lakegc restore: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	if *runID == "" {
		return usageErr("--run is required")
	}
	if err := n.finish(getenv); err != nil {
		return usageErr("%v", err)
	}
	out := restoreOutput{RunID: *runID}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "lakegc restore: %v\n", err)
		if n.json {
			out.Error = err.Error()
			printOut(stdout, stderr, out)
		}
		return code
	}
	bucket, ns, code, err := n.open(ctx)
	if err != nil {
		return fail(code, err)
	}
	defer bucket.Close()
	ctx, release, err := lf.hold(ctx, bucket)
	if err != nil {
		return fail(leaseCode(err), err)
	}
	defer release()
	keys := make([]string, len(addresses))
	for i, a := range addresses {
		keys[i] = relativeAddress(ns, a)
	}
	res, err := sweep.Restore(ctx, bucket, *runID, keys, classifierOptions()...)
	err = lostLease(ctx, err)
	if res != nil {
		out.Restored, out.AlreadyThere, out.Refused, out.Missing = res.Restored, res.AlreadyThere, res.Refused, res.Missing
	}
	if err != nil {
		code := exitFailed
		if errors.Is(err, sweep.ErrInvalidInput) {
			code = exitUsage
		}
		return fail(code, err)
	}
	if n.json {
		if !printOut(stdout, stderr, out) {
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

// printOut prints v as indented JSON on stdout; it reports whether it could.
func printOut(stdout, stderr io.Writer, v any) bool {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "lakegc: %v\n", err)
		return false
	}
	return true
}
