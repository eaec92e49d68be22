package sweep

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
)

// rssChildEnv makes the test binary run TestMarkPeakRSS's Mark itself.
const rssChildEnv = "LAKEGC_RSS_CHILD"

// rssHeadroom is what the peak RSS of a Mark may exceed its budget by.
const rssHeadroom = 64 << 20

// TestMarkPeakRSS runs Mark in a fresh process (this test binary again), on
// a generated namespace that fills every share of the budget, and checks the
// growth of the process's peak resident memory while Mark ran: what a
// container's memory limit sees, not only the Go heap. At 64 and 128 MiB it
// stays within the budget plus 64 MiB, and it grows by at most the budget's
// growth: the part that follows the budget is the budget itself (the key
// slabs), not twice it, so the bound holds at every budget above. Under the
// race detector (slower, and with memory of its own) it runs at a quarter of
// the size, 16 and 32 MiB, and checks the growth only.
func TestMarkPeakRSS(t *testing.T) {
	if os.Getenv(rssChildEnv) != "" {
		markForRSS(t)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("peak RSS is read from /proc/self/status")
	}
	if testing.Short() {
		t.Skip("runs two Marks of 1.6 million keys")
	}
	budgets, slices := []int64{64 << 20, 128 << 20}, 32
	if raceEnabled || os.Getenv("LAKEGC_RSS_SMALL") != "" {
		// Below 64 MiB only the growth is checked: the 64 MiB beyond the
		// budget are for a larger Mark.
		budgets, slices = []int64{16 << 20, 32 << 20}, 6
	}
	var grew []int64
	for _, budget := range budgets {
		g := childRSS(t, budget, slices)
		if budget >= 64<<20 {
			require.LessOrEqual(t, g, budget+rssHeadroom, "Mark's peak RSS beyond its budget plus 64 MiB")
		}
		grew = append(grew, g)
	}
	require.LessOrEqual(t, grew[1]-grew[0], budgets[1]-budgets[0],
		"Mark's peak RSS grew faster than its budget")
}

// childRSS runs a Mark within budget in a child process and returns how much
// its peak RSS grew.
func childRSS(t *testing.T, budget int64, slices int) int64 {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMarkPeakRSS$", "-test.v")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+strconv.FormatInt(budget, 10)+","+strconv.Itoa(slices), "GOGC=100", "GOMEMLIMIT=off")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`rss: base=(\d+) peak=(\d+)`).FindSubmatch(out)
	require.NotNil(t, m, "%s", out)
	base, _ := strconv.ParseInt(string(m[1]), 10, 64)
	peak, _ := strconv.ParseInt(string(m[2]), 10, 64)
	t.Logf("budget %d MiB: RSS %d MiB before Mark, peak %d MiB (grew %d MiB; bound %d MiB)",
		budget>>20, base>>20, peak>>20, (peak-base)>>20, (budget+rssHeadroom)>>20)
	return peak - base
}

// markForRSS is the child's side: Mark slices of 50,000 keys, three quarters
// of them kept, within the budget the parent gave, and print the resident memory before
// and the peak during it.
func markForRSS(t *testing.T) {
	b, n, _ := strings.Cut(os.Getenv(rssChildEnv), ",")
	budget, err := strconv.ParseInt(b, 10, 64)
	require.NoError(t, err)
	slices, err := strconv.Atoi(n)
	require.NoError(t, err)
	d := newGenDriver(t, slices, 50_000)
	d.discardParts = true
	bucket := blob.NewBucket(d)
	runtime.GC()
	base := procStatus(t, "VmRSS")
	// Reset the peak to the current RSS, where the kernel allows it.
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	sum, err := Mark(context.Background(), bucket, "rss", Inputs{
		Uncommitted: d.keepSet(func(n int) bool { return n%40 == 1 }),
		Committed:   d.keepSet(func(n int) bool { return n%4 != 0 && n%40 != 1 }),
		ExportStart: t0,
	}, WithClock(fixedClock), WithMemoryBudget(budget), WithTempDir(t.TempDir()))
	require.NoError(t, err)
	require.Equal(t, int64(d.total/4), sum.NumDeletedObjects)
	fmt.Printf("rss: base=%d peak=%d\n", base, procStatus(t, "VmHWM"))
}

// procStatus returns a field of /proc/self/status in bytes.
func procStatus(t *testing.T, field string) int64 {
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
