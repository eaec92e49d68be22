package keycount

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/lakegc/lakegc/internal/extsort"
)

// ErrChanged is wrapped by the errors of a part read again that does not
// yield what it yielded before (Stat), or cannot be read any more.
var ErrChanged = errors.New("keycount: a part changed")

// Stat is what a part held: the number of its keys and a CRC-32C of them,
// each preceded by its length as a uvarint.
type Stat struct {
	ID   string
	Keys int64
	Sum  uint32
}

// Parts is where parts are read from: immutable, named sets of sorted keys.
type Parts struct {
	// Open yields the keys of part id, strictly ascending.
	Open func(ctx context.Context, id string) iter.Seq2[string, error]
	// Check says why a key cannot be counted, or nil; key is valid only
	// during the call.
	Check func(key []byte) error
	// Invalid is wrapped by the error of a part whose keys do not strictly
	// ascend.
	Invalid error
	// Read, if not nil, counts the parts read to their end.
	Read *int64
	// ReadAhead is how many parts of a group Count may read at once: it
	// pulls the first batch of each part of a group (which, for parts
	// behind a store, waits for its read) from up to ReadAhead goroutines
	// before it merges the group from one. 1 or less: one at a time, as the
	// merge first pulls them. With more, Open and distinct sequences must
	// be safe for concurrent use; each sequence is read by one goroutine at
	// a time, and a panic of one comes out of Count, as without.
	ReadAhead int
}

// Count merges the parts ids, each key counting w, into spill files of d
// of at most fanIn parts each, and returns the files' names and each part's
// Stat. want, when not nil, is what each part must hold (parts read again):
// a part that holds something else, or fails, fails with ErrChanged.
func (p *Parts) Count(ctx context.Context, d *extsort.SpillDir, ids []string, w int64, want map[string]Stat, fanIn int) ([]string, []Stat, error) {
	var names []string
	var stats []Stat
	fanIn = max(fanIn, 1)
	for len(ids) > 0 {
		group := ids[:min(fanIn, len(ids))]
		ids = ids[len(group):]
		parts := p.openGroup(ctx, group, w, want)
		iters := make([]Iter, len(parts))
		for i, pt := range parts {
			iters[i] = pt
		}
		p.readAhead(parts)
		name, err := Spill(d, NewMerge(iters))
		if err != nil {
			return names, nil, err
		}
		names = append(names, name)
		for _, pi := range parts {
			stats = append(stats, pi.stat)
		}
	}
	return names, stats, nil
}

// openGroup opens the parts ids. When Open panics (or calls
// runtime.Goexit) the parts opened before are stopped first: each holds a
// coroutine that would otherwise wait for ever.
func (p *Parts) openGroup(ctx context.Context, ids []string, w int64, want map[string]Stat) (parts []*part) {
	parts = make([]*part, 0, len(ids))
	defer func() {
		if len(parts) < len(ids) {
			for _, pt := range parts {
				pt.stop()
			}
		}
	}()
	for _, id := range ids {
		var ws *Stat
		if want != nil {
			s := want[id]
			ws = &s
		}
		parts = append(parts, p.open(ctx, id, w, ws))
	}
	return parts
}

// readAhead pulls the first batch of each of parts, from up to p.ReadAhead
// goroutines at once: the parts' reads wait for their stores together
// rather than one after the other as the merge first pulls them. It holds
// what the merge would hold anyway: one batch a part. An error is kept in
// the part's batch, for the merge to meet. A sequence's panic (or
// runtime.Goexit) is raised again on the caller's goroutine once every
// goroutine has returned and every part is stopped, as it would be were the
// part pulled there: never is a part whose pull did not return read as
// ended.
func (p *Parts) readAhead(parts []*part) {
	n := min(p.ReadAhead, len(parts))
	if n <= 1 {
		return
	}
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		raised   bool
		panicked any
	)
	wg.Add(n)
	for range n {
		go func() {
			defer wg.Done()
			returned := false
			defer func() {
				if returned {
					return
				}
				r := recover() // nil: a Goexit
				mu.Lock()
				if !raised {
					raised, panicked = true, r
				}
				mu.Unlock()
			}()
			for i := int(next.Add(1) - 1); i < len(parts); i = int(next.Add(1) - 1) {
				if b, ok := parts[i].pull(); ok {
					parts[i].cur, parts[i].i = b, 0
				}
			}
			returned = true
		}()
	}
	wg.Wait()
	if !raised {
		return
	}
	for _, pt := range parts {
		pt.stop()
	}
	if panicked != nil {
		panic(panicked)
	}
	runtime.Goexit()
}

