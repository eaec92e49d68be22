package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"

	"github.com/lakegc/lakegc/internal/layout"
	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"
)

// An Inventory is a listing of the namespace that the store produced on its
// own (S3 Inventory, GCS Storage Insights, Azure Blob inventory; package
// inventory of this module reads them), which Mark takes, with
// WithInventory, in place of listing the slices it covers (see the package
// documentation, "Inventory reports"). Mark calls Time and Source once and
// ranges over Objects once, on one goroutine.
type Inventory interface {
	// Time is the earliest time at which the store may have begun the
	// listing: every object the namespace held then, and still holds, is
	// in Objects, unless written after Time. A later time than the true
	// one is unsafe; an earlier one only costs listing. Mark refuses the
	// zero time, and a time after its start plus the clock skew
	// (ErrInvalidInput).
	Time() time.Time
	// Objects yields the objects of the report under the namespace, keys
	// relative to it as a listing of the namespace's bucket spells them,
	// in any order. An error ends the listing: Mark fails with it, so a
	// listing counts as complete only when the sequence ends without one.
	Objects(ctx context.Context) iter.Seq2[InventoryObject, error]
	// Source names the report, for the summary and the logs: its
	// manifest's address.
	Source() string
}

// InventoryObject is one object of an Inventory: its key relative to the
// namespace, its size, and its modification time as the store's listing
// would give it (the zero time when unknown: the object is kept as young).
type InventoryObject struct {
	Key     string
	Size    int64
	ModTime time.Time
}

// WithInventory makes Mark take the slices that the inventory report inv
// covers from it instead of listing them (see the package documentation,
// "Inventory reports"): the slices older than the report's time less the
// slice margin. The rest of the namespace is listed through the store. A
// run from an inventory is clean: WithPrevious is ignored, and
// Summary.CleanReason says so. nil (the default) lists every slice.
func WithInventory(inv Inventory) MarkOption {
	return markOnly("Inventory", func(c *config) { c.inventory = inv })
}

// inventoryReason is the clean reason of a run asked to start from a
// previous run with an inventory.
const inventoryReason = "a run from an inventory report is always clean"

// reportRun is what Mark takes from an inventory.
type reportRun struct {
	inv      Inventory
	source   string
	time     time.Time
	boundary time.Time // slices started before it come from the report
}

// useInventory makes l take the slices an inventory covers from it: listTop
// skips them, and listRest reads them from the report. It checks the
// report's time first.
func (m *marker) useInventory(l *lister) error {
	inv := m.cfg.inventory
	if inv == nil {
		return nil
	}
	t := inv.Time()
	if t.IsZero() {
		return fmt.Errorf("%w: inventory %s has no time", ErrInvalidInput, inv.Source())
	}
	// A report cannot list what the store holds later than now: a time
	// past the clock (and its skew) is wrong, and a later time than the
	// true one takes slices that were still receiving objects.
	if limit := m.sum.StartTime.Add(time.Second + m.cfg.clockSkew); t.After(limit) {
		return fmt.Errorf("%w: inventory %s is dated %v, after the mark's start %v (clock skew %v)", ErrInvalidInput, inv.Source(), t.UTC(), m.sum.StartTime, m.cfg.clockSkew)
	}
	r := &reportRun{inv: inv, source: inv.Source(), time: t.UTC(), boundary: t.Add(-m.cfg.margin())}
	l.report = r
	// listTop skips only slices it owns and that started before the
	// cutoff; fromReport says the same of the report's keys.
	l.skip = func(_ string, t time.Time) bool { return t.Before(r.boundary) }
	m.sum.InventorySource, m.sum.InventoryTime = r.source, r.time.Truncate(time.Second)
	m.log("sweep: slices from an inventory report", "inventory", r.source, "time", r.time, "boundary", r.boundary)
	return nil
}

// listRest lists the folders listTop found and, with an inventory, reads
// the report's keys of the slices listTop skipped, at the same time.
func (l *lister) listRest(ctx context.Context) error {
	if l.report == nil {
		return l.listFolders(ctx)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return l.listFolders(gctx) })
	g.Go(func() error {
		if err := l.keepMoved(gctx); err != nil {
			return err
		}
		return l.readReport(gctx)
	})
	return g.Wait()
}

// maxPart bounds a quarantine manifest's part: one batch's addresses.
const maxPart = 16 << 20

