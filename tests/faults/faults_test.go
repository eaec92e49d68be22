package faults

import (
	"context"
	"flag"
	"os"
	"strconv"
	"testing"
)

var (
	flagWorlds = flag.Int("faults.worlds", 0, "worlds to run (4 cycles each); default 40, 10 with -short, or $FAULTS_WORLDS")
	flagSeed   = flag.Uint64("faults.seed", 0, "run only this world's seed")
)

func worlds(t *testing.T) []uint64 {
	if *flagSeed != 0 {
		return []uint64{*flagSeed}
	}
	n := *flagWorlds
	if n == 0 {
		if v, err := strconv.Atoi(os.Getenv("FAULTS_WORLDS")); err == nil && v > 0 {
			n = v
		} else if testing.Short() {
			n = 10
		} else {
			n = 40
		}
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = uint64(i + 1)
	}
	return out
}

func TestCollectWithFaults(t *testing.T) {
	ctx := context.Background()
	st := &Stats{Counts: map[string]int64{}}
	for _, seed := range worlds(t) {
		RunWorld(ctx, t, seed, st, testing.Verbose() && *flagSeed != 0)
		if st.Violations > 20 {
			t.Fatal("too many violations; stopping")
		}
	}
	t.Logf("%d cycles (%d failed with an error), %d faults injected %v, %d objects deleted, %d failed/ entries, %d old objects only staged, %d violations",
		st.Cycles, st.Failed, st.Faults, st.Counts, st.Deleted, st.FailedEntries, st.StagedOld, st.Violations)
	if st.Faults == 0 || st.Failed == 0 || st.Failed == st.Cycles {
		t.Errorf("the faults did not bite: %d of %d cycles failed", st.Failed, st.Cycles)
	}
}

// A replay of one world (-faults.seed=N -v, or soak -v) logs the faults of
// every cycle, the one without faults too.
func TestRunWorldVerbose(t *testing.T) {
	st := &Stats{Counts: map[string]int64{}}
	RunWorld(context.Background(), t, 1, st, true)
	if st.Cycles != faultRuns+1 {
		t.Errorf("%d cycles, want %d", st.Cycles, faultRuns+1)
	}
}
