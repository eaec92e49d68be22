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
	if arg, ok := os.LookupEnv(childEnv); ok {
		os.Exit(runChild(arg))
	}
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
	flag.StringVar(&o.Inventory, "inventory", "", "csv or parquet: publish an S3 Inventory report of the namespace (as of an hour after its objects) before the cycle, run the cycle from it (Config.Inventory), and check that exactly the garbage is deleted")
	compare := flag.Bool("compare", false, "with -inventory, first run a LIST-based clean cycle against a clone of the store, then the cycle from the report, and print both and their ratios")
	storeOnDisk := flag.Bool("store-on-disk", false, "keep the objects the cycles write to the simulated store (the export, the mark's records and candidates) in a folder under -tmp instead of in memory (s3sim's WithDiskOverlay)")
	flag.BoolVar(&o.OwnMemory, "own-memory", false, "with -churn, run each second cycle in a child process of its own against the store served over loopback HTTP (as -http), and print its peak RSS: the GC's own, with the synthetic host and the S3 client")
	flag.StringVar(&o.HeapProfile, "heapprofile", "", "with -own-memory, write each second cycle's heap profile at its peak live heap to this prefix + .clean and .optimized, and print its in-use bytes by package (lakegc, harness, other)")
	flag.BoolVar(&o.MarkOnly, "mark-only", false, "with -inventory, run the cycle without the sweep (a dry run) and check the mark's candidates instead of the deletions")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./tests/bottomline [flags]\n\n"+
			"  go run ./tests/bottomline -objects 20000000 -latency 50ms\n"+
			"  go run ./tests/bottomline -objects 20000000 -latency 50ms -churn 0.01 -optimized\n"+
			"  go run ./tests/bottomline -objects 20000000 -slices 10000 -latency 50ms -inventory csv\n\n")
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
	if o.Inventory != "" {
		if _, err := parseInventoryFormat(o.Inventory); err != nil {
			fmt.Fprintln(os.Stderr, "bottomline:", err)
			os.Exit(2)
		}
		if churn > 0 || optimized {
			fmt.Fprintln(os.Stderr, "bottomline: -inventory runs one (clean) cycle: no -churn nor -optimized")
			os.Exit(2)
		}
	}
	if (o.OwnMemory && churn == 0 && !optimized) || (o.HeapProfile != "" && !o.OwnMemory) {
		fmt.Fprintln(os.Stderr, "bottomline: -own-memory needs -churn (or -optimized), -heapprofile needs -own-memory")
		os.Exit(2)
	}
	if *compare && o.Inventory == "" {
		fmt.Fprintln(os.Stderr, "bottomline: -compare needs -inventory")
		os.Exit(2)
	}
	if o.MarkOnly && o.Inventory == "" {
		fmt.Fprintln(os.Stderr, "bottomline: -mark-only needs -inventory")
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
	if *storeOnDisk {
		dir, err := os.MkdirTemp(o.TempDir, "bottomline-store-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "bottomline:", err)
			os.Exit(1)
		}
		o.StoreDir = dir
	}
	os.Exit(runMain(sc, o, churn, optimized, *compare))
}

// runMain runs the cycles and prints them; it returns the exit code.
func runMain(sc Scale, o Options, churn float64, optimized, compare bool) int {
	if o.StoreDir != "" {
		defer os.RemoveAll(o.StoreDir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if churn > 0 || optimized {
		sec, err := runSecond(ctx, sc, o, churn, optimized)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bottomline:", err)
			return 1
		}
		sec.print(os.Stdout)
		if err := sec.err(); err != nil {
			fmt.Fprintln(os.Stderr, "bottomline:", err)
			return 1
		}
		return 0
	}
	if compare {
		list, inv, err := runCompare(ctx, sc, o)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bottomline:", err)
			return 1
		}
		printCompare(os.Stdout, list, inv)
		if list.Check != nil || inv.Check != nil {
			return 1
		}
		return 0
	}
	res, err := run(ctx, sc, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bottomline:", err)
		return 1
	}
	res.print(os.Stdout)
	if res.Check != nil {
		return 1
	}
	return 0
}
