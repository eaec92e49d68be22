package host_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"time"

	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
)

// Example collects a repository of a running lakeFS on its local
// blockstore: a dry run, which deletes nothing and prints what a sweep
// would delete (host.Options.Sweep deletes it). The client's endpoint and
// keys come from lakectl's variables (LAKECTL_SERVER_ENDPOINT_URL,
// LAKECTL_CREDENTIALS_ACCESS_KEY_ID, LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY).
// TestIntegrationExample runs dryRun against a real lakeFS.
func Example() {
	client, err := api.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	if err := dryRun(context.Background(), client, "my-repo", "/var/lib/lakefs/data", time.Now, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// dryRun marks the garbage of repo, whose namespace is in lakeFS's local
// blockstore folder blockstorePath, as of clock, and prints what it found.
func dryRun(ctx context.Context, client *api.Client, repo, blockstorePath string, clock func() time.Time, w io.Writer) error {
	res, err := host.Collect(ctx, client, nil, host.Options{
		Repository:     repo,
		BlockstorePath: blockstorePath,
		Clock:          clock,
		Logger:         slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Progress: func(p host.Progress) {
			if p.Kind == host.ProgressRanges && p.Ranges.Done {
				fmt.Fprintf(w, "read %d ranges of %d metaranges\n", p.Ranges.Ranges, p.Ranges.MetaRanges)
			}
		},
	})
	if errors.Is(err, host.ErrLakeFS) {
		return fmt.Errorf("lakeFS refused or could not be reached: %w", err)
	}
	if err != nil {
		return err
	}
	m := res.Report.Mark
	fmt.Fprintf(w, "%d kept commits; %d objects listed, %d garbage, listed under %s\n",
		res.Report.Commits.Active, m.Listed, m.Summary.NumDeletedObjects, m.Report)
	fmt.Fprintf(w, "%d staged objects statted, %d lakeFS requests\n", res.Stats.StagedStatted, res.Stats.LakeFSRequests)
	return nil
}
