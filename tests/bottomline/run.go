package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/s3delete"
	"github.com/lakegc/lakegc/sweep/s3list"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// Options of a run besides its scale.
type Options struct {
	Latency      time.Duration // per request; s3sim.NoLatency for none
	MemoryBudget int64         // Config.MemoryBudget
	TempDir      string        // Config.TempDir
	// ReadRate and WriteRate are the store's rates per prefix (0: S3's).
	ReadRate, WriteRate float64
	PrefixDepth         int // the store's partitions (0: s3sim's default)
	// Concurrency the floor assumes for the mark's listing and the sweep's
	// batches (0: the most sweep's windows reach by default, which Collect
	// does not change: they start lower and widen while the store is slow).
	ListConcurrency, DeleteConcurrency int
	// HTTP runs each cycle through gocloud's s3blob and the AWS SDK v2
	// against the store served over loopback HTTP (s3sim's Serve), as the
	// lakeFS host runs on S3: deletes through sweep/s3delete, listings
	// through sweep/s3list's decoder, or through s3blob's own (the SDK's
	// XML decoder) with SDKList. Without it the cycle calls the store's
	// driver, the request floor.
	HTTP, SDKList bool
	// Parts makes the host give its committed keep set as ranges
	// (lakegc.CommittedParts, read through the store as lakeFS's range
	// cache reads them; see rangeDesc), each of RangeEntries committed
	// objects (0: DefaultRangeEntries); false gives every address
	// (lakegc.Committed alone).
	Parts        bool
	RangeEntries int
	// CPUProfile, if set, is the file of a CPU profile of the cycle (of
	// the optimized second cycle, when there are second cycles).
	CPUProfile string
	// Inventory ("csv" or "parquet") publishes an S3 Inventory report of
	// the namespace in that format before the cycle (s3sim's
	// AddInventory), as of an hour after its objects were written, and
	// runs the cycle from it (Config.Inventory, inventory.OpenS3): the
	// slices within the slice margin of the report are listed, the rest
	// read from the report. "": a mark that lists every slice.
	Inventory string
	// StoreDir, if set, is a folder where the simulated store keeps the
	// objects the cycles write (s3sim.WithDiskOverlay) instead of in
	// memory: the export, the mark's records and candidates, which grow
	// with the namespace. The caller removes it.
	StoreDir string
	// MarkOnly runs the cycle without the sweep (Collect's dry run) and
	// checks the mark's candidates instead of the store's deletions.
	MarkOnly bool
	// OwnMemory runs each second cycle in a child process of its own
	// against the store served over loopback HTTP (as HTTP does, see
	// childCycle), so that the child's peak resident set is the GC's own.
	OwnMemory bool
	// HeapProfile, with OwnMemory, is the prefix of the heap profiles the
	// children write at their peak live heap: HeapProfile+".clean" and
	// HeapProfile+".optimized".
	HeapProfile string
}

// Phase is one step of the cycle, as Config.Progress reports the phases
// of Collect and the steps of the mark and the sweep.
type Phase struct {
	Name     string
	Wall     time.Duration
	Requests s3sim.Stats
	// Floor is the time the requests take at the latency: those made one
	// at a time in full, the mark's listing pages and the sweep's batches
	// divided by their concurrency.
	Floor time.Duration
	// PeakRSS is the process's peak resident set during the phase (VmHWM,
	// reset at its start); PeakHeap the most heap in use sampled;
	// PeakLive the most live heap sampled (runtime/metrics'
	// /gc/heap/live:bytes, the heap the last collection marked: without
	// the garbage the runtime lets grow to GOGC's target).
	PeakRSS, PeakHeap, PeakLive int64
	// CPU is the process's user and system time during the phase: a phase
	// whose CPU is near its wall time is bound by the processor (on a
	// machine others share, by its share of it).
	CPU time.Duration
	// Waited is how long the process's threads were ready to run and
	// waited for a processor (the run-queue delay of /proc's schedstat):
	// the cost of sharing the machine.
	Waited time.Duration
	// PeakOwn is the most resident set sampled less what the simulated
	// store held in memory at the sample (its overlay of written objects
	// and its generated inventory files): an estimate of the GC's own
	// resident set, every 20 ms.
	PeakOwn int64
	// PeakTmp is the most disk the cycle's temporary folder (the spill
	// files, and an inventory's Parquet file while read) took, sampled
	// every 100 ms.
	PeakTmp int64
	// InvGets counts the GETs of the inventory report's files.
	InvGets int64
}

