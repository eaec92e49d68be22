package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/xid"
	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/inventory"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// The inventory report of -inventory: published into the store itself
// under invPrefix, as of invLead after the objects' modification time.
const (
	invPrefix = "inventory"
	invConfig = "bottomline"
	// invLead puts the report an hour after the objects were written and
	// so after every slice started: the slices that started within the
	// slice margin of it (the 25 newest, an hour apart, with the default
	// margin of 25 h 5 min) are listed through the store, the rest taken
	// from the report.
	invLead = time.Hour
	// invNamespace is the namespace as the report's keys spell it: the
	// simulated store is the namespace, its keys at the bucket's root.
	invNamespace = "s3://bottomline"
)

// parseInventoryFormat reads -inventory's argument.
func parseInventoryFormat(s string) (s3sim.InventoryFormat, error) {
	switch s {
	case "csv":
		return s3sim.InventoryCSV, nil
	case "parquet":
		return s3sim.InventoryParquet, nil
	}
	return 0, fmt.Errorf("inventory format %q: csv or parquet", s)
}

// Published is the report -inventory publishes before the cycle, and what
// publishing it cost (s3sim generates every data file once for the
// manifest's sizes and MD5s, on all processors; no request).
type Published struct {
	Inv   *s3sim.Inventory
	Bytes int64 // of the data files
	Wall  time.Duration
	CPU   time.Duration
}

// publishInventory publishes the report of bn's store as of invLead after
// its objects' time, in o.Inventory's format.
func (bn *bench) publishInventory() (*Published, error) {
	format, err := parseInventoryFormat(bn.o.Inventory)
	if err != nil {
		return nil, err
	}
	start, cpu := time.Now(), cpuTime(self)
	inv, err := bn.store.AddInventory(s3sim.InventoryConfig{
		SourceBucket: "bottomline", DestinationPrefix: invPrefix, ConfigID: invConfig,
		Time: bn.h.now.Add(-objectAge + invLead), Format: format,
	})
	if err != nil {
		return nil, err
	}
	p := &Published{Inv: inv, Wall: time.Since(start), CPU: cpuTime(self) - cpu}
	for _, f := range inv.Files {
		p.Bytes += f.Size
	}
	return p, nil
}

// openInventory opens the published report through bucket (the cycle's:
// the store's driver, or s3blob over HTTP), as the lakeFS host's
// --inventory does, its Parquet files copied into tmp.
func openInventory(ctx context.Context, bucket *blob.Bucket, p *Published, now time.Time, tmp string) (*inventory.Report, error) {
	return inventory.OpenS3(ctx, bucket, p.Inv.ManifestKey, invNamespace,
		inventory.WithMaxAge(objectAge+24*time.Hour), inventory.WithClock(func() time.Time { return now }),
		inventory.WithTempDir(tmp))
}

// isInventoryKey reports whether a request's key is the report's.
func isInventoryKey(key string) bool { return strings.HasPrefix(key, invPrefix+"/") }

// dirSampler samples the bytes a folder's files take on disk (their
// blocks), every interval, keeping the peak since the last cut and in
// all.
type dirSampler struct {
	dir       string
	peak, all atomic.Int64
	done      chan struct{}
	wg        sync.WaitGroup
}

func newDirSampler(dir string, every time.Duration) *dirSampler {
	d := &dirSampler{dir: dir, done: make(chan struct{})}
	d.sample()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-d.done:
				return
			case <-t.C:
				d.sample()
			}
		}
	}()
	return d
}

func (d *dirSampler) sample() {
	n := dirBytes(d.dir)
	for p := d.peak.Load(); n > p && !d.peak.CompareAndSwap(p, n); p = d.peak.Load() {
	}
	for p := d.all.Load(); n > p && !d.all.CompareAndSwap(p, n); p = d.all.Load() {
	}
}

// cut returns the peak since the last cut and starts the next from the
// folder's size now.
func (d *dirSampler) cut() int64 {
	p := d.peak.Swap(0)
	d.sample()
	return p
}

func (d *dirSampler) stop() {
	select {
	case <-d.done:
	default:
		close(d.done)
		d.wg.Wait()
		d.sample()
	}
}

