package hosttest_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lakegc/lakegc/hosttest"
)

// A correct store loses nothing, with slow staging through Stage and
// without it.
func TestRun(t *testing.T) {
	for _, unchecked := range []bool{false, true} {
		res, err := hosttest.Run(context.Background(), newMemStore(""), hosttest.Options{
			Seed: 1, Cycles: 100, UncheckedStaging: unchecked, Optimized: unchecked, Dir: t.TempDir(),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("unchecked staging %v: %v", unchecked, res)
		if res.Cycles != 100 || res.Links == 0 || res.Deleted == 0 || res.Refused == 0 {
			t.Errorf("a run that did not exercise the GC: %v", res)
		}
	}
}

// The harness finds the loss of a store that skips or drops what it must
// keep.
func TestRunCatchesBrokenStores(t *testing.T) {
	for _, bug := range []string{"hidesIngest", "sourceSkipsLast", "commitDropsAPath"} {
		res, err := hosttest.Run(context.Background(), newMemStore(bug), hosttest.Options{Seed: 1, Cycles: 200, Dir: t.TempDir()})
		if !errors.Is(err, hosttest.ErrLoss) {
			t.Errorf("store with bug %s: %v after %v; want ErrLoss", bug, err, res)
			continue
		}
		t.Logf("bug %s found after %d cycles: %v", bug, res.Cycles, err)
	}
}

// TestLongRun runs LAKEGC_HOSTTEST_CYCLES cycles (skipped without it), with
// slow staging up to 10 minutes, checked and unchecked.
func TestLongRun(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LAKEGC_HOSTTEST_CYCLES"))
	if n <= 0 {
		t.Skip("set LAKEGC_HOSTTEST_CYCLES to run")
	}
	for _, unchecked := range []bool{false, true} {
		start := time.Now()
		res, err := hosttest.Run(context.Background(), newMemStore(""), hosttest.Options{
			Seed: 7, Cycles: n, UncheckedStaging: unchecked, Optimized: true, MaxDuration: time.Hour, Dir: t.TempDir(),
			Progress: func(r hosttest.Result) {
				if r.Cycles%250 == 0 {
					t.Logf("%v after %v", &r, time.Since(start).Round(time.Second))
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("unchecked staging %v: %v in %v", unchecked, res, time.Since(start).Round(time.Second))
	}
}
