//go:build unix

package crash

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/uncommitted"
)

var (
	flagKills = flag.Int("crash.kills", 0, "kill points to aim at, over all steps; default 320, 80 with -short, or $CRASH_KILLS")
	flagChain = flag.Int("crash.kills-per-chain", 4, "kills of one world before the run that must finish")
)

// Environment of a child.
const (
	envDir  = "CRASH_DIR"  // the world's folder
	envStep = "CRASH_STEP" // the step to run
	envKill = "CRASH_KILL" // the operation to die at (1-based; 0 or unset: none)
)

// childResult is what a child that was not killed writes.
type childResult struct {
	Ops int    `json:"ops"`
	Err string `json:"err,omitempty"`
}

// TestCrashChild is the child process: TestCrash runs the test binary
// again with -test.run=^TestCrashChild$ and the step in its environment.
// Run alone, it skips.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(envDir)
	if dir == "" {
		t.Skip("the child process of TestCrash")
	}
	killAt, _ := strconv.Atoi(os.Getenv(envKill))
	w, err := loadWorld(dir)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := openBucket(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	kb, bucket := newKillBucket(inner, killAt, filepath.Join(dir, "kill.json"), false)
	err = runStep(context.Background(), os.Getenv(envStep), dir, w, bucket)
	res := childResult{Ops: kb.ops()}
	if err != nil {
		res.Err = err.Error()
	}
	if werr := writeJSON(filepath.Join(dir, "result.json"), res); werr != nil {
		t.Fatal(werr)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// stats are the figures of a whole TestCrash.
type stats struct {
	mu         sync.Mutex
	kills      map[string]map[string]int  // step → label → kills
	kinds      map[string]map[string]bool // step → labels of its operations
	chains     map[string]int
	children   int
	finished   map[string]int // step → chains whose kill index passed the end
	spillsLeft int            // spill folders a killed child left
	tmpLeft    int            // fileblob's temporary files a killed child left (outside the bucket)
	nextCycle  int            // collect chains that ran a new cycle to remove a spill folder
	childTime  time.Duration  // wall time of the children
	childCPU   time.Duration  // their CPU time
	violations int
}

func (s *stats) addKill(step, lbl string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kills[step] == nil {
		s.kills[step] = map[string]int{}
	}
	s.kills[step][lbl]++
}

func killTarget() int {
	if *flagKills > 0 {
		return *flagKills
	}
	if n, err := strconv.Atoi(os.Getenv("CRASH_KILLS")); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return 80
	}
	return 320
}

// TestCrash runs each step in a child process over a world in a fileblob
// bucket, kills the child with SIGKILL at a seeded operation, checks the
// world, runs the step again (killing it again, up to
// -crash.kills-per-chain times) and finally lets it finish, checking after
// every child. Chains are named chains/<step>/seed=<n>: -run 'TestCrash/chains/collect/seed=7$'
// replays one.
func TestCrash(t *testing.T) {
	if os.Getenv(envDir) != "" {
		t.Skip("in a child")
	}
	st := &stats{kills: map[string]map[string]int{}, kinds: map[string]map[string]bool{}, chains: map[string]int{}, finished: map[string]int{}}
	target := killTarget()
	chains := (target + *flagChain - 1) / *flagChain
	start := time.Now()
	t.Run("chains", func(t *testing.T) {
		// The whole cycle has the most kinds of operation: it gets two
		// chains for every one of the other steps.
		order := append(slices.Clone(steps), stepCollect)
		seeds := map[string]uint64{}
		for i := range chains {
			step := order[i%len(order)]
			seeds[step]++
			seed := seeds[step]
			t.Run(fmt.Sprintf("%s/seed=%d", step, seed), func(t *testing.T) {
				t.Parallel()
				runChain(t, step, seed, st)
			})
		}
	})
	total := 0
	for _, step := range steps {
		n := 0
		for _, c := range st.kills[step] {
			n += c
		}
		total += n
		var parts []string
		for _, l := range slices.Sorted(maps.Keys(st.kills[step])) {
			parts = append(parts, fmt.Sprintf("%s %d", l, st.kills[step][l]))
		}
		var missed []string
		for _, l := range slices.Sorted(maps.Keys(st.kinds[step])) {
			if st.kills[step][l] == 0 {
				missed = append(missed, l)
			}
		}
		t.Logf("%-7s %3d chains, %3d kills (%d chains finished before their last kill): %s; kinds not killed: %q",
			step, st.chains[step], n, st.finished[step], strings.Join(parts, ", "), missed)
	}
	t.Logf("children: %v of wall time, %v of CPU", st.childTime.Round(time.Millisecond), st.childCPU.Round(time.Millisecond))
	t.Logf("%d kills in %d child processes, %v; %d spill folders and %d fileblob temporary files left by killed children, every spill folder removed by the rerun (by the next cycle in %d chains whose rerun swept a finished mark); %d violations",
		total, st.children, time.Since(start).Round(time.Millisecond), st.spillsLeft, st.tmpLeft, st.nextCycle, st.violations)
	if total < target/2 {
		t.Errorf("only %d kills landed, aiming at %d", total, target)
	}
}

// chain is one world's kills and final run.
type chain struct {
	t      *testing.T
	step   string
	dir    string
	w      *world
	bucket *blob.Bucket // the world's bucket, without kills
	live   map[string]string
	st     *stats
	killed int             // kills so far
	spills map[string]bool // spill folders seen after a kill
}

func (c *chain) violate(format string, args ...any) {
	c.st.mu.Lock()
	c.st.violations++
	c.st.mu.Unlock()
	c.t.Errorf("%s seed %d after %d kills: %s", c.step, c.w.Seed, c.killed, fmt.Sprintf(format, args...))
}

func runChain(t *testing.T, step string, seed uint64, st *stats) {
	ctx := context.Background()
	dir := worldDir(t)
	orphans := 0
	if step == stepSweep || step == stepResweep || step == stepCollect || slices.Contains(quarantineSteps, step) {
		orphans = 150 // two batches of the sweep and some
	}
	w, err := newWorld(ctx, dir, seed, orphans)
	if err != nil {
		t.Fatal(err)
	}
	bucket, err := openBucket(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	if err := setup(ctx, step, dir, w, bucket); err != nil {
		t.Fatal(err)
	}
	c := &chain{t: t, step: step, dir: dir, w: w, bucket: bucket, live: w.live(), st: st, spills: map[string]bool{}}
	trace, err := traceStep(ctx, t, step, dir)
	if err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	st.chains[step]++
	if st.kinds[step] == nil {
		st.kinds[step] = map[string]bool{}
	}
	for _, l := range trace {
		st.kinds[step][l] = true
	}
	st.mu.Unlock()

	rng := rand.New(rand.NewPCG(seed, uint64(slices.Index(steps, step))))
	for i := range *flagChain {
		// A rerun often has less to do than the first run (a resumed
		// export, a sweep of what is left): later kills come in the
		// first half of the first run's operations.
		killAt := 1 + rng.IntN(max(len(trace)/2, 1))
		if i == 0 {
			// The first kill is spread over the kinds of operation, so
			// that rare ones (a summary's write) are hit as often as
			// the common ones (a listing page): the chains of a step
			// take the kinds in turn.
			labels := slices.Sorted(maps.Keys(setOf(trace)))
			rand.New(rand.NewPCG(uint64(len(labels)), 0)).Shuffle(len(labels), func(i, j int) {
				labels[i], labels[j] = labels[j], labels[i]
			})
			l := labels[int(seed-1)%len(labels)]
			var at []int
			for j, tl := range trace {
				if tl == l {
					at = append(at, j+1)
				}
			}
			killAt = at[rng.IntN(len(at))]
		}
		rec, finished := c.runChild(ctx, killAt)
		if finished {
			st.mu.Lock()
			st.finished[step]++
			st.mu.Unlock()
			c.checkFinished(ctx)
			return
		}
		if rec == nil {
			return // reported
		}
		c.killed++
		st.addKill(step, rec.Label)
		c.checkAfterKill(ctx, rec)
	}
	if _, finished := c.runChild(ctx, 0); finished {
		c.checkFinished(ctx)
	}
}

// setup runs what the step continues, without kills: the export before a
// mark, the export and the mark before a sweep.
func setup(ctx context.Context, step, dir string, w *world, bucket *blob.Bucket) error {
	q := slices.Contains(quarantineSteps, step)
	if step == stepMark || step == stepSweep || step == stepResweep || q {
		st := hostState{RunID: retention.NewRunID(w.Now)}
		if err := exportRun(ctx, w, bucket, st, func(hostState) error { return nil }); err != nil {
			return err
		}
		w.ExportRunID = st.RunID
		w.MarkRunID = retention.NewRunID(w.Now)
	}
	if step == stepSweep || step == stepResweep || q {
		if _, err := sweep.Mark(ctx, bucket, w.MarkRunID, markInputs(ctx, w, bucket), markOptions(dir, w)...); err != nil {
			return err
		}
	}
	if step == stepRestore || step == stepPurge {
		if _, err := sweep.Sweep(ctx, bucket, w.MarkRunID, quarantineOptions(dir, w)...); err != nil {
			return err
		}
	}
	if step == stepResweep {
		res, err := sweep.Sweep(ctx, bucket, w.MarkRunID, append(sweepOptions(w), sweep.WithBatchDeleter(deniedDeleter{bucket}))...)
		if err != nil {
			return err
		}
		if res.Failed == 0 {
			return fmt.Errorf("the first sweep failed no delete: %+v", res)
		}
	}
	return w.save(dir)
}

// traceStep runs the step in this process on a copy of the world, and
// returns the label of each of its bucket operations.
func traceStep(ctx context.Context, t *testing.T, step, dir string) ([]string, error) {
	cp := worldDir(t)
	if err := copyTree(dir, cp); err != nil {
		return nil, err
	}
	w, err := loadWorld(cp)
	if err != nil {
		return nil, err
	}
	inner, err := openBucket(cp, false)
	if err != nil {
		return nil, err
	}
	defer inner.Close()
	kb, bucket := newKillBucket(inner, 0, "", true)
	if err := runStep(ctx, step, cp, w, bucket); err != nil {
		return nil, fmt.Errorf("trace run: %w", err)
	}
	return kb.trace, nil
}

func setOf[T comparable](s []T) map[T]bool {
	m := map[T]bool{}
	for _, v := range s {
		m[v] = true
	}
	return m
}

// runChild runs the step in a child that dies at operation killAt. It
// returns the kill's record, or finished when the child ran to the end.
func (c *chain) runChild(ctx context.Context, killAt int) (rec *killRecord, finished bool) {
	for _, f := range []string{"kill.json", "result.json"} {
		os.Remove(filepath.Join(c.dir, f))
	}
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envDir+"="+c.dir, envStep+"="+c.step, envKill+"="+strconv.Itoa(killAt),
		"TMPDIR="+tmpDir(c.dir),
		// The race detector waits a second at exit for late reports;
		// the child has no goroutine left by then.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	began := time.Now()
	err := cmd.Run()
	c.st.mu.Lock()
	c.st.children++
	c.st.childTime += time.Since(began)
	if ps := cmd.ProcessState; ps != nil {
		c.st.childCPU += ps.UserTime() + ps.SystemTime()
	}
	c.st.mu.Unlock()
	var r killRecord
	killedOK, _ := readJSON(filepath.Join(c.dir, "kill.json"), &r)
	var res childResult
	done, _ := readJSON(filepath.Join(c.dir, "result.json"), &res)
	var exit *exec.ExitError
	switch {
	case killedOK && errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
		return &r, false
	case done && err == nil && res.Err == "":
		return nil, true
	case done && res.Err != "":
		c.violate("the child (kill at %d) failed: %s", killAt, res.Err)
	default:
		c.violate("the child (kill at %d) ended with %v:\n%s", killAt, err, out.String())
	}
	return nil, false
}

// checkAfterKill checks the world after a child was killed.
func (c *chain) checkAfterKill(ctx context.Context, rec *killRecord) {
	c.checkAlways(ctx)
	if (rec.Op == opWrite || rec.Op == opClose) && !rec.Existed {
		if c.exists(ctx, rec.Key) {
			c.violate("killed inside the write of %s (%s), the object is visible", rec.Key, rec.Op)
		}
	}
	spills, tmps := c.leftovers()
	c.st.mu.Lock()
	for _, s := range spills {
		if !c.spills[s] {
			c.spills[s] = true
			c.st.spillsLeft++
		}
	}
	c.st.tmpLeft += tmps
	c.st.mu.Unlock()
	// Count each leftover once: remove fileblob's litter, which only an
	// operator would, and which is invisible in the bucket.
	entries, _ := os.ReadDir(tmpDir(c.dir))
	for _, e := range entries {
		os.RemoveAll(filepath.Join(tmpDir(c.dir), e.Name()))
	}
}

// leftovers counts the spill folders in the spill folder and fileblob's
// temporary files in the child's TMPDIR.
func (c *chain) leftovers() (spills []string, tmps int) {
	entries, _ := os.ReadDir(spillDir(c.dir))
	for _, e := range entries {
		if strings.Contains(e.Name(), "lakegc-mark-") {
			spills = append(spills, e.Name())
		}
	}
	entries, _ = os.ReadDir(tmpDir(c.dir))
	return spills, len(entries)
}

// checkAlways checks what must hold after any child, killed or not: no
// live object deleted, no partial object visible, and no run that reads as
// complete unless it is.
func (c *chain) checkAlways(ctx context.Context) {
	for a, why := range c.live {
		if !c.exists(ctx, a) {
			c.violate("live object %s (%s) deleted", a, why)
			delete(c.live, a) // reported once
		}
	}
	c.checkFilesWhole()
	c.checkExports(ctx)
	c.checkMarks(ctx)
	c.checkQuarantine(ctx, false)
}

// checkFilesWhole reads every file the GC wrote: each must be whole.
func (c *chain) checkFilesWhole() {
	root := bucketDir(c.dir)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		key := filepath.ToSlash(path[len(root)+1:])
		if strings.HasSuffix(key, ".tmp") {
			c.violate("temporary file %s in the bucket", key)
			return nil
		}
		if !strings.HasPrefix(key, "_lakefs/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			c.violate("read %s: %v", key, err)
			return nil
		}
		switch k := kind(key); k {
		case "export-file", "mark-deleted", "sweep-failed", "mark-unrecognized":
			if _, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b))); err != nil {
				c.violate("%s %s is not a whole Parquet file (%d bytes): %v", k, key, len(b), err)
			}
		case "rules": // written by the world, in protobuf
		case "quarantine-object": // a data object, moved
		case "mark-live", "mark-index", "mark-staged", "mark-parts":
			// The optimized runs' records (sweep/index.go; the live
			// record of version 1, sweep/record.go): a magic line first,
			// a CRC-32C of everything before it last.
			magic := map[string]string{"mark-live": "lakegc-live\x00v1\n", "mark-index": "lakegc-cindex\x00v1\n",
				"mark-staged": "lakegc-staged\x00v1\n", "mark-parts": "lakegc-parts\x00v1\n"}[k]
			n := len(b) - 4
			if !bytes.HasPrefix(b, []byte(magic)) || n < len(magic)+3 ||
				crc32.Checksum(b[:n], crc32.MakeTable(crc32.Castagnoli)) != binary.BigEndian.Uint32(b[n:]) {
				c.violate("%s %s is not whole (%d bytes)", k, key, len(b))
			}
		case "commits-report":
			if !bytes.HasPrefix(b, []byte("commit_id,expired,metarange_id\n")) || !bytes.HasSuffix(b, []byte("\n")) {
				c.violate("commits report %s is not whole: %q", key, b)
			}
		default:
			if !json.Valid(b) {
				c.violate("%s %s is not whole JSON: %q", k, key, b)
			}
		}
		return nil
	})
	if err != nil {
		c.violate("reading the bucket folder: %v", err)
	}
}

