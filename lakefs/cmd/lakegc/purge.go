package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/quarantine"
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
	Error  string                 `json:"error,omitempty"`
	Purged []quarantine.PurgedRun `json:"purged"`
	Kept   []string               `json:"kept"`
	Bytes  int64                  `json:"bytes"`
}

// purgeCmd is "lakegc purge".
func purgeCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	c := newNSCommand("lakegc purge", purgeUsage)
	olderThan := c.fs.String("older-than", "", "purge the quarantines started and last swept into more than this `AGE` ago, such as 7d or 36h (required)")
	if code := c.parse(args, stdout, stderr); code >= 0 {
		return code
	}
	if *olderThan == "" {
		return c.usage(stderr, "--older-than is required")
	}
	age, err := parseAge(*olderThan)
	if err != nil {
		return c.usage(stderr, "--older-than: %v", err)
	}
	if err := c.n.finish(getenv); err != nil {
		return c.usage(stderr, "%v", err)
	}
	opts := classifierOptions()
	if v := getenv(envNow); v != "" {
		now, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return c.usage(stderr, "%s: %v", envNow, err)
		}
		opts = append(opts, sweep.WithClock(func() time.Time { return now }))
	}
	out := &purgeOutput{Purged: []quarantine.PurgedRun{}, Kept: []string{}}
	ctx, bucket, _, done, code, err := c.openHeld(ctx)
	if err != nil {
		return c.fail(stdout, stderr, out, code, err)
	}
	defer done()
	if d, err := s3delete.FromBucket(bucket); err == nil {
		// On S3, DeleteObjects through the bucket's own client.
		opts = append(opts, sweep.WithBatchDeleter(d))
	}
	res, err := quarantine.Purge(ctx, bucket, age, opts...)
	err = lostLease(ctx, err)
	if res != nil {
		out.Purged = append(out.Purged, res.Purged...)
		out.Kept = append(out.Kept, res.Kept...)
		for _, p := range res.Purged {
			out.Bytes += p.Bytes
		}
	}
	if err != nil {
		return c.fail(stdout, stderr, out, sweepCode(err), err)
	}
	if c.n.json {
		if !writeJSON(stdout, stderr, out) {
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

func (o *purgeOutput) setError(s string) { o.Error = s }

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
