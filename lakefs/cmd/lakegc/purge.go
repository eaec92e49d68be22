package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/s3delete"
)

const purgeUsage = `Usage: lakegc purge --repo NAME --older-than 7d [--json]

Deletes every quarantine (of sweeps run with --quarantine) started, and last
swept into, more than --older-than ago: its objects, then its records. A
quarantine whose start is unknown is kept. A purge stopped midway is finished by the next.

Exit codes (5: another lakegc run holds the repository's lease): 0 done, 1 the purge failed, 2 usage, 3 lakeFS error.

Flags:
`

// purgeOutput is purge's --json output.
type purgeOutput struct {
	Error  string            `json:"error,omitempty"`
	Purged []sweep.PurgedRun `json:"purged"`
	Kept   []string          `json:"kept"`
	Bytes  int64             `json:"bytes"`
}

// purgeCmd is "lakegc purge".
func purgeCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lakegc purge", flag.ContinueOnError)
	var n nsFlags
	n.register(fs)
	var lf leaseFlags
	addLeaseFlags(fs, &lf)
	olderThan := fs.String("older-than", "", "purge the quarantines started and last swept into more than this `AGE` ago, such as 7d or 36h (required)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), purgeUsage); fs.PrintDefaults() }
	if code := parseFlags(fs, args, stdout, stderr); code >= 0 {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "lakegc purge: "+format+"\n", a...)
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	if *olderThan == "" {
		return usageErr("--older-than is required")
	}
	age, err := parseAge(*olderThan)
	if err != nil {
		return usageErr("--older-than: %v", err)
	}
	if err := n.finish(getenv); err != nil {
		return usageErr("%v", err)
	}
	opts := classifierOptions()
	if v := getenv(envNow); v != "" {
		now, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return usageErr("%s: %v", envNow, err)
		}
		opts = append(opts, sweep.WithClock(func() time.Time { return now }))
	}
	out := purgeOutput{Purged: []sweep.PurgedRun{}, Kept: []string{}}
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "lakegc purge: %v\n", err)
		if n.json {
			out.Error = err.Error()
			printOut(stdout, stderr, out)
		}
		return code
	}
	bucket, _, code, err := n.open(ctx)
	if err != nil {
		return fail(code, err)
	}
	defer bucket.Close()
	ctx, release, err := lf.hold(ctx, bucket)
	if err != nil {
		return fail(leaseCode(err), err)
	}
	defer release()
	if d, err := s3delete.FromBucket(bucket); err == nil {
		// On S3, DeleteObjects through the bucket's own client.
		opts = append(opts, sweep.WithBatchDeleter(d))
	}
	res, err := sweep.Purge(ctx, bucket, age, opts...)
	err = lostLease(ctx, err)
	if res != nil {
		out.Purged = append(out.Purged, res.Purged...)
		out.Kept = append(out.Kept, res.Kept...)
		for _, p := range res.Purged {
			out.Bytes += p.Bytes
		}
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
		return exitOK
	}
	for _, p := range out.Purged {
		fmt.Fprintf(stdout, "purged quarantine %s (started %s): %d objects, %d bytes\n", p.RunID, p.Created.Format(time.RFC3339), p.Objects, p.Bytes)
	}
	fmt.Fprintf(stdout, "%d quarantines purged (%d bytes), %d kept\n", len(out.Purged), out.Bytes, len(out.Kept))
	return exitOK
}

// parseAge parses a non-negative age: a Go duration (36h, 90m) or a number
// of days (7d).
func parseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(d, 10, 16)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number of days such as 7d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not an age such as 7d or 36h", s)
	}
	return d, nil
}