// Result is a run's figures.
type Result struct {
	Scale   Scale
	Opts    Options
	Report  *lakegc.Report
	Phases  []Phase
	Total   Phase
	Overlay int64        // bytes written to the store, held in memory
	Store   *s3sim.Store // nil for Second.Clean, whose clone is let go
	Host    *host
	// RangesRead counts the ranges the cycle read, with Options.Parts, and
	// RangeHits and RangeMisses their opens (Collect may open a range more
	// than once) that read the range's cache, and its table (then cached).
	RangesRead, RangeHits, RangeMisses int
	DataList                           int64 // list pages of the slices' folders
	// LoadStart and LoadEnd are the machine's load average.
	LoadStart, LoadEnd string
	// StartHeap and StartRSS are the heap in use and the resident set at
	// the start of the cycle, after a forced collection: what earlier
	// cycles left, the store's overlay (StartOverlay) above all.
	StartHeap, StartRSS, StartOverlay int64
	// Published is the inventory report the cycle ran from (nil: none),
	// InvGets the GETs of its files, manifest included.
	Published *Published
	InvGets   int64
	// StoreDisk is the disk of Options.StoreDir at the end of the cycle.
	StoreDisk int64
	// Check is nil when exactly the garbage was deleted (or, with
	// MarkOnly, marked): checked by the inventory runs.
	Check error
	// Child is set when the cycle ran in a child process of its own
	// (Options.OwnMemory): then the phases' resident set, CPU and waits,
	// StartHeap and StartRSS are the child's, and Total.PeakRSS is the
	// GC's own peak (with the synthetic host and the S3 client).
	Child bool
	// Profiled is the child's live heap at its heap profile, with
	// Options.HeapProfile, and Attributed the profile's in-use bytes by
	// whose code allocated them (attributeProfile).
	Profiled   int64
	Attributed map[string]int64
}

// bench is a repository and its store, ready for cycles.
type bench struct {
	o         Options
	h         *host
	store     *s3sim.Store
	dataLists *atomic.Int64 // list pages of the slices' folders, of the store and its clones
	second    bool          // second cycles follow (CPUProfile profiles the optimized one)
	churn     float64       // the churn applied before the second cycles
	invGets   *atomic.Int64 // GETs of the inventory report's files
	published *Published    // the inventory report, if one was published
}

// newBench builds the repository and its store, with the rules.
func newBench(ctx context.Context, sc Scale, o Options) (*bench, error) {
	h, err := newHost(sc, time.Now())
	if err != nil {
		return nil, err
	}
	if o.RangeEntries < 0 {
		return nil, fmt.Errorf("range entries %d: positive, or 0 for %d", o.RangeEntries, DefaultRangeEntries)
	}
	h.rangeN, h.tables = o.RangeEntries, o.Parts
	dataLists, invGets := new(atomic.Int64), new(atomic.Int64)
	opts := []s3sim.Option{s3sim.WithLatency(o.Latency), s3sim.WithRates(o.ReadRate, o.WriteRate), s3sim.WithPrefixDepth(o.PrefixDepth)}
	if o.StoreDir != "" {
		opts = append(opts, s3sim.WithDiskOverlay(o.StoreDir))
	}
	store, err := s3sim.New(h.description(), append(opts, s3sim.WithObserver(func(r s3sim.Request) {
		switch {
		case r.Kind == "list" && strings.HasPrefix(r.Key, "data/") && strings.Count(r.Key, "/") == 2:
			dataLists.Add(1)
		case r.Kind == "get" && isInventoryKey(r.Key):
			invGets.Add(1)
		}
	}))...)
	if err != nil {
		return nil, err
	}
	bucket := store.Bucket()
	defer bucket.Close()
	if err := retention.NewRulesStore(bucket).Save(ctx, rules); err != nil {
		return nil, err
	}
	if o.Parts {
		if err := h.writeTables(ctx, store); err != nil {
			return nil, err
		}
	}
	bn := &bench{o: o, h: h, store: store, dataLists: dataLists, invGets: invGets}
	if o.Inventory != "" {
		if bn.published, err = bn.publishInventory(); err != nil {
			return nil, err
		}
	}
	return bn, nil
}

