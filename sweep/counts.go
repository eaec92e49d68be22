package sweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"os"

	"github.com/lakegc/lakegc/internal/extsort"
)

// This file counts references: the committed keep set as a stream of
// (key, count), strictly ascending, merged from the parts that hold the keys
// (each +1), from the parts that left the set (−1), from a flat keep set
// (+1 each) and from the previous run's keep index.

// countIter is a stream of counted keys, strictly ascending. The key is
// valid until the next call.
type countIter interface {
	next() (key []byte, count int64, ok bool, err error)
	close() error
}

// errRecount is wrapped by the errors of a part that left the keep set and
// cannot be read again as it was: the run counts every current part instead.
var errRecount = errors.New("sweep: a part that left the keep set changed")

// partStat is what the parts record holds of a part: the number of its keys
// and a checksum of them.
type partStat struct {
	id   string
	keys int64
	sum  uint32
}

// partIter reads one part's keys, each with count w, checking them as
// readKeep does and that they strictly ascend; at the end it has the part's
// statistics, and when want is set, fails with errRecount unless they
// match it.
type partIter struct {
	id   string
	w    int64
	pull func() (string, error, bool)
	stop func()
	ctx  context.Context
	prev []byte
	stat partStat
	want *partStat
	lenb [binary.MaxVarintLen64]byte
	done bool
	read *int64 // counts the parts read to their end
}

func openPart(ctx context.Context, p *Parts, id string, w int64, want *partStat, read *int64) *partIter {
	next, stop := iter.Pull2(p.Open(ctx, id))
	return &partIter{id: id, w: w, pull: next, stop: stop, ctx: ctx, stat: partStat{id: id}, want: want, read: read}
}

func (it *partIter) fail(err error) error {
	if it.want != nil && it.ctx.Err() == nil {
		// A part that left the set: count the current ones instead.
		return fmt.Errorf("%w: part %q: %w", errRecount, it.id, err)
	}
	return err
}

func (it *partIter) next() ([]byte, int64, bool, error) {
	if it.done {
		return nil, 0, false, nil
	}
	k, err, ok := it.pull()
	if !ok {
		it.done = true
		if it.read != nil {
			*it.read++
		}
		if w := it.want; w != nil && (w.keys != it.stat.keys || w.sum != it.stat.sum) {
			return nil, 0, false, it.fail(fmt.Errorf("holds %d keys (checksum %08x), it held %d (%08x)", it.stat.keys, it.stat.sum, w.keys, w.sum))
		}
		return nil, 0, false, it.ctx.Err()
	}
	if err != nil {
		return nil, 0, false, it.fail(fmt.Errorf("sweep: input: part %q: %w", it.id, err))
	}
	if err := keepKeyErr(k); err != nil {
		return nil, 0, false, it.fail(fmt.Errorf("part %q: %w", it.id, err))
	}
	if it.stat.keys > 0 && bytes.Compare([]byte(k), it.prev) <= 0 {
		return nil, 0, false, it.fail(fmt.Errorf("%w: part %q: key %q after %q", ErrInvalidInput, it.id, k, it.prev))
	}
	it.prev = append(it.prev[:0], k...)
	it.stat.keys++
	n := binary.PutUvarint(it.lenb[:], uint64(len(k)))
	it.stat.sum = crc32.Update(it.stat.sum, crcTable, it.lenb[:n])
	it.stat.sum = crc32.Update(it.stat.sum, crcTable, it.prev)
	if it.stat.keys%4096 == 0 && it.ctx.Err() != nil {
		return nil, 0, false, it.ctx.Err()
	}
	return it.prev, it.w, true, nil
}

func (it *partIter) close() error { it.stop(); return nil }

// keepKeyErr says why a committed key cannot be a keep key, or nil.
func keepKeyErr(key string) error {
	switch {
	case key == "" || key[0] == '/' || fullURI(key):
		return fmt.Errorf("%w: keep key %q is not relative to the namespace", ErrInvalidInput, key)
	case len(key) > maxRecordKey:
		return fmt.Errorf("%w: keep key of %d bytes", ErrInvalidInput, len(key))
	}
	return nil
}

// sortedCounts gives every key of a sorted, distinct stream the count w.
type sortedCounts struct {
	it extsort.Iter
	w  int64
}

func (s *sortedCounts) next() ([]byte, int64, bool, error) {
	k, ok, err := s.it.Next()
	return k, s.w, ok, err
}

func (s *sortedCounts) close() error { return s.it.Close() }

// countMerge merges counted streams, summing the counts of a key and
// leaving out the keys whose sum is 0. A stream whose keys do not strictly
// ascend fails it.
type countMerge struct {
	all     []countIter
	heap    []mergeHead
	started bool
	key     []byte
	n       int64 // keys taken
	err     error
}

type mergeHead struct {
	key   []byte
	count int64
	it    countIter
}

func newCountMerge(iters []countIter) *countMerge { return &countMerge{all: iters} }

func (m *countMerge) less(i, j int) bool { return bytes.Compare(m.heap[i].key, m.heap[j].key) < 0 }

func (m *countMerge) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(m.heap) {
			return
		}
		c := l
		if r := l + 1; r < len(m.heap) && m.less(r, l) {
			c = r
		}
		if !m.less(c, i) {
			return
		}
		m.heap[i], m.heap[c] = m.heap[c], m.heap[i]
		i = c
	}
}

