package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/lakegc/lakegc/internal/layout"
	"iter"
	"slices"
	"sort"
	"strings"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
	"github.com/lakegc/lakegc/sweep"
	"github.com/lakegc/lakegc/tests/internal/s3sim"
)

// DefaultRangeEntries is how many committed objects a range holds:
// lakeFS's committed.permanent.range_raggedness_entries, 50,000, the
// expected number of entries between the content-defined boundaries of its
// ranges (a range is also cut at 20 MiB, about 100,000 entries of 200 bytes).
const DefaultRangeEntries = 50_000

// The committed keep set as ranges, read as lakeFS's host reads them
// through its range cache (package lakefs/metarange, "The range cache").
//
// The committed objects q (0 ≤ q < Scale.committed()) are one logical
// tree, in the order of their logical paths, which is the order of their
// positions in the namespace: a table's files are written together, into
// the same slices. Range i holds the logical positions [i·R, (i+1)·R) (R
// RangeEntries): its boundaries are at fixed positions, as lakeFS's
// content-defined ones stay where they are when a region is rewritten. The
// churn rewrites a contiguous region of positions, as a partition rewrite
// does (churn.dropLo..dropHi): its objects leave the tree (the commits that
// held them expire), and the churn's new committed objects take their
// places, spread over the region. Only the ranges that overlap the region
// change; every other range keeps its ID.
//
// A range is described by the positions it holds, less the region's, and
// the new objects it holds (rangeDesc); the description determines its
// keys, and its ID is the SHA-256 of the description: a hash of the range's
// content, as lakeFS's, without generating the keys. lakeFS's storage holds
// each range's table, here its description, at _lakefs/<id> (written when
// the bench is built and by the churn, as a commit writes it). Opening a
// range (Open) reads its cache object, one GET; a range not cached yet
// reads its table (a GET) and writes its cache (a PUT), as the range cache
// does on a miss. The cache object holds the description, not the keys:
// Open generates the range's keys from what it read, already sorted. So a
// cached range costs its one GET, at the store's latency, and a few
// microseconds a key to generate, where lakeFS's host decodes the cache's
// front-coded keys; the store holds a hundred bytes a range, so memory does
// not grow with the namespace. Ranges are read up to rangeReadAhead at a
// time (sweep.Parts.ReadAhead), as the lakeFS host lets the mark read them.
type rangeDesc struct {
	Index          int
	Lo, Hi         int // the positions of committed objects
	DropLo, DropHi int // less these (the churn's region), empty if none
	NewLo, NewHi   int // and the churn's new committed objects n in [NewLo, NewHi)
}

const rangeMagic = "bottomline range v1"

func (d rangeDesc) encode() []byte {
	return fmt.Appendf(nil, "%s %d %d %d %d %d %d %d\n", rangeMagic, d.Index, d.Lo, d.Hi, d.DropLo, d.DropHi, d.NewLo, d.NewHi)
}

func (d rangeDesc) id() string {
	sum := sha256.Sum256(d.encode())
	return hex.EncodeToString(sum[:])
}

// errRange is a range object that is not one this host wrote.
var errRange = errors.New("bottomline: bad range object")

func parseRange(b []byte) (rangeDesc, error) {
	var d rangeDesc
	rest, ok := bytes.CutPrefix(b, []byte(rangeMagic+" "))
	if !ok {
		return d, fmt.Errorf("%w: no magic", errRange)
	}
	if _, err := fmt.Sscanf(string(rest), "%d %d %d %d %d %d %d\n", &d.Index, &d.Lo, &d.Hi, &d.DropLo, &d.DropHi, &d.NewLo, &d.NewHi); err != nil {
		return d, fmt.Errorf("%w: %v", errRange, err)
	}
	if !bytes.Equal(d.encode(), b) || d.Lo < 0 || d.Lo > d.Hi || d.DropLo > d.DropHi || d.NewLo < 0 || d.NewLo > d.NewHi {
		return d, fmt.Errorf("%w: %q", errRange, b)
	}
	return d, nil
}

