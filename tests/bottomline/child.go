package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/sweep/s3delete"
	"github.com/lakegc/lakegc/sweep/s3list"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// A second cycle with Options.OwnMemory runs in a child process of its
// own (the program itself, started again with childEnv set), against the
// store served by the parent over loopback HTTP (s3sim's Serve), through
// s3blob and the AWS SDK v2 as -http runs. The child holds the GC, the
// synthetic host (generated, not held: a few MiB) and the S3 client; the
// parent holds the store, the earlier cycles and the clone. So the
// child's peak resident set (VmHWM, which the parent reads and resets
// through /proc/<pid>) is the GC's own, as a process that runs nothing
// else would have it, with the client it needs.
//
// The child writes its messages (childMsg, a JSON object each) to file
// descriptor 3 and, once done, waits for its standard input to close, so
// that the parent reads its /proc figures before it exits.

// childEnv is the environment variable that makes the program a child
// cycle; its value is the childArgs, in JSON.
const childEnv = "LAKEGC_BOTTOMLINE_CHILD"

// childArgs is what a child cycle is given.
type childArgs struct {
	Scale Scale
	Opts  Options
	Now   time.Time // the host's clock (newHost)
	Churn float64   // the churn the parent applied to its store
	// Slices and NewSlices are the prefixes of the host's slices and of
	// the churn's: a DescendingID holds a counter and the process's id.
	Slices, NewSlices []string
	Optimized         bool
	URL               string // the served store (s3sim.Server.URL)
	Tmp               string // Config.TempDir
	// Profile is the file of a heap profile written at the child's peak
	// live heap ("": none).
	Profile string
}

// childMsg is a message of the child: its peak heap in use and live heap
// since its last message, and then the phase it entered, its start, its
// end or its failure.
type childMsg struct {
	Heap int64 `json:"heap,omitempty"`
	Live int64 `json:"live,omitempty"`
	// Phase is the Progress phase (with the mark's or sweep's step) the
	// child entered.
	Phase string `json:"phase,omitempty"`
	// Start is set in the first message, once the host is built and the
	// bucket open, after a forced collection: the child's resident set and
	// heap in use then.
	Start               bool  `json:"start,omitempty"`
	StartRSS, StartHeap int64 `json:",omitempty"`
	// Done is set in the last message, with the report and the ranges the
	// host read.
	Done                               bool           `json:"done,omitempty"`
	Report                             *lakegc.Report `json:"report,omitempty"`
	RangesRead, RangeHits, RangeMisses int            `json:",omitempty"`
	// Profiled is the live heap of the heap profile written, if any, and
	// Attributed its in-use bytes by whose code allocated them
	// (attribute).
	Profiled   int64            `json:",omitempty"`
	Attributed map[string]int64 `json:",omitempty"`
	Err        string           `json:"err,omitempty"`
}

// childCycle runs a second cycle in a child process against store, served
// over loopback HTTP, and takes its figures: the requests and the slices'
// pages from the store, the resident set, CPU and waits of the child from
// /proc, its heap from its messages.
func (bn *bench) childCycle(ctx context.Context, store *s3sim.Store, optimized bool) (*Result, error) {
	tmp, err := mkTemp(bn.o.TempDir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	srv, err := store.Serve("bottomline")
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	args := childArgs{Scale: bn.h.sc, Opts: bn.o, Now: bn.h.now, Churn: bn.churn, Optimized: optimized, URL: srv.URL(), Tmp: tmp}
	for _, sl := range bn.h.slices {
		args.Slices = append(args.Slices, sl.Prefix)
	}
	if ch := bn.h.ch; ch != nil {
		for _, sl := range ch.slices {
			args.NewSlices = append(args.NewSlices, sl.Prefix)
		}
	}
	if bn.o.HeapProfile != "" {
		args.Profile = bn.o.HeapProfile + map[bool]string{false: ".clean", true: ".optimized"}[optimized]
	}
	js, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"="+string(js))
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = os.Stderr, os.Stderr, []*os.File{wr}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		wr.Close()
		return nil, err
	}
	load, lists, overlay, invGets := loadAverage(), bn.dataLists.Load(), store.OverlayBytes(), bn.invGets.Load()
	if err := cmd.Start(); err != nil {
		wr.Close()
		return nil, err
	}
	wr.Close()
	rec := newRecorder(store, bn.o, tmp, bn.invGets, strconv.Itoa(cmd.Process.Pid))
	defer rec.stop()
	res := &Result{Scale: bn.h.sc, Opts: bn.o, Store: store, Host: bn.h, Child: true, LoadStart: load, StartOverlay: overlay}
	var last childMsg
	dec := json.NewDecoder(bufio.NewReader(rd))
	for {
		var m childMsg
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the child ended before its report")
			}
			stdin.Close()
			return nil, fmt.Errorf("child cycle: %w (%v)", err, cmd.Wait())
		}
		if m.Err != "" {
			stdin.Close()
			_ = cmd.Wait()
			return nil, fmt.Errorf("child cycle: %s", m.Err)
		}
		rec.childPhase(m.Phase, m.Heap, m.Live)
		if m.Start {
			res.StartRSS, res.StartHeap = m.StartRSS, m.StartHeap
		}
		if m.Done {
			last = m
			break
		}
	}
	rec.finish() // while the child waits: its /proc figures are there
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("child cycle: %w", err)
	}
	res.Report, res.Phases, res.Total = last.Report, rec.phases, rec.total
	res.RangesRead, res.RangeHits, res.RangeMisses = last.RangesRead, last.RangeHits, last.RangeMisses
	res.Profiled, res.Attributed = last.Profiled, last.Attributed
	res.Overlay, res.DataList, res.LoadEnd = store.OverlayBytes(), bn.dataLists.Load()-lists, loadAverage()
	res.InvGets = bn.invGets.Load() - invGets
	if bn.o.StoreDir != "" {
		res.StoreDisk = dirBytes(bn.o.StoreDir)
	}
	if res.Report == nil {
		return nil, errors.New("child cycle: no report")
	}
	return res, nil
}