// run builds the repository and runs one cycle of Collect through it, with
// the sweep.
func run(ctx context.Context, sc Scale, o Options) (*Result, error) {
	bn, err := newBench(ctx, sc, o)
	if err != nil {
		return nil, err
	}
	return bn.cycle(ctx, bn.store, false)
}

// cycle runs a cycle of Collect, with the sweep, against store (bn.store or
// a clone of it): an optimized one if asked, one from the inventory report
// if bn published one and store is bn.store.
func (bn *bench) cycle(ctx context.Context, store *s3sim.Store, optimized bool) (*Result, error) {
	tmp, err := mkTemp(bn.o.TempDir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bucket := store.Bucket()
	var (
		deleter     sweep.BatchDeleter = store
		markOptions []sweep.MarkOption
	)
	if bn.o.HTTP {
		srv, err := store.Serve("bottomline")
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		if bucket, err = srv.OpenBucket(ctx); err != nil {
			return nil, err
		}
		if deleter, err = s3delete.FromBucket(bucket); err != nil {
			return nil, err
		}
		if !bn.o.SDKList {
			l, err := s3list.FromBucket(bucket)
			if err != nil {
				return nil, err
			}
			markOptions = append(markOptions, sweep.WithPageLister(l))
		}
	}
	defer bucket.Close()
	settle()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	startRSS := currentRSS(self)
	load, lists, overlay, invGets := loadAverage(), bn.dataLists.Load(), store.OverlayBytes(), bn.invGets.Load()
	var inv sweep.Inventory
	pub := bn.published
	if store != bn.store {
		pub = nil
	}
	if pub != nil {
		r, err := openInventory(ctx, bucket, pub, time.Now(), tmp)
		if err != nil {
			return nil, err
		}
		inv = r
	}
	// The host marked the repository's folder when it created it.
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: "s3://bottomline/repo"}); err != nil {
		return nil, err
	}
	var committed lakegc.Committed = bn.h
	ph := &partsHost{host: bn.h, bucket: bucket}
	if bn.o.Parts {
		committed = ph
	}
	if bn.o.CPUProfile != "" && (optimized || !bn.second) {
		f, err := os.Create(bn.o.CPUProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	rec := newRecorder(store, bn.o, tmp, bn.invGets, self)
	defer rec.stop()
	rep, err := lakegc.Collect(ctx, lakegc.Host{Staging: bn.h, Commits: bn.h, Committed: committed}, lakegc.Config{
		Bucket:       bucket,
		Namespace:    "s3://bottomline/repo",
		Repository:   "bottomline",
		MemoryBudget: bn.o.MemoryBudget,
		TempDir:      tmp,
		Sweep:        !bn.o.MarkOnly,
		BatchDeleter: deleter,
		MarkOptions:  markOptions,
		Progress:     rec.progress,
		Optimized:    optimized,
		Inventory:    inv,
	})
	rec.finish()
	if err != nil {
		return nil, err
	}
	res := &Result{Scale: bn.h.sc, Opts: bn.o, Report: rep, Phases: rec.phases, Total: rec.total,
		Overlay: store.OverlayBytes(), Store: store, Host: bn.h, DataList: bn.dataLists.Load() - lists,
		RangesRead: len(ph.ranges), RangeHits: ph.hits, RangeMisses: ph.misses,
		LoadStart: load, LoadEnd: loadAverage(), StartHeap: int64(ms.HeapAlloc), StartRSS: startRSS,
		StartOverlay: overlay, Published: pub, InvGets: bn.invGets.Load() - invGets}
	if bn.o.StoreDir != "" {
		res.StoreDisk = dirBytes(bn.o.StoreDir)
	}
	if pub != nil {
		if bn.o.MarkOnly {
			res.Check = checkCandidates(ctx, bn.h, bucket, rep.RunID)
		} else {
			res.Check = checkDeleted(bn.h, nil, store)
		}
	}
	return res, nil
}

// settle collects what earlier cycles left and returns the freed memory
// to the system, so that a cycle's resident set starts from what is live
// (the store's above all). gocloud's readers and writers have finalizers:
// what they reach (a clone of the store, through its bucket) outlives
// the first collection and goes at a later one, once the finalizers ran.
func settle() {
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizers' goroutine
	}
	debug.FreeOSMemory()
}