// Where lakeFS keeps a range's table, and the range cache its cache
// (package internal/layout's RangeCacheKey).
func tableKey(id string) string { return layout.StoragePrefix + "/" + id }
func cacheKey(id string) string { return layout.RangeCacheKey(layout.StoragePrefix, id) }

// rangeEntries is R.
func (h *host) rangeEntries() int {
	if h.rangeN > 0 {
		return h.rangeN
	}
	return DefaultRangeEntries
}

// ranges returns the ranges of the committed keep set as the host stands
// (after the churn, if any).
func (h *host) ranges() []rangeDesc {
	c, r := h.sc.committed(), h.rangeEntries()
	var out []rangeDesc
	for lo := 0; lo < c; lo += r {
		d := rangeDesc{Index: lo / r, Lo: lo, Hi: min(lo+r, c)}
		if ch := h.ch; ch != nil && ch.dropLo < d.Hi && d.Lo < ch.dropHi {
			d.DropLo, d.DropHi = max(d.Lo, ch.dropLo), min(d.Hi, ch.dropHi)
			d.NewLo, d.NewHi = ch.newAt(d.Lo), ch.newAt(d.Hi)
		}
		out = append(out, d)
	}
	return out
}

// newAt returns the first of the churn's new committed objects whose
// position is at or after pos: new object n takes position
// dropLo + n·(dropHi−dropLo)/N of the N.
func (ch *churn) newAt(pos int) int {
	n, d := ch.newCommitted(), ch.dropHi-ch.dropLo
	if d == 0 {
		return 0
	}
	return sort.Search(n, func(i int) bool { return ch.dropLo+int(int64(i)*int64(d)/int64(n)) >= pos })
}

// newCommitted is how many new committed objects the churn makes.
func (ch *churn) newCommitted() int { return ch.objects / period * committedPer }

// segment is a run of a range's keys within one slice: sl's objects at
// at(q) − base for q from qa to qb − 1, ascending.
type segment struct {
	sl     *s3sim.Slice
	qa, qb int
	base   int
}

// segments returns the slices' runs of the objects q from qa to qb − 1
// (at(q) their positions among slices of perSlice objects).
func segments(sls []s3sim.Slice, perSlice, qa, qb int, out []segment) []segment {
	for qa < qb {
		s := committedAt(qa) / perSlice
		end := qa + sort.Search(qb-qa, func(j int) bool { return committedAt(qa+j)/perSlice > s })
		out = append(out, segment{sl: &sls[s], qa: qa, qb: end, base: s * perSlice})
		qa = end
	}
	return out
}

// keys yields the keys of range d, strictly ascending: the slices' runs
// ordered by their prefixes (all of one length), each ascending.
func (h *host) keys(ctx context.Context, d rangeDesc) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var segs []segment
		if d.DropHi > d.DropLo {
			segs = segments(h.slices, h.perSlice, d.Lo, d.DropLo, segs)
			segs = segments(h.slices, h.perSlice, d.DropHi, d.Hi, segs)
		} else {
			segs = segments(h.slices, h.perSlice, d.Lo, d.Hi, segs)
		}
		if d.NewHi > d.NewLo {
			if h.ch == nil || d.NewHi > h.ch.newCommitted() {
				yield("", fmt.Errorf("%w: new objects %d to %d of a churn that made none", errRange, d.NewLo, d.NewHi))
				return
			}
			segs = segments(h.ch.slices, h.perSlice, d.NewLo, d.NewHi, segs)
		}
		slices.SortFunc(segs, func(a, b segment) int { return strings.Compare(a.sl.Prefix, b.sl.Prefix) })
		n := 0
		for _, sg := range segs {
			for q := sg.qa; q < sg.qb; q++ {
				if n++; n%4096 == 0 && ctx.Err() != nil {
					yield("", ctx.Err())
					return
				}
				if !yield(sg.sl.Prefix+sg.sl.Name(committedAt(q)-sg.base), nil) {
					return
				}
			}
		}
	}
}

