package main

// The sharded run as n processes against a real lakeFS: each process is
// this test binary re-executed as the command (TestMain), since the built
// command ignores LAKEGC_NOW, the clock the test needs to move.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/lakefs/internal/lakefstest"
	"github.com/lakegc/lakegc/pathprovider"
	"github.com/lakegc/lakegc/sweep"
)

// envChildArgs, set by TestShardsAsProcesses in the environment of a
// process it starts, holds the command's arguments (JSON): the process runs
// the command with them, with its whole environment (LAKEGC_NOW too), and
// exits with its code.
const envChildArgs = "LAKEGC_TEST_COMMAND_ARGS"

func TestMain(m *testing.M) {
	if a := os.Getenv(envChildArgs); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(exitUsage)
		}
		code := run(context.Background(), args, os.Getenv, os.Stdout, os.Stderr)
		// The child's own peak resident set: ru_maxrss of a child started
		// by os/exec also counts the parent's resident set at the fork
		// (the child shares its memory until exec), so a test process
		// grown by earlier tests would be charged to every child.
		if status, err := os.ReadFile("/proc/self/status"); err == nil {
			for line := range strings.Lines(string(status)) {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					fmt.Fprintf(os.Stderr, "%s%s\n", hwmPrefix, strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				}
			}
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// hwmPrefix starts the line of a child's stderr that gives its peak
// resident set in KiB (VmHWM).
const hwmPrefix = "lakegc-test-vmhwm: "

// process is one run of the command in a process of its own.
type process struct {
	code   int
	out    gcOutput
	maxRSS int64 // bytes, the process's own peak resident set (VmHWM)
}

// startCommand starts the command as a process with env added to the
// test's environment; wait waits for it.
func startCommand(t *testing.T, env map[string]string, args ...string) (wait func() process) {
	t.Helper()
	a, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envChildArgs+"="+string(a))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return func() process {
		t.Helper()
		err := cmd.Wait()
		var p process
		if cmd.ProcessState == nil {
			t.Fatalf("lakegc %q: %v", args, err)
		}
		p.code = cmd.ProcessState.ExitCode()
		p.maxRSS = -1
		for line := range strings.Lines(stderr.String()) {
			if v, ok := strings.CutPrefix(line, hwmPrefix); ok {
				kib, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					t.Fatalf("lakegc %q: %q: %v", args, line, err)
				}
				p.maxRSS = kib << 10
			}
		}
		if p.maxRSS < 0 {
			t.Fatalf("lakegc %q: no peak resident set reported\n%s", args, stderr.String())
		}
		if p.code != exitOK {
			t.Fatalf("lakegc %q %v: exit %d\n%s\n%s", args, env, p.code, stdout.String(), stderr.String())
		}
		if err := json.Unmarshal(stdout.Bytes(), &p.out); err != nil {
			t.Fatalf("lakegc %q: report: %v\n%s", args, err, stdout.String())
		}
		if p.out.Mark == nil || p.out.Mark.Summary == nil {
			t.Fatalf("lakegc %q: no mark in %s", args, stdout.String())
		}
		return p
	}
}