// recorder splits the run into phases at each change of Progress's phase
// or step, with the requests, the time and the peak memory of each.
type recorder struct {
	store *s3sim.Store
	opts  Options
	// proc is the process whose resident set, CPU and waits the phases
	// take: "self", or a child's pid, whose heap figures come from its
	// messages (childPhase).
	proc    string
	tmp     *dirSampler
	invGets *atomic.Int64

	mu       sync.Mutex
	name     string
	start    time.Time
	stats    s3sim.Stats
	cpu      time.Duration
	waited   time.Duration
	peakHeap int64
	peakLive int64
	peakOwn  int64
	phases   []Phase
	total    Phase
	begin    time.Time
	first    s3sim.Stats
	gets0    int64 // invGets at the phase's start
	done     chan struct{}
	wg       sync.WaitGroup
}

func newRecorder(store *s3sim.Store, o Options, tmp string, invGets *atomic.Int64, proc string) *recorder {
	r := &recorder{store: store, opts: o, proc: proc, name: lakegc.PhaseExport, start: time.Now(), stats: store.Stats(), done: make(chan struct{}),
		tmp: newDirSampler(tmp, 100*time.Millisecond), invGets: invGets, gets0: invGets.Load()}
	r.begin, r.first, r.cpu, r.waited = r.start, r.stats, cpuTime(proc), runDelay(proc)
	resetPeakRSS(proc)
	r.wg.Add(1)
	go r.sampleHeap()
	return r
}

// sampleHeap samples the heap in use every 20 ms; of a child, only its
// resident set.
func (r *recorder) sampleHeap() {
	defer r.wg.Done()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	var m runtime.MemStats
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for {
		select {
		case <-r.done:
			return
		case <-t.C:
		}
		if r.proc != self {
			own := currentRSS(r.proc)
			r.mu.Lock()
			r.peakOwn = max(r.peakOwn, own)
			r.total.PeakOwn = max(r.total.PeakOwn, own)
			r.mu.Unlock()
			continue
		}
		runtime.ReadMemStats(&m)
		metrics.Read(live)
		own := currentRSS(self) - r.store.OverlayBytes() - r.store.InventoryCacheBytes()
		r.mu.Lock()
		r.peakHeap = max(r.peakHeap, int64(m.HeapInuse))
		r.total.PeakHeap = max(r.total.PeakHeap, int64(m.HeapInuse))
		if live[0].Value.Kind() == metrics.KindUint64 {
			l := int64(live[0].Value.Uint64())
			r.peakLive = max(r.peakLive, l)
			r.total.PeakLive = max(r.total.PeakLive, l)
		}
		r.peakOwn = max(r.peakOwn, own)
		r.total.PeakOwn = max(r.total.PeakOwn, own)
		r.mu.Unlock()
	}
}