// partsHost is the host's committed side against one store: it gives the
// committed keep set as parts (lakegc.CommittedParts), reading each range
// through the store.
type partsHost struct {
	*host
	bucket *blob.Bucket

	mu     sync.Mutex
	hits   int            // opens read from the range's cache
	misses int            // opens read from the range's table, then cached
	ranges map[string]int // opens of each range
}

var _ lakegc.CommittedParts = (*partsHost)(nil)

// CommittedParts implements lakegc.CommittedParts: the ranges of the
// committed objects. Every commit that holds committed objects must be
// active, and none that holds garbage: the ranges are of the model's
// kept set, not of any set of commits.
func (p *partsHost) CommittedParts(ctx context.Context, active []retention.ActiveCommit) (*sweep.Parts, error) {
	h := p.host
	kept := make([]bool, h.sc.Commits)
	for _, a := range active {
		c := parseNum(a.CommitID, "c")
		if c < 0 || c >= h.sc.Commits {
			return nil, fmt.Errorf("commit %q not found", a.CommitID)
		}
		kept[c] = true
	}
	for c := range h.sc.Commits {
		j := c % h.sc.perBranch()
		recent := j >= h.sc.perBranch()-recentCommits
		if holdsGarbage := j < h.sc.perBranch()-recentCommits-1; kept[c] != recent && (recent || holdsGarbage) {
			return nil, fmt.Errorf("bottomline: commit %s kept %v: the ranges model only the rules' own choice", commitID(c), kept[c])
		}
	}
	// Several ranges read at once, as the lakeFS host lets the mark read
	// them (metarange.DefaultConcurrency).
	parts := &sweep.Parts{Open: p.open, ReadAhead: rangeReadAhead}
	for _, d := range h.ranges() {
		parts.IDs = append(parts.IDs, d.id())
	}
	return parts, ctx.Err()
}

// rangeReadAhead is how many ranges the mark reads at once (the lakeFS
// host's metarange.DefaultConcurrency).
const rangeReadAhead = 8

// open reads range id's cache, or on a miss its table, then writes the
// cache, and yields its keys.
func (p *partsHost) open(ctx context.Context, id string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		b, err := p.bucket.ReadAll(ctx, cacheKey(id))
		hit := err == nil
		if gcerrors.Code(err) == gcerrors.NotFound {
			if b, err = p.bucket.ReadAll(ctx, tableKey(id)); err == nil {
				err = p.bucket.WriteAll(ctx, cacheKey(id), b, nil)
			}
		}
		var d rangeDesc
		if err == nil {
			d, err = parseRange(b)
		}
		if err == nil && d.id() != id {
			err = fmt.Errorf("%w: range %s holds range %s", errRange, id, d.id())
		}
		if err != nil {
			yield("", fmt.Errorf("range %s: %w", id, err))
			return
		}
		p.mu.Lock()
		if p.ranges == nil {
			p.ranges = map[string]int{}
		}
		p.ranges[id]++
		if hit {
			p.hits++
		} else {
			p.misses++
		}
		p.mu.Unlock()
		for k, err := range p.keys(ctx, d) {
			if !yield(k, err) || err != nil {
				return
			}
		}
	}
}

// writeTables writes the tables of the ranges the host has now that are not
// in the store yet, 16 at a time, as commits write them: before a cycle, not
// in it.
func (h *host) writeTables(ctx context.Context, store *s3sim.Store) error {
	b := store.Bucket()
	defer b.Close()
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, d := range h.ranges() {
		if store.Exists(tableKey(d.id())) {
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := b.WriteAll(ctx, tableKey(d.id()), d.encode(), nil); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}