// keepMoved adds to the keep set every address that a sweep with
// quarantine (WithQuarantine) moved away since the report's boundary: the
// report may name such an object with its old time, and Restore may have
// put it back since, new to a listing, which keeps it as young. A part of
// a quarantine's manifest is written just before its addresses' originals
// are deleted, so every part written since the boundary (the store's time
// of the part, or an unknown one) is read; a part that is gone is a purged
// quarantine's. Their slices count as young ones, for the next optimized
// run.
func (l *lister) keepMoved(ctx context.Context) error {
	root := layout.Quarantines(l.cfg.storagePrefix)
	data := l.cfg.dataPrefix + "/"
	var runs []string
	it := l.bucket.List(&blob.ListOptions{Prefix: root, Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("sweep: list %q: %w", root, err)
		}
		if o.IsDir {
			runs = append(runs, o.Key)
		}
	}
	for _, run := range runs {
		it := l.bucket.List(&blob.ListOptions{Prefix: run + layout.QuarantineManifest})
		for {
			o, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("sweep: list %q: %w", run+layout.QuarantineManifest, err)
			}
			if o.IsDir || !o.ModTime.IsZero() && o.ModTime.Before(l.report.boundary) {
				continue
			}
			b, err := readSmall(ctx, l.bucket, o.Key, maxPart)
			if l.cfg.classify.isNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			var part struct {
				Addresses []string `json:"addresses"`
			} // a quarantine manifest part (sweep/quarantine writes it)
			if err := json.Unmarshal(b, &part); err != nil {
				return fmt.Errorf("%w: quarantine manifest %s: %v", ErrInvalidInput, o.Key, err)
			}
			for _, a := range part.Addresses {
				if err := l.youngKeys.add([]byte(a)); err != nil {
					return err
				}
				// Its slice is listed again by an optimized run from this
				// one, which sees a restored object's own time.
				l.young.addSliceOf(a, data)
			}
			l.movedKept += int64(len(part.Addresses))
		}
	}
	return nil
}

// fromReport reports whether the slice name, started at t, is taken from
// the report: the slices listTop skips, whether the store still lists them
// or not.
func (l *lister) fromReport(name string, t time.Time) bool {
	return t.Before(l.cutoff) && t.Before(l.report.boundary) && l.cfg.ownsSlice(name)
}

// readReport reads the report's objects into the listing: those in a slice
// it covers (fromReport) are judged exactly as listAll judges a listed
// object of that slice; every other key is ignored, as the store's listing
// of that place wins. It alone adds to the loose sorter while it runs.
func (l *lister) readReport(ctx context.Context) error {
	data := l.cfg.dataPrefix + "/"
	var read, listed, young, unrec int64
	flush := func() {
		l.cnt.update(func(p *Progress) {
			p.Inventory += read
			p.Listed += listed
			p.Young += young
			p.Unrecognized += unrec
		})
		l.reportRead += read
		read, listed, young, unrec = 0, 0, 0, 0
	}
	defer flush()
	// The folder of the last key, and whether it is taken from the report:
	// reports list a slice's keys together, mostly.
	var folder string
	var inReport bool
	var buf []byte
	for o, err := range l.report.inv.Objects(ctx) {
		if err != nil {
			return fmt.Errorf("sweep: inventory %s: %w", l.report.source, err)
		}
		if read++; read >= 1000 {
			flush()
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		key := o.Key
		if folder == "" || !strings.HasPrefix(key, folder) {
			rest, ok := strings.CutPrefix(key, data)
			i := strings.IndexByte(rest, '/')
			if !ok || i < 0 {
				continue // not in a folder under the data folder: listed through the store
			}
			folder = key[:len(data)+i+1]
			t, slice := layout.SliceTime(rest[:i])
			inReport = slice && l.fromReport(rest[:i], t)
		}
		if !inReport {
			continue
		}
		listed++
		if strings.IndexByte(key[len(folder):], '/') >= 0 {
			if wall, ok := l.walls.Of(key); ok {
				l.walls.Add(wall, folder)
				l.young.addSliceOf(folder, data)
			}
		}
		if !l.rec.OKInSlice(key, len(folder)) {
			unrec++
			if err := l.unrec.add(&blob.ListObject{Key: key, Size: o.Size, ModTime: o.ModTime}); err != nil {
				return err
			}
			continue
		}
		buf = append(buf[:0], key...)
		if isYoung(o.ModTime, l.cutoff) {
			young++
			l.young.addSliceOf(folder, data)
			err = l.youngKeys.add(buf)
		} else {
			err = l.loose.Add(buf)
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}