func (r *recorder) progress(p lakegc.Progress) {
	name := p.Phase
	if p.Counters.Phase != "" && (p.Phase == lakegc.PhaseMark || p.Phase == lakegc.PhaseSweep) {
		name += "/" + p.Counters.Phase
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != r.name {
		r.cut(name)
	}
}

// childPhase takes a child's message: its peak heap in use and live heap
// since its last message, then its next phase (if it changed; "" at the
// end).
func (r *recorder) childPhase(next string, heap, live int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.peakHeap, r.total.PeakHeap = max(r.peakHeap, heap), max(r.total.PeakHeap, heap)
	r.peakLive, r.total.PeakLive = max(r.peakLive, live), max(r.total.PeakLive, live)
	if next != "" && next != r.name {
		r.cut(next)
	}
}

// cut ends the current phase and starts the next; r.mu is held.
func (r *recorder) cut(next string) {
	// The peak is read and reset first, one right after the other: a
	// peak between the two is lost (the process, a child above all, runs
	// on), and the rest of the cut (the temporary folder's walk) is slow.
	rss := peakRSS(r.proc)
	resetPeakRSS(r.proc)
	now, st, cpu, waited := time.Now(), r.store.Stats(), cpuTime(r.proc), runDelay(r.proc)
	r.total.PeakRSS = max(r.total.PeakRSS, rss)
	gets := r.invGets.Load()
	ph := Phase{Name: r.name, Wall: now.Sub(r.start), Requests: st.Sub(r.stats), PeakRSS: rss, PeakHeap: r.peakHeap, PeakLive: r.peakLive, CPU: cpu - r.cpu, Waited: waited - r.waited,
		PeakTmp: r.tmp.cut(), InvGets: gets - r.gets0, PeakOwn: r.peakOwn}
	r.gets0 = gets
	r.total.PeakTmp = max(r.total.PeakTmp, ph.PeakTmp)
	r.total.InvGets += ph.InvGets
	ph.Floor = r.floor(ph.Name, ph.Requests)
	r.phases = append(r.phases, ph)
	r.total.CPU += ph.CPU
	r.total.Waited += ph.Waited
	r.name, r.start, r.stats, r.peakHeap, r.peakLive, r.peakOwn, r.cpu, r.waited = next, now, st, 0, 0, 0, cpu, waited
}

// floor is the least time the phase's requests take at the latency.
func (r *recorder) floor(name string, q s3sim.Stats) time.Duration {
	lat := max(r.opts.Latency, 0)
	listC, deleteC := r.opts.ListConcurrency, r.opts.DeleteConcurrency
	if listC <= 0 {
		listC = defaultListConcurrency
	}
	if deleteC <= 0 {
		deleteC = defaultDeleteConcurrency
	}
	serial := q.Requests()
	var parallel time.Duration
	switch {
	case strings.HasPrefix(name, lakegc.PhaseMark+"/"):
		// The listing starts while the keep set is read (mark/keep)
		// and ends in mark/list.
		parallel = time.Duration(q.ListPages) * lat / time.Duration(listC)
		serial -= q.ListPages
	case name == lakegc.PhaseSweep+"/delete":
		parallel = time.Duration(q.DeleteBatches) * lat / time.Duration(deleteC)
		serial -= q.DeleteBatches
	}
	return time.Duration(serial)*lat + parallel
}

func (r *recorder) finish() {
	r.mu.Lock()
	r.cut("")
	r.total.Name = "total"
	r.total.Wall = time.Since(r.begin)
	r.total.Requests = r.store.Stats().Sub(r.first)
	for _, p := range r.phases {
		r.total.Floor += p.Floor
	}
	r.mu.Unlock()
	r.stop()
}

func (r *recorder) stop() {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	r.wg.Wait()
	r.tmp.stop()
}

// self names this process in /proc; a child is named by its pid.
const self = "self"

// peakRSS reads VmHWM, the peak resident set, of process proc (self or a
// pid) from /proc; 0 where there is none.
func peakRSS(proc string) int64 { return procStatus(proc, "VmHWM:") }

// procStatus reads a figure in kB of /proc/<proc>/status, in bytes.
func procStatus(proc, field string) int64 {
	f, err := os.Open("/proc/" + proc + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := bytes.CutPrefix(sc.Bytes(), []byte(field)); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// currentRSS reads VmRSS, the resident set, of process proc from /proc; 0
// where there is none.
func currentRSS(proc string) int64 { return procStatus(proc, "VmRSS:") }

// cpuTime is process proc's user and system time so far: of self from
// getrusage, of a child from /proc/<pid>/stat (in the kernel's clock
// ticks, 100 a second; 0 where there is none).
func cpuTime(proc string) time.Duration {
	if proc != self {
		b, err := os.ReadFile("/proc/" + proc + "/stat")
		i := bytes.LastIndexByte(b, ')')
		if err != nil || i < 0 {
			return 0
		}
		// After the command's closing parenthesis: the state (field
		// 3), ..., utime (14) and stime (15).
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 13 {
			return 0
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		return time.Duration(ut+st) * (time.Second / clockTicks)
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTicks is the kernel's clock ticks a second (USER_HZ) of /proc's
// CPU times: 100 on Linux.
const clockTicks = 100

// runDelay sums the run-queue delay of process proc's threads, from
// /proc/<proc>/task/*/schedstat (its second figure, in ns); 0 where there
// is none. A thread that ended takes its delay with it: Go's threads
// rarely end.
func runDelay(proc string) time.Duration {
	tasks, err := os.ReadDir("/proc/" + proc + "/task")
	if err != nil {
		return 0
	}
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + proc + "/task/" + t.Name() + "/schedstat")
		if f := strings.Fields(string(b)); err == nil && len(f) >= 2 {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			sum += n
		}
	}
	return time.Duration(sum)
}

// loadAverage is the first figure of /proc/loadavg, "" where there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return strings.Fields(string(b))[0]
}

// resetPeakRSS resets process proc's VmHWM to its current resident set
// (Linux's clear_refs "5"), so that each phase reads its own peak.
func resetPeakRSS(proc string) {
	_ = os.WriteFile("/proc/"+proc+"/clear_refs", []byte("5"), 0)
}

// printed is the result's table.
func printed(res *Result) string {
	var b strings.Builder
	res.print(&b)
	return b.String()
}

// print writes the result as a table.
func (res *Result) print(w io.Writer) {
	mib := func(b int64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }
	lat := max(res.Opts.Latency, 0) // s3sim.NoLatency is -1ns
	mode := "the store's driver"
	switch {
	case res.Child && res.Opts.SDKList:
		mode = "a child process of its own, over HTTP: s3blob and the SDK, listing decoded by the SDK, deletes by s3delete; rss, cpu and the start's figures are the child's"
	case res.Child:
		mode = "a child process of its own, over HTTP: s3blob and the SDK, listing decoded by s3list, deletes by s3delete; rss, cpu and the start's figures are the child's"
	case res.Opts.HTTP && res.Opts.SDKList:
		mode = "HTTP: s3blob and the SDK, listing decoded by the SDK, deletes by s3delete"
	case res.Opts.HTTP:
		mode = "HTTP: s3blob and the SDK, listing decoded by s3list, deletes by s3delete"
	}
	fmt.Fprintf(w, "objects %d, slices %d, branches %d, commits %d, staged %d, garbage %d; latency %v, memory budget %s MiB; through %s\n",
		res.Scale.Objects, res.Scale.Slices, res.Scale.Branches, res.Scale.Commits, res.Scale.staged(), res.Scale.garbage(),
		lat, mib(res.Opts.MemoryBudget), mode)
	fmt.Fprintf(w, "%-14s %10s %10s %6s %10s %10s %8s %6s %6s %6s %7s %7s %9s %9s %9s %9s %9s\n",
		"phase", "wall", "floor", "x", "cpu", "cpu wait", "lists", "heads", "gets", "puts", "dels", "batches", "rss MiB", "-store", "heap MiB", "live MiB", "tmp MiB")
	for _, p := range append(res.Phases, res.Total) {
		ratio := "-"
		if p.Floor > 0 {
			ratio = fmt.Sprintf("%.2f", float64(p.Wall)/float64(p.Floor))
		}
		q := p.Requests
		fmt.Fprintf(w, "%-14s %10s %10s %6s %10s %10s %8d %6d %6d %6d %7d %7d %9s %9s %9s %9s %9s\n", p.Name,
			p.Wall.Round(time.Millisecond), p.Floor.Round(time.Millisecond), ratio, p.CPU.Round(time.Millisecond), p.Waited.Round(time.Millisecond),
			q.ListPages, q.Heads, q.Gets, q.Puts, q.Deletes, q.DeleteBatches, mib(p.PeakRSS), mib(p.PeakOwn), mib(p.PeakHeap), mib(p.PeakLive), mib(p.PeakTmp))
	}
	r := res.Report
	sw := r.Sweep
	if sw == nil { // a dry run (MarkOnly)
		sw = &lakegc.SweepReport{}
	}
	fmt.Fprintf(w, "load average %s at the start, %s at the end; GOMAXPROCS %d; at the start, after a forced collection: heap %s MiB, RSS %s MiB, store overlay %s MiB\n",
		res.LoadStart, res.LoadEnd, runtime.GOMAXPROCS(0), mib(res.StartHeap), mib(res.StartRSS), mib(res.StartOverlay))
	fmt.Fprintf(w, "exported %d rows in %d files; %d active commits; listed %d, kept %d, marked %d; deleted %d, failed %d; throttled %d; store overlay %s MiB\n",
		r.Export.Rows, r.Export.Files, r.Commits.Active, r.Mark.Listed, r.Mark.Kept, r.Mark.Marked,
		sw.Deleted, sw.Failed, res.Total.Requests.Throttled, mib(res.Overlay))
	keep := "every committed address"
	if res.Opts.Parts {
		keep = fmt.Sprintf("ranges of %d entries: %d in the keep set, %d read, in %d opens (%d from the cache, %d from the table)",
			res.Host.rangeEntries(), len(res.Host.ranges()), res.RangesRead, res.RangeHits+res.RangeMisses, res.RangeHits, res.RangeMisses)
	}
	fmt.Fprintf(w, "committed keep set: %s; mark's keep source %q, %d parts read", keep, r.Mark.Summary.KeepSource, r.Mark.Summary.PartsRead)
	if s := r.Mark.Summary; s.IndexBlocksCopied+s.IndexBlocksDecoded > 0 {
		fmt.Fprintf(w, "; previous committed index: %d blocks copied, %d decoded", s.IndexBlocksCopied, s.IndexBlocksDecoded)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "peak live heap %s MiB, %s MiB above the start's heap; the store's overlay grew %s MiB of it at most\n",
		mib(res.Total.PeakLive), mib(res.Total.PeakLive-res.StartHeap), mib(res.Overlay-res.StartOverlay))
	fmt.Fprintf(w, "list pages %d (of the slices' folders %d); peak temporary disk %s MiB", res.Total.Requests.ListPages, res.DataList, mib(res.Total.PeakTmp))
	if res.Opts.StoreDir != "" {
		fmt.Fprintf(w, "; the store's written objects on disk %s MiB", mib(res.StoreDisk))
	}
	fmt.Fprintln(w)
	res.printInventory(w)
	if res.Published != nil {
		check := "exactly the garbage deleted"
		if res.Opts.MarkOnly {
			check = "exactly the garbage marked"
		}
		if res.Check != nil {
			check = res.Check.Error()
		}
		fmt.Fprintln(w, "check:", check)
	}
}

// defaults of the floor's concurrency: the upper bounds of sweep's windows,
// which Collect uses. The windows start at sweep.DefaultListConcurrency and
// sweep.DefaultDeleteConcurrency and widen while requests are slow, so a
// floor at the starting concurrency would be up to four times too high.
var (
	defaultListConcurrency   = sweep.DefaultMaxListConcurrency
	defaultDeleteConcurrency = sweep.DefaultMaxDeleteConcurrency
)
