package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

func main() {
	var (
		sc        Scale
		o         Options
		budget    int
		churn     float64
		optimized bool
		keep      string
	)
	flag.IntVar(&sc.Objects, "objects", 20_000_000, "objects in the namespace (a multiple of 20): 1/20 garbage, 5/20 staged, 14/20 committed")
	flag.IntVar(&sc.Slices, "slices", 0, "slices sharing the objects (0: one per 10,000 objects)")
	flag.IntVar(&sc.Branches, "branches", 1000, "branches")
	flag.IntVar(&sc.Commits, "commits", 30_000, "commits, as many on each branch (at least 12)")
	flag.DurationVar(&o.Latency, "latency", 50*time.Millisecond, "latency of each request (0: none)")
	flag.IntVar(&budget, "memory", 256, "Config.MemoryBudget in MiB")
	flag.StringVar(&o.TempDir, "tmp", "", "Config.TempDir (default the system's)")
	flag.Float64Var(&o.ReadRate, "read-rate", 0, "reads a second per prefix past which the store answers SlowDown (0: S3's 5500)")
	flag.IntVar(&o.PrefixDepth, "prefix-depth", 0, "leading path segments of a key that name its partition, the unit of the rates (0: 2, data/<slice>/)")
	flag.Float64Var(&o.WriteRate, "write-rate", 0, "writes (each key of a batch) a second per prefix past which the store answers SlowDown (0: S3's 3500)")
	flag.Float64Var(&churn, "churn", 0, "after the first cycle, churn this fraction of the namespace (new objects in new slices, as many old ones made garbage) and run a clean second cycle (0: one cycle)")
	flag.BoolVar(&o.HTTP, "http", false, "run the cycles through gocloud's s3blob and the AWS SDK v2 against the store served over loopback HTTP (listing decoded by sweep/s3list, deletes by sweep/s3delete, as the lakeFS host on S3), instead of the store's driver")
	flag.BoolVar(&o.SDKList, "sdk-list", false, "with -http, decode the listing with the SDK (s3blob's own listing) instead of sweep/s3list")
	flag.BoolVar(&optimized, "optimized", false, "with -churn, also run an optimized second cycle, from the first cycle's records")
	flag.StringVar(&keep, "keep", "parts", "how the host gives the committed keep set: parts (ranges, read through a range cache in the store) or flat (every address)")
	flag.IntVar(&o.RangeEntries, "range-entries", DefaultRangeEntries, "with -keep parts, committed objects a range holds")
	flag.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the optimized second cycle (of the cycle, without -churn) to this file")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./tests/bottomline [flags]\n\n"+
			"  go run ./tests/bottomline -objects 20000000 -latency 50ms\n"+
			"  go run ./tests/bottomline -objects 20000000 -latency 50ms -churn 0.01 -optimized\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if o.SDKList && !o.HTTP {
		fmt.Fprintln(os.Stderr, "bottomline: -sdk-list needs -http")
		os.Exit(2)
	}
	switch keep {
	case "parts":
		o.Parts = true
	case "flat":
	default:
		fmt.Fprintf(os.Stderr, "bottomline: -keep %q: parts or flat\n", keep)
		os.Exit(2)
	}
	if sc.Slices == 0 {
		sc.Slices = max(1, sc.Objects/10_000)
	}
	if o.Latency == 0 {
		o.Latency = s3sim.NoLatency
	}
	o.MemoryBudget = int64(budget) << 20
	o.ListConcurrency, o.DeleteConcurrency = defaultListConcurrency, defaultDeleteConcurrency
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if churn > 0 || optimized {
		sec, err := runSecond(ctx, sc, o, churn, optimized)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bottomline:", err)
			os.Exit(1)
		}
		sec.print(os.Stdout)
		if err := sec.err(); err != nil {
			fmt.Fprintln(os.Stderr, "bottomline:", err)
			os.Exit(1)
		}
		return
	}
	res, err := run(ctx, sc, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bottomline:", err)
		os.Exit(1)
	}
	res.print(os.Stdout)
}