// TestShardsAsProcesses runs lakefstest's history, with garbage planted in
// 40 slices of lakeFS's shape beside it, through "lakegc gc" in one process
// and then as n concurrent processes, one shard each (through --shard, and
// through the Indexed Job's JOB_COMPLETION_INDEX and JOB_COMPLETIONS), as a
// Kubernetes Indexed Job's pods would: the shards' candidates are disjoint,
// each in the shard SliceShard names, their union is the single run's
// candidates, their counts add up to its, and each process's peak resident
// set stays within its --memory budget plus 64 MiB. Then n processes sweep
// their shards at once, and exactly the garbage is gone: every kept object
// reads back through lakeFS. Needs a lakeFS on the local blockstore
// (LAKEFS_BIN).
func TestShardsAsProcesses(t *testing.T) {
	s := startLocal(t)
	h := lakefstest.BuildHistory(t, s, "lakegc-shards")
	folder := localFolder(t, h)
	// Garbage in many slices, so that every shard has some.
	var planted []string
	for i := range 40 {
		made := h.Built.Add(-time.Duration(10+i) * layoutDay)
		slice := pathprovider.DescendingID(made).String()
		for j := range 1 + i%3 {
			key := "data/" + slice + "/" + pathprovider.DescendingID(made.Add(time.Duration(j)*time.Second)).String()
			writeOld(t, filepath.Join(folder, filepath.FromSlash(key)), []byte("planted "+key), time.Since(made))
			planted = append(planted, key)
		}
	}
	env := map[string]string{
		api.EnvEndpointURL:     s.Endpoint,
		api.EnvAccessKeyID:     s.AccessKeyID,
		api.EnvSecretAccessKey: s.SecretAccessKey,
		envBlockstorePath:      s.BlockstorePath,
		envNow:                 h.Built.Add(3 * layoutDay).Format(time.RFC3339),
	}
	const memory = 8 << 20
	args := []string{"gc", "--repo", h.Repo, "--json", "--memory", strconv.Itoa(memory)}
	bucket, err := fileblob.OpenBucket(folder, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	candidates := func(runID string) map[string]bool {
		t.Helper()
		out := map[string]bool{}
		for k, err := range sweep.Candidates(t.Context(), bucket, lakegc.DefaultStoragePrefix, runID) {
			if err != nil {
				t.Fatalf("candidates of %s: %v", runID, err)
			}
			out[k] = true
		}
		return out
	}
	rssBound := func(p process, what string) {
		t.Helper()
		if raceEnabled {
			return
		}
		if p.maxRSS == 0 || p.maxRSS > memory+64<<20 {
			t.Errorf("%s: peak resident set %d MiB, budget %d MiB + 64 MiB", what, p.maxRSS>>20, memory>>20)
		}
	}

	full := startCommand(t, env, args...)()
	rssBound(full, "single run")
	want := candidates(full.out.RunID)
	for _, k := range planted {
		if !want[k] {
			t.Fatalf("the single run does not mark planted garbage %s", k)
		}
	}
	for _, o := range h.Garbage() {
		if !want[o.Key] {
			t.Fatalf("the single run does not mark the history's garbage %s", o.Key)
		}
	}
	t.Logf("single run %s: %d candidates, %d listed, peak RSS %d MiB", full.out.RunID, len(want), full.out.Mark.Listed, full.maxRSS>>20)

	shardRuns := map[int][]string{} // shard count → the runs, by index
	for k, n := range []int{2, 3, 5} {
		// Each split a minute after the one before, as runs follow one
		// another: the pinned clock would otherwise start them all in the
		// same second, and a later split's runs supersede an earlier's.
		env := with(env, envNow, h.Built.Add(3*layoutDay+time.Duration(k+1)*time.Minute).Format(time.RFC3339))
		// Shards given by flag, and as an Indexed Job's pods (n = 3).
		waits := make([]func() process, n)
		for i := range n {
			if n == 3 {
				waits[i] = startCommand(t, with(env, envCompletionIndex, strconv.Itoa(i), envCompletions, "3"), args...)
			} else {
				// Pods start when they will: each shard's clock a few
				// seconds after the one before, so each has its own cutoff.
				env := with(env, envNow, h.Built.Add(3*layoutDay+time.Duration(k+1)*time.Minute+time.Duration(2*i)*time.Second).Format(time.RFC3339))
				waits[i] = startCommand(t, env, append(args, "--shard", fmt.Sprintf("%d/%d", i, n))...)
			}
		}
		union := map[string]bool{}
		runs := map[string]bool{}
		var ids []string
		var deleted int64
		for i, wait := range waits {
			p := wait()
			sum := p.out.Mark.Summary
			if sum.ShardCount != n || sum.ShardIndex != i {
				t.Fatalf("shard %d of %d: summary says shard %d of %d", i, n, sum.ShardIndex, sum.ShardCount)
			}
			rssBound(p, fmt.Sprintf("shard %d of %d", i, n))
			if runs[p.out.RunID] || p.out.RunID == full.out.RunID {
				t.Fatalf("shard %d of %d: run ID %s used twice", i, n, p.out.RunID)
			}
			runs[p.out.RunID] = true
			ids = append(ids, p.out.RunID)
			got := candidates(p.out.RunID)
			if int64(len(got)) != sum.NumDeletedObjects {
				t.Errorf("shard %d of %d: %d candidates, summary says %d", i, n, len(got), sum.NumDeletedObjects)
			}
			deleted += sum.NumDeletedObjects
			for k := range got {
				if union[k] {
					t.Errorf("%d shards: %s is a candidate of two", n, k)
				}
				union[k] = true
				if a, err := pathprovider.Parse(k); err == nil && a.Slice != "" {
					if owner := sweep.SliceShard(a.Slice, n); owner != i {
						t.Errorf("shard %d of %d marks %s, of shard %d's slice", i, n, k, owner)
					}
				}
			}
			t.Logf("shard %d of %d, run %s: %d candidates, %d slices listed, peak RSS %d MiB", i, n, p.out.RunID, len(got), sum.SlicesListed, p.maxRSS>>20)
		}
		if !maps.Equal(union, want) {
			t.Errorf("%d shards: union of %d candidates, single run %d; only the shards: %v; only the single run: %v",
				n, len(union), len(want), onlyIn(union, want), onlyIn(want, union))
		}
		if deleted != full.out.Mark.Summary.NumDeletedObjects {
			t.Errorf("%d shards: %d candidates in their summaries, single run %d", n, deleted, full.out.Mark.Summary.NumDeletedObjects)
		}
		shardRuns[n] = slices.Clone(ids)
		// The combined summary, the final step of a sharded run.
		slices.Reverse(ids)
		comb, err := host.CombineShards(t.Context(), bucket, ids...)
		if fs := full.out.Mark.Summary; err != nil || comb.NumDeletedObjects != fs.NumDeletedObjects || comb.NumKeptObjects != fs.NumKeptObjects ||
			comb.NumYoungObjects != fs.NumYoungObjects || comb.SlicesListed != fs.SlicesListed {
			t.Errorf("%d shards: combined %+v (%v), single run %+v", n, comb, err, fs)
		}
		// And through the command, which refuses a shard short.
		var stdout, stderr bytes.Buffer
		if code := run(t.Context(), append([]string{"shards", "--repo", h.Repo, "--json"}, ids...), envOf(env), &stdout, &stderr); code != exitOK {
			t.Fatalf("lakegc shards: exit %d\n%s", code, stderr.String())
		}
		var cmdSum host.ShardsSummary
		if err := json.Unmarshal(stdout.Bytes(), &cmdSum); err != nil || comb == nil || !slices.Equal(cmdSum.RunIDs, comb.RunIDs) || cmdSum.NumDeletedObjects != comb.NumDeletedObjects {
			t.Errorf("lakegc shards: %s (%v), CombineShards %+v", stdout.String(), err, comb)
		}
		stderr.Reset()
		if code := run(t.Context(), append([]string{"shards", "--repo", h.Repo}, ids[1:]...), envOf(env), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "missing") {
			t.Errorf("lakegc shards without one shard: exit %d, %s", code, stderr.String())
		}
	}

	// Dry runs swept later, run by run (lakegc sweep --run): the 5 shards'
	// runs but shard 2's; the shards of one split do not supersede each
	// other although each had its own export and cutoff. A run of the
	// 2-shard split is superseded by the later splits' runs (exit 4).
	h.VerifyBeforeGC(t, s)
	sweepRun := func(id string) (int, *gcOutput, string) {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"sweep", "--repo", h.Repo, "--json", "--run", id}, envOf(env), &stdout, &stderr)
		var rep gcOutput
		if code == exitOK {
			if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
				t.Fatalf("lakegc sweep --run %s: %v\n%s", id, err, stdout.String())
			}
		}
		return code, &rep, stderr.String()
	}
	var sweptRuns int64
	for i, id := range shardRuns[5] {
		if i == 2 {
			continue
		}
		code, rep, logs := sweepRun(id)
		if code != exitOK || rep.Sweep == nil || rep.Sweep.Failed+rep.Sweep.Refused != 0 {
			t.Fatalf("lakegc sweep --run %s (shard %d of 5): exit %d, %+v\n%s", id, i, code, rep.Sweep, logs)
		}
		sweptRuns += rep.Sweep.Deleted
	}
	if code, _, logs := sweepRun(shardRuns[2][0]); code != exitRefused || !strings.Contains(logs, "supersede") {
		t.Errorf("lakegc sweep --run of shard 0 of 2 after later splits: exit %d\n%s", code, logs)
	}

	// The rest: each process sweeps its own shard, all at once.
	const n = 4
	env = with(env, envNow, h.Built.Add(3*layoutDay+10*time.Minute).Format(time.RFC3339))
	waits := make([]func() process, n)
	for i := range n {
		waits[i] = startCommand(t, env, append(args, "--sweep", "--shard", fmt.Sprintf("%d/%d", i, n))...)
	}
	var swept int64
	for i, wait := range waits {
		p := wait()
		if p.out.Sweep == nil || p.out.Sweep.Failed+p.out.Sweep.Refused != 0 {
			t.Fatalf("shard %d: sweep %+v", i, p.out.Sweep)
		}
		swept += p.out.Sweep.Deleted
	}
	if sweptRuns == 0 || swept == 0 || sweptRuns+swept != int64(len(want)) {
		t.Errorf("lakegc sweep --run deleted %d objects and the sweeping shards %d; the single run marked %d", sweptRuns, swept, len(want))
	}
	h.VerifyAfterGC(t, s)
	for _, k := range planted {
		if _, err := os.Stat(filepath.Join(folder, filepath.FromSlash(k))); !os.IsNotExist(err) {
			t.Errorf("planted garbage %s: %v after the shards' sweeps", k, err)
		}
	}
}

// with is env with the pairs kv added.
func with(env map[string]string, kv ...string) map[string]string {
	out := maps.Clone(env)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// onlyIn lists a's keys not in b, sorted, at most 10.
func onlyIn(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), 10)]
}
