package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"

	"github.com/lakegc/lakegc/lakefs/host"
)

func init() { commands["sweep"] = sweepCommand }

const sweepHead = `
Usage: lakegc sweep --repo NAME --run ID [--force] [--quarantine] [--delete-concurrency N] [--delete-rate R] [--json]

Deletes exactly the candidates of run ID, a dry run of "lakegc gc": what
"lakegc candidates --run ID" lists, and nothing else. A run that a later run
superseded is refused (exit 4): an object it found garbage may have become
live again since (a branch reset to an old commit, a copy of an old
address), which only the later run saw; sweep the latest run, or --force.
Sweeping a run twice is safe. Give the --include-prefix flags the run had:
a candidate neither of lakeFS's shapes nor under one is refused. With
--quarantine each candidate is moved into the run's quarantine instead
("lakegc restore" puts it back, "lakegc purge" deletes old quarantines).
The sweep holds the repository's lease, as gc does (--lease-wait, --no-lease).

Exit codes: 0 every candidate deleted (or gone already), 1 failed or some
deletes failed, 2 usage, 3 lakeFS error, 4 refused: the run is superseded,
unknown or failed, 5 another run holds the repository's lease.
`

// sweepCommand is "lakegc sweep".
func sweepCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var out bytes.Buffer
	c := &common{name: "lakegc sweep"}
	fs := newFlagSet(c.name, sweepHead, &out)
	c.register(fs)
	runID := fs.String("run", "", "the run `ID` to sweep, as lakegc gc printed it (required)")
	force := fs.Bool("force", false, "sweep the run although a later run superseded it")
	var d deleteFlags
	d.register(fs)
	var quarantine bool
	addQuarantineFlag(fs, &quarantine)
	var lf leaseFlags
	addLeaseFlags(fs, &lf)
	if code := c.parseRun(fs, &out, runID, args, getenv, stdout, stderr); code >= 0 {
		return code
	}
	if err := d.check(); err != nil {
		return c.usage(stderr, "%v", err)
	}
	client, err := c.client()
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	bar := newProgress(stderr, c.progress)
	defer bar.finish()
	o := c.hostOptions(newLogger(bar, c.logLevel, c.quiet))
	o.DeleteConcurrency, o.DeleteRate, o.SweepSuperseded = d.concurrency, d.rate, *force
	o.Quarantine, o.Lease = quarantine, lf.options()
	o.Progress = bar.report
	res, err := host.SweepRun(ctx, client, nil, o, *runID)
	bar.finish()
	if err != nil {
		return c.fail(ctx, stdout, stderr, err)
	}
	rep := res.Report
	s := rep.Sweep
	if c.json {
		if !printJSON(stdout, stderr, nil, rep, &res.Stats, nil) {
			return exitFailed
		}
	} else {
		fmt.Fprintf(stdout, "run %s: %d candidates; %d deleted, %d already gone, %d failed, %d refused; report under %s\n",
			rep.RunID, rep.Mark.Summary.NumDeletedObjects, s.Deleted, s.AlreadyGone, s.Failed, s.Refused, s.Report)
	}
	if s.Failed+s.Refused > 0 {
		fmt.Fprintf(stderr, "%s: %d deletes failed and %d were refused; see %s (sweeping again retries the failed ones)\n", c.name, s.Failed, s.Refused, s.Report)
		return exitFailed
	}
	return exitOK
}

// deleteFlags are the sweep's delete concurrency and rate.
type deleteFlags struct {
	concurrency int
	rate        float64
}

func (d *deleteFlags) register(fs interface {
	IntVar(*int, string, int, string)
	Float64Var(*float64, string, float64, string)
}) {
	fs.IntVar(&d.concurrency, "delete-concurrency", 0, "delete calls in flight at once, fixed (a DeleteObjects of up to 1000 keys on S3); 0: a window that follows the store, 1 to 64")
	fs.Float64Var(&d.rate, "delete-rate", 0, "at most this many objects deleted per second, retries included; 0: no cap")
}

func (d *deleteFlags) check() error {
	switch {
	case d.concurrency < 0 || d.concurrency > host.MaxConcurrency:
		return fmt.Errorf("--delete-concurrency %d is not between 0 and %d", d.concurrency, host.MaxConcurrency)
	case d.rate < 0 || math.IsNaN(d.rate) || math.IsInf(d.rate, 0):
		return fmt.Errorf("--delete-rate %v is not a positive rate", d.rate)
	}
	return nil
}