// advance moves the top stream on, or drops it at its end.
func (m *countMerge) advance() error {
	h := &m.heap[0]
	k, c, ok, err := h.it.next()
	if err != nil {
		return err
	}
	if !ok {
		m.heap[0] = m.heap[len(m.heap)-1]
		m.heap = m.heap[:len(m.heap)-1]
	} else {
		// The stream's key before was m.key.
		if bytes.Compare(k, m.key) <= 0 {
			return fmt.Errorf("sweep: counted keys out of order: %q after %q", k, m.key)
		}
		h.key, h.count = k, c
	}
	m.down(0)
	return nil
}

func (m *countMerge) next() ([]byte, int64, bool, error) {
	if m.err != nil {
		return nil, 0, false, m.err
	}
	if !m.started {
		m.started = true
		for _, it := range m.all {
			k, c, ok, err := it.next()
			if err != nil {
				m.err = err
				return nil, 0, false, err
			}
			if ok {
				m.heap = append(m.heap, mergeHead{key: k, count: c, it: it})
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	}
	for len(m.heap) > 0 {
		top := m.heap[0].key
		if m.n > 0 && bytes.Compare(top, m.key) <= 0 {
			m.err = fmt.Errorf("sweep: counted keys out of order: %q after %q", top, m.key)
			return nil, 0, false, m.err
		}
		m.key = append(m.key[:0], top...)
		m.n++
		var sum int64
		for len(m.heap) > 0 && bytes.Equal(m.heap[0].key, m.key) {
			sum += m.heap[0].count
			if err := m.advance(); err != nil {
				m.err = err
				return nil, 0, false, err
			}
		}
		if sum != 0 {
			return m.key, sum, true, nil
		}
	}
	return nil, 0, false, nil
}

func (m *countMerge) close() error {
	var errs []error
	for _, it := range m.all {
		errs = append(errs, it.close())
	}
	return errors.Join(errs...)
}

// fileCounts reads a spill file of counts, and removes it when closed.
type fileCounts struct {
	f *os.File
	d *countDecoder
}

func openCounts(name string, f *countFormat, ioBuf int) (*fileCounts, error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sweep: spill: %w", err)
	}
	d, err := newCountDecoder(file, f, ioBuf)
	if err != nil {
		file.Close()
		return nil, err
	}
	return &fileCounts{f: file, d: d}, nil
}

func (fc *fileCounts) next() ([]byte, int64, bool, error) {
	k, c, _, ok, err := fc.d.next()
	return k, c, ok, err
}

func (fc *fileCounts) close() error {
	err := fc.f.Close()
	os.Remove(fc.f.Name())
	return err
}

// spillCounts writes the counted stream it to a new spill file of d and
// closes it; it returns the file's name.
func spillCounts(d *extsort.SpillDir, it countIter) (name string, err error) {
	defer func() { err = errors.Join(err, it.close()) }()
	f, err := d.CreateFile("counts")
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, d.IOBuf())
	enc := newCountEncoder(w, deltaFormat, d.IOBuf())
	for {
		k, c, ok, err := it.next()
		if err == nil && ok {
			err = enc.add(k, c, 0)
		}
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			return "", err
		}
		if !ok {
			break
		}
	}
	err = enc.finish()
	if err == nil {
		err = w.Flush()
	}
	err = errors.Join(err, f.Close())
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("sweep: spill: %w", err)
	}
	return f.Name(), nil
}

// countedParts merges the parts ids, each key counting w (+1 or −1), into
// spill files of at most fanIn parts each; want, when not nil, gives the
// statistics each part must have (parts that left the set). It returns the
// files' names and each part's statistics.
func countedParts(ctx context.Context, d *extsort.SpillDir, p *Parts, ids []string, w int64, want map[string]partStat, fanIn int, read *int64) ([]string, []partStat, error) {
	var names []string
	var stats []partStat
	for len(ids) > 0 {
		group := ids[:min(fanIn, len(ids))]
		ids = ids[len(group):]
		iters := make([]countIter, len(group))
		parts := make([]*partIter, len(group))
		for i, id := range group {
			var ws *partStat
			if want != nil {
				s := want[id]
				ws = &s
			}
			parts[i] = openPart(ctx, p, id, w, ws, read)
			iters[i] = parts[i]
		}
		name, err := spillCounts(d, newCountMerge(iters))
		if err != nil {
			removeAll(names)
			return nil, nil, err
		}
		names = append(names, name)
		for _, pi := range parts {
			stats = append(stats, pi.stat)
		}
	}
	return names, stats, nil
}

// mergeCountFiles opens the spill files of counts as one merged stream,
// merging them fanIn at a time first when there are more.
func mergeCountFiles(d *extsort.SpillDir, names []string, fanIn int) (countIter, []string, error) {
	for len(names) > fanIn {
		it, err := openCountFiles(d, names[:fanIn])
		if err != nil {
			return nil, names, err
		}
		name, err := spillCounts(d, it)
		if err != nil {
			return nil, names[fanIn:], err
		}
		names = append(names[fanIn:], name)
	}
	it, err := openCountFiles(d, names)
	return it, nil, err
}

func openCountFiles(d *extsort.SpillDir, names []string) (countIter, error) {
	iters := make([]countIter, 0, len(names))
	for _, name := range names {
		fc, err := openCounts(name, deltaFormat, d.IOBuf())
		if err != nil {
			for _, it := range iters {
				it.close()
			}
			return nil, err
		}
		iters = append(iters, fc)
	}
	return newCountMerge(iters), nil
}

func removeAll(names []string) {
	for _, n := range names {
		os.Remove(n)
	}
}

// nopCounts is an empty counted stream.
type nopCounts struct{}

func (nopCounts) next() ([]byte, int64, bool, error) { return nil, 0, false, nil }
func (nopCounts) close() error                       { return nil }