// runs lists the run folders under a folder of the storage prefix.
func (c *chain) runs(sub string) []string {
	entries, _ := os.ReadDir(filepath.Join(bucketDir(c.dir), "_lakefs", "retention", "gc", sub))
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// checkExports reads every export run back: one that reads as complete
// must hold every staged address once; one that does not must say it is
// incomplete (or absent), never fail otherwise.
func (c *chain) checkExports(ctx context.Context) {
	want := c.w.stagedSet()
	for _, run := range c.runs("uncommitted") {
		got := map[string]int{}
		var err error
		for row, rerr := range uncommitted.ReadRun(ctx, c.bucket, lakegc.DefaultStoragePrefix, run) {
			if rerr != nil {
				err = rerr
				break
			}
			got[row.PhysicalAddress]++
		}
		if err != nil {
			if !errors.Is(err, uncommitted.ErrIncomplete) && !errors.Is(err, uncommitted.ErrNoRun) {
				c.violate("export %s: reading it back: %v", run, err)
			}
			if c.exportDone(run) {
				c.violate("export %s is recorded as done, but reading it back fails: %v", run, err)
			}
			continue
		}
		for a, n := range got {
			if n != 1 {
				c.violate("export %s holds %s %d times", run, a, n)
			}
			if !want[a] {
				c.violate("export %s holds %s, which is not staged", run, a)
			}
		}
		for a := range want {
			if got[a] == 0 {
				c.violate("export %s reads as complete but lacks the staged %s", run, a)
			}
		}
	}
}

// exportDone says whether the host (or Collect's state) recorded the export
// run as done.
func (c *chain) exportDone(run string) bool {
	var hs hostState
	if ok, _ := readJSON(hostStateFile(c.dir), &hs); ok && hs.RunID == run && hs.Done {
		return true
	}
	var cs struct {
		Done bool `json:"done"`
	}
	ok, _ := readJSON(filepath.Join(bucketDir(c.dir), "_lakefs", "retention", "gc", "uncommitted", run, "_lakegc_export.json"), &cs)
	return ok && cs.Done
}

// checkMarks reads every mark's summary: one that says success must have
// whole candidates, none of them live (for the mark step, exactly the
// expected ones); a sweep.json must account for its candidates.
func (c *chain) checkMarks(ctx context.Context) {
	for _, run := range c.runs("unified") {
		sum, err := sweep.ReadSummary(ctx, c.bucket, lakegc.DefaultStoragePrefix, run)
		if errors.Is(err, sweep.ErrNoRun) {
			continue
		}
		if err != nil {
			c.violate("mark %s: summary: %v", run, err)
			continue
		}
		if !sum.Success {
			continue
		}
		cands := map[string]bool{}
		for k, err := range sweep.Candidates(ctx, c.bucket, lakegc.DefaultStoragePrefix, run) {
			if err != nil {
				c.violate("mark %s says success, but its candidates cannot be read: %v", run, err)
				break
			}
			if cands[k] {
				c.violate("mark %s lists %s twice", run, k)
			}
			cands[k] = true
			if why := c.live[k]; why != "" {
				c.violate("mark %s marks the live %s (%s)", run, k, why)
			}
		}
		if int64(len(cands)) != sum.NumDeletedObjects {
			c.violate("mark %s: %d candidates, summary says %d", run, len(cands), sum.NumDeletedObjects)
		}
		if run == c.w.MarkRunID && !maps.Equal(cands, c.w.markCandidates()) {
			c.violate("mark %s: candidates %d, want the %d the model says", run, len(cands), len(c.w.markCandidates()))
		}
		var sj struct {
			Deleted     int64 `json:"deleted"`
			AlreadyGone int64 `json:"already_gone"`
			Failed      int64 `json:"failed"`
			Refused     int64 `json:"refused"`
		}
		ok, err := readJSON(filepath.Join(bucketDir(c.dir), "_lakefs", "retention", "gc", "unified", run, "sweep.json"), &sj)
		if err != nil {
			c.violate("mark %s: sweep.json: %v", run, err)
		}
		if !ok {
			continue
		}
		if n, err := c.failedRows(run); err != nil {
			c.violate("mark %s: counting failed/: %v", run, err)
		} else if n != sj.Failed+sj.Refused {
			c.violate("mark %s: sweep.json says %d failed and %d refused, failed/ lists %d", run, sj.Failed, sj.Refused, n)
		}
		if sj.Deleted+sj.AlreadyGone+sj.Failed+sj.Refused != sum.NumDeletedObjects {
			c.violate("mark %s: sweep.json %+v does not account for %d candidates", run, sj, sum.NumDeletedObjects)
		}
		var left int64
		for k := range cands {
			if c.exists(ctx, k) {
				left++
			}
		}
		// (A restore puts the candidates of a quarantined sweep back.)
		if left > sj.Failed+sj.Refused && c.step != stepRestore {
			c.violate("mark %s: sweep.json says done, %d candidates left, %d failed or refused", run, left, sj.Failed+sj.Refused)
		}
	}
}

// checkFinished checks the world after the child that ran to the end.
func (c *chain) checkFinished(ctx context.Context) {
	c.checkAlways(ctx)
	defer c.checkSpillsRemoved(ctx)
	markDone := func(run string) bool {
		sum, err := sweep.ReadSummary(ctx, c.bucket, lakegc.DefaultStoragePrefix, run)
		return err == nil && sum.Success
	}
	switch c.step {
	case stepExport:
		var hs hostState
		if ok, _ := readJSON(hostStateFile(c.dir), &hs); !ok || !hs.Done {
			c.violate("the export finished, but the host did not record it done: %+v", hs)
		}
	case stepMark:
		if !markDone(c.w.MarkRunID) {
			c.violate("the mark finished without a successful summary")
		}
	case stepSweep, stepResweep:
		for k, err := range sweep.Candidates(ctx, c.bucket, lakegc.DefaultStoragePrefix, c.w.MarkRunID) {
			if err != nil {
				c.violate("candidates: %v", err)
				break
			}
			if c.exists(ctx, k) {
				c.violate("the sweep finished, but candidate %s is still there", k)
			}
		}
	case stepQuarantine, stepRestore, stepPurge:
		c.checkQuarantine(ctx, true)
	case stepCollect:
		var cs cycleState
		if ok, _ := readJSON(cycleStateFile(c.dir), &cs); !ok || !markDone(cs.RunID) || !c.exportDone(cs.ExportRunID) {
			c.violate("the cycle finished, but its export or mark is not done: %+v", cs)
		}
		for a := range c.w.garbage() {
			if c.exists(ctx, a) {
				c.violate("the cycle finished, but garbage %s is still there", a)
			}
		}
	}
}

// checkSpillsRemoved checks that no spill folder of a killed Mark is left
// once the step finished. A cycle that resumed a finished mark (a kill
// after its summary) does not mark: the folder of the killed Mark is left
// to the next Mark, so then a new cycle runs and must remove it.
func (c *chain) checkSpillsRemoved(ctx context.Context) {
	spills, _ := c.leftovers()
	if len(spills) > 0 && c.step == stepCollect {
		c.st.mu.Lock()
		c.st.nextCycle++
		c.st.mu.Unlock()
		os.Remove(cycleStateFile(c.dir))
		if _, finished := c.runChild(ctx, 0); !finished {
			return
		}
		c.checkAlways(ctx)
		spills, _ = c.leftovers()
	}
	if len(spills) > 0 {
		c.violate("spill folders %q left after the run that finished", spills)
	}
}

// worldDir returns a new folder for a world, removed when t ends: under
// $CRASH_TMPDIR if set, else in /dev/shm where the system has it (a chain
// creates thousands of small files, and creating one on a virtual
// machine's disk can take 5 ms, on tmpfs 0.1 ms), else in t.TempDir().
// The tests rely on what every local file system gives: atomic renames and
// flock.
func worldDir(t *testing.T) string {
	base := os.Getenv("CRASH_TMPDIR")
	if base == "" {
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			base = "/dev/shm"
		}
	}
	if base != "" {
		if dir, err := os.MkdirTemp(base, "lakegc-crash-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// failedRows counts the rows of a sweep's failed/ parts (none without
// the folder); a part that is not whole Parquet is an error.
func (c *chain) failedRows(run string) (int64, error) {
	var n int64
	dir := filepath.Join(bucketDir(c.dir), "_lakefs", "retention", "gc", "unified", run, "failed")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if path == dir && errors.Is(err, fs.ErrNotExist) {
			return fs.SkipAll
		}
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), "_") || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		n += f.NumRows()
		return nil
	})
	return n, err
}

// exists says whether key is in the bucket; an error is a violation, so
// that no check passes on it.
func (c *chain) exists(ctx context.Context, key string) bool {
	ok, err := c.bucket.Exists(ctx, key)
	if err != nil {
		c.violate("Exists(%s): %v", key, err)
	}
	return ok
}

// failedRows reads no folder as no rows, and fails on a part that is not
// Parquet instead of counting it as empty.
func TestFailedRows(t *testing.T) {
	c := &chain{dir: t.TempDir()}
	if n, err := c.failedRows("r1"); n != 0 || err != nil {
		t.Fatalf("without failed/: %d rows, %v", n, err)
	}
	dir := filepath.Join(bucketDir(c.dir), "_lakefs", "retention", "gc", "unified", "r1", "failed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "part-0.parquet"), []byte("PAR1 cut short"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := c.failedRows("r1"); err == nil {
		t.Errorf("a part that is not Parquet: %d rows, no error", n)
	}
}