// runChild is the program run as a child cycle, with the childArgs in
// JSON: it runs the cycle and writes its messages to file descriptor 3.
// It returns the exit code.
func runChild(arg string) int {
	// The parent's pipe, checked before anything opens a file: NewFile
	// checks nothing, and the runtime's poller would take a free fd 3.
	var st syscall.Stat_t
	if err := syscall.Fstat(3, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		fmt.Fprintln(os.Stderr, "bottomline child: no file descriptor 3 (the parent's pipe)")
		return 2
	}
	out := os.NewFile(3, "messages")
	c := &child{enc: json.NewEncoder(out)}
	err := c.run(arg)
	if err != nil {
		c.send(childMsg{Err: err.Error()})
		return 1
	}
	// Wait for the parent to read the figures of /proc/<pid>.
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// child is a child cycle's state: its heap sampler and its messages.
type child struct {
	mu             sync.Mutex
	enc            *json.Encoder
	phase          string
	heap, live     int64 // peaks since the last message
	profiled       int64 // live heap of the profile written
	profileAt      time.Time
	profile        string
	attributed     map[string]int64
	profileErr     error
	done, finished chan struct{}
}

// send writes a message with the peaks since the last one, and resets them.
func (c *child) send(m childMsg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m.Heap, m.Live, c.heap, c.live = c.heap, c.live, 0, 0
	_ = c.enc.Encode(m)
}

func (c *child) run(arg string) error {
	var a childArgs
	if err := json.Unmarshal([]byte(arg), &a); err != nil {
		return fmt.Errorf("bottomline child: %w", err)
	}
	h, err := newHost(a.Scale, a.Now)
	if err != nil {
		return err
	}
	h.rangeN, h.tables = a.Opts.RangeEntries, a.Opts.Parts
	if err := renameSlices(h.slices, a.Slices); err != nil {
		return err
	}
	ch, err := newChurn(h, a.Churn) // its late objects in the renamed slices
	if err != nil {
		return err
	}
	if err := renameSlices(ch.slices, a.NewSlices); err != nil {
		return err
	}
	h.ch = ch // as churn.apply left the parent's host
	ctx := context.Background()
	bucket, err := s3sim.OpenURL(ctx, a.URL, "bottomline")
	if err != nil {
		return err
	}
	defer bucket.Close()
	deleter, err := s3delete.FromBucket(bucket)
	if err != nil {
		return err
	}
	var markOptions []sweep.MarkOption
	if !a.Opts.SDKList {
		l, err := s3list.FromBucket(bucket)
		if err != nil {
			return err
		}
		markOptions = append(markOptions, sweep.WithPageLister(l))
	}
	var committed lakegc.Committed = h
	ph := &partsHost{host: h, bucket: bucket}
	if a.Opts.Parts {
		committed = ph
	}
	if a.Opts.CPUProfile != "" && a.Optimized {
		f, err := os.Create(a.Opts.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.profile, c.phase = a.Profile, lakegc.PhaseExport
	c.send(childMsg{Start: true, StartRSS: currentRSS(self), StartHeap: int64(ms.HeapInuse)})
	c.done, c.finished = make(chan struct{}), make(chan struct{})
	go c.sample()
	// The host marked the repository's folder when it created it.
	if err := lakegc.InitNamespace(ctx, lakegc.Config{Bucket: bucket, Namespace: "s3://bottomline/repo"}); err != nil {
		return err
	}
	rep, err := lakegc.Collect(ctx, lakegc.Host{Staging: h, Commits: h, Committed: committed}, lakegc.Config{
		Bucket:       bucket,
		Namespace:    "s3://bottomline/repo",
		Repository:   "bottomline",
		MemoryBudget: a.Opts.MemoryBudget,
		TempDir:      a.Tmp,
		Sweep:        true,
		BatchDeleter: deleter,
		MarkOptions:  markOptions,
		Progress:     c.progress,
		Optimized:    a.Optimized,
	})
	close(c.done)
	<-c.finished
	if err != nil {
		return err
	}
	if c.profileErr != nil {
		return c.profileErr
	}
	c.send(childMsg{Done: true, Report: rep, RangesRead: len(ph.ranges), RangeHits: ph.hits, RangeMisses: ph.misses,
		Profiled: c.profiled, Attributed: c.attributed})
	return nil
}

// renameSlices gives slices the parent's prefixes, and the names that
// go with them.
func renameSlices(slices []s3sim.Slice, prefixes []string) error {
	if len(prefixes) != len(slices) {
		return fmt.Errorf("bottomline child: %d slices' prefixes for %d slices", len(prefixes), len(slices))
	}
	for i := range slices {
		slices[i].Prefix, slices[i].Name = prefixes[i], s3sim.XIDNames(prefixes[i], slices[i].ModTime)
	}
	return nil
}

// progress sends a message at each change of phase or step, as
// recorder.progress cuts the phases.
func (c *child) progress(p lakegc.Progress) {
	name := p.Phase
	if p.Counters.Phase != "" && (p.Phase == lakegc.PhaseMark || p.Phase == lakegc.PhaseSweep) {
		name += "/" + p.Counters.Phase
	}
	c.mu.Lock()
	changed := name != c.phase
	c.phase = name
	c.mu.Unlock()
	if changed {
		c.send(childMsg{Phase: name})
	}
}

// sample samples the heap in use and the live heap every 20 ms, as
// recorder.sampleHeap does, and writes the heap profile (if asked) each
// time the live heap reaches a new peak, at most every 200 ms: the
// profile's in-use figures are of the last collection, as the live heap.
func (c *child) sample() {
	defer close(c.finished)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	var m runtime.MemStats
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		runtime.ReadMemStats(&m)
		metrics.Read(live)
		var l int64
		if live[0].Value.Kind() == metrics.KindUint64 {
			l = int64(live[0].Value.Uint64())
		}
		c.mu.Lock()
		c.heap, c.live = max(c.heap, int64(m.HeapInuse)), max(c.live, l)
		c.mu.Unlock()
		if c.profile != "" && c.profileErr == nil && l > c.profiled && time.Since(c.profileAt) >= 200*time.Millisecond {
			c.profiled, c.profileAt = l, time.Now()
			c.attributed, c.profileErr = writeHeapProfile(c.profile)
		}
	}
}

// writeHeapProfile writes the heap profile to file and returns its in-use
// bytes by attribute.
func writeHeapProfile(file string) (map[string]int64, error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return attributeHeap()
}

// Attributes of a heap profile's in-use bytes, by the innermost frame of
// this module in the allocation's stack: the library's packages (lakegc),
// the bottom line's own code (harness: the synthetic host, the range
// reader), or none of them (other: the runtime, the S3 client's
// connections and buffers, gocloud).
const (
	attrLakegc  = "lakegc"
	attrHarness = "harness"
	attrOther   = "other"
)

// attributeHeap sums the heap profile's in-use bytes (as of the last
// collection, scaled up from the sampled allocations as pprof scales them)
// by attribute.
func attributeHeap() (map[string]int64, error) {
	var b strings.Builder
	if err := pprof.Lookup("heap").WriteTo(&b, 1); err != nil {
		return nil, err
	}
	return attributeProfile(b.String(), runtime.MemProfileRate), nil
}

// attributeProfile sums the in-use bytes of a heap profile in the legacy
// text form (pprof's debug=1) by attribute; rate is the sampling rate,
// runtime.MemProfileRate.
func attributeProfile(text string, rate int) map[string]int64 {
	sums := map[string]int64{}
	var (
		objects, bytes float64
		attr           string
		inRecord       bool
	)
	flush := func() {
		if inRecord && objects > 0 && bytes > 0 {
			scale := 1.0
			if rate > 1 {
				scale = 1 / (1 - math.Exp(-bytes/objects/float64(rate)))
			}
			if attr == "" {
				attr = attrOther
			}
			sums[attr] += int64(bytes * scale)
		}
		inRecord, attr = false, ""
	}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "#\t"):
			if !inRecord || attr != "" {
				continue
			}
			f := strings.Split(line, "\t")
			if len(f) < 3 {
				continue
			}
			switch fn := f[2]; {
			case strings.HasPrefix(fn, "main."), strings.HasPrefix(fn, "github.com/lakegc/lakegc/tests/"):
				attr = attrHarness
			case strings.HasPrefix(fn, "github.com/lakegc/lakegc.") || strings.HasPrefix(fn, "github.com/lakegc/lakegc/"):
				attr = attrLakegc
			}
		case strings.Contains(line, " @ ") && !strings.HasPrefix(line, "heap profile:"):
			flush()
			// "inuse objects: inuse bytes [alloc objects: alloc bytes] @ pcs"
			var o, n int64
			if _, err := fmt.Sscanf(line, "%d: %d", &o, &n); err == nil {
				objects, bytes, inRecord = float64(o), float64(n), true
			}
		default:
			flush()
		}
	}
	flush()
	return sums
}