// part reads one part's keys, each with count w, checking them and that
// they strictly ascend; at the end it has the part's Stat, and when want is
// set, fails with ErrChanged unless it matches.
type part struct {
	p    *Parts
	w    int64
	pull func() (*batch, bool)
	stop func()
	cur  *batch // the keys being handed out
	i    int    // the next of them
	ctx  context.Context
	prev []byte
	stat Stat
	want *Stat
	lenb [binary.MaxVarintLen64]byte
	done bool
}

// A part's keys come from its sequence in batches: one switch between the
// sequence's coroutine and the merge per batch rather than per key.
const (
	batchBytes = 32 << 10
	batchKeys  = 1024
)

// batch is keys of a part, packed in data, and the error that ended them.
type batch struct {
	data []byte
	ends []int
	err  error
}

func (p *Parts) open(ctx context.Context, id string, w int64, want *Stat) *part {
	seq := p.Open(ctx, id)
	batches := func(yield func(*batch) bool) {
		// The merge asks for the next batch once it handed out every key
		// of the last one: one batch serves throughout.
		b := &batch{data: make([]byte, 0, batchBytes), ends: make([]int, 0, batchKeys)}
		for k, err := range seq {
			if err != nil {
				b.err = err
				yield(b)
				return
			}
			b.data = append(b.data, k...)
			b.ends = append(b.ends, len(b.data))
			if len(b.data) >= batchBytes || len(b.ends) == batchKeys {
				if !yield(b) {
					return
				}
				b.data, b.ends = b.data[:0], b.ends[:0]
			}
		}
		if len(b.ends) > 0 {
			yield(b)
		}
	}
	next, stop := iter.Pull(batches)
	return &part{p: p, w: w, pull: next, stop: stop, ctx: ctx, stat: Stat{ID: id}, want: want}
}

// key returns the part's next key, or the error that ends it; ok is false
// at its end.
func (it *part) key() ([]byte, bool, error) {
	for it.cur == nil || it.i == len(it.cur.ends) {
		if it.cur != nil && it.cur.err != nil {
			return nil, true, it.cur.err
		}
		b, ok := it.pull()
		if !ok {
			return nil, false, nil
		}
		it.cur, it.i = b, 0
	}
	start := 0
	if it.i > 0 {
		start = it.cur.ends[it.i-1]
	}
	k := it.cur.data[start:it.cur.ends[it.i]]
	it.i++
	return k, true, nil
}

func (it *part) fail(err error) error {
	if it.want != nil && it.ctx.Err() == nil {
		return fmt.Errorf("%w: part %q: %w", ErrChanged, it.stat.ID, err)
	}
	return err
}

func (it *part) Next() ([]byte, int64, bool, error) {
	if it.done {
		return nil, 0, false, nil
	}
	k, ok, err := it.key()
	if !ok {
		it.done = true
		if it.p.Read != nil {
			*it.p.Read++
		}
		if w := it.want; w != nil && (w.Keys != it.stat.Keys || w.Sum != it.stat.Sum) {
			return nil, 0, false, it.fail(fmt.Errorf("holds %d keys (checksum %08x), it held %d (%08x)", it.stat.Keys, it.stat.Sum, w.Keys, w.Sum))
		}
		return nil, 0, false, it.ctx.Err()
	}
	if err != nil {
		return nil, 0, false, it.fail(fmt.Errorf("part %q: %w", it.stat.ID, err))
	}
	if it.p.Check != nil {
		if err := it.p.Check(k); err != nil {
			return nil, 0, false, it.fail(fmt.Errorf("part %q: %w", it.stat.ID, err))
		}
	}
	if it.stat.Keys > 0 && bytes.Compare(k, it.prev) <= 0 {
		return nil, 0, false, it.fail(fmt.Errorf("%w: part %q: key %q after %q", it.p.Invalid, it.stat.ID, k, it.prev))
	}
	it.prev = append(it.prev[:0], k...)
	it.stat.Keys++
	n := binary.PutUvarint(it.lenb[:], uint64(len(k)))
	it.stat.Sum = crc32.Update(it.stat.Sum, table, it.lenb[:n])
	it.stat.Sum = crc32.Update(it.stat.Sum, table, it.prev)
	if it.stat.Keys%4096 == 0 && it.ctx.Err() != nil {
		return nil, 0, false, it.ctx.Err()
	}
	return it.prev, it.w, true, nil
}

func (it *part) Close() error { it.stop(); return nil }