// dirBytes is the disk the files under dir take (their 512-byte blocks;
// their sizes where the system gives no blocks). Files removed during the
// walk are skipped.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		} else {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// checkCandidates checks, without a sweep, that the run's candidates are
// exactly the garbage: each one a garbage object, none twice, as many as
// the garbage. It holds a bit a garbage object.
func checkCandidates(ctx context.Context, h *host, bucket *blob.Bucket, runID string) error {
	slice := make(map[string]int, len(h.slices))
	for s, sl := range h.slices {
		slice[sl.Prefix] = s
	}
	seen := make([]uint64, (h.sc.garbage()+63)/64)
	var n int
	var wrong []string
	note := func(format string, args ...any) {
		if len(wrong) < 5 {
			wrong = append(wrong, fmt.Sprintf(format, args...))
		}
	}
	for key, err := range sweep.Candidates(ctx, bucket, lakegc.DefaultStoragePrefix, runID) {
		if err != nil {
			return err
		}
		n++
		g, ok := h.position(slice, key)
		switch {
		case !ok:
			note("candidate %s: not an object of the namespace", key)
		case g%period >= garbagePer:
			note("candidate %s: live object %d", key, g)
		case seen[g/period/64]&(1<<(g/period%64)) != 0:
			note("candidate %s: twice", key)
		default:
			seen[g/period/64] |= 1 << (g / period % 64)
			continue
		}
	}
	if len(wrong) > 0 || n != h.sc.garbage() {
		return fmt.Errorf("%w: %d candidates, want the %d garbage objects: %s", errCheck, n, h.sc.garbage(), strings.Join(wrong, "; "))
	}
	return nil
}

// position returns the object index g of key, an address of h's slices.
func (h *host) position(slice map[string]int, key string) (int, bool) {
	i := strings.LastIndexByte(key, '/')
	s, ok := slice[key[:i+1]]
	if !ok {
		return 0, false
	}
	id, err := xid.FromString(key[i+1:])
	if err != nil {
		return 0, false
	}
	var j int
	for _, b := range id[7:12] {
		j = j<<8 | int(b)
	}
	if j >= h.slices[s].Count || h.slices[s].Name(j) != key[i+1:] {
		return 0, false
	}
	return s*h.perSlice + j, true
}

// printInventory writes the inventory run's own figures.
func (res *Result) printInventory(w io.Writer) {
	p := res.Published
	if p == nil {
		return
	}
	sum := res.Report.Mark.Summary
	fmt.Fprintf(w, "inventory %s: %d rows in %d files, %.1f MiB, published in %s (%s CPU) before the cycle; report time %s, read %d objects in %d GETs; slices listed %d, taken from the report %d\n",
		res.Opts.Inventory, p.Inv.Rows, len(p.Inv.Files), float64(p.Bytes)/(1<<20), p.Wall.Round(time.Millisecond), p.CPU.Round(time.Millisecond),
		sum.InventoryTime.Format(time.RFC3339), sum.InventoryObjects, res.InvGets, sum.SlicesListed, sum.SlicesSkipped)
}

// mkTemp makes the cycle's own temporary folder under dir ("": the
// system's), whose size the recorder samples.
func mkTemp(dir string) (string, error) {
	return os.MkdirTemp(dir, "bottomline-")
}

// runCompare builds the repository and its store, publishes the report,
// and runs two clean cycles from the same state: one from the report,
// against the store, then one that lists every slice, against a clone of
// the store taken before (s3sim's Store.Clone, report included). The cycle
// from the report runs first, so that what the other leaves in the
// process (the heap at its start says how much) does not weigh on its
// figures. Each checks that exactly the garbage is deleted (or marked).
func runCompare(ctx context.Context, sc Scale, o Options) (list, inv *Result, err error) {
	bn, err := newBench(ctx, sc, o)
	if err != nil {
		return nil, nil, err
	}
	clone := bn.store.Clone()
	if inv, err = bn.cycle(ctx, bn.store, false); err != nil {
		return nil, nil, fmt.Errorf("cycle from the inventory: %w", err)
	}
	if list, err = bn.cycle(ctx, clone, false); err != nil {
		return nil, nil, fmt.Errorf("LIST-based cycle: %w", err)
	}
	if o.MarkOnly {
		list.Check = checkCandidates(ctx, bn.h, clone.Bucket(), list.Report.RunID)
	} else {
		list.Check = checkDeleted(bn.h, nil, clone)
	}
	return list, inv, nil
}

// printCompare writes both cycles' tables and their ratios.
func printCompare(w io.Writer, list, inv *Result) {
	fmt.Fprintln(w, "== LIST-based clean cycle (a clone of the store, run second)")
	list.print(w)
	check := "exactly the garbage deleted"
	if list.Opts.MarkOnly {
		check = "exactly the garbage marked"
	}
	if list.Check != nil {
		check = list.Check.Error()
	}
	fmt.Fprintln(w, "check:", check)
	fmt.Fprintln(w, "== clean cycle from the inventory report (run first)")
	inv.print(w)
	fmt.Fprintf(w, "inventory / LIST-based: LIST requests %d / %d (%.2f%%), wall %.2fx, mark's wall %.2fx, CPU %.2fx, peak temporary disk %.2fx\n",
		inv.Total.Requests.ListPages, list.Total.Requests.ListPages, pct(inv.Total.Requests.ListPages, list.Total.Requests.ListPages),
		ratio(inv.Total.Wall, list.Total.Wall), ratio(markWall(inv), markWall(list)), ratio(inv.Total.CPU, list.Total.CPU),
		ratio(time.Duration(inv.Total.PeakTmp), time.Duration(list.Total.PeakTmp)))
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
