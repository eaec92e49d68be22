package keycount

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/lakegc/lakegc/internal/extsort"
)

// Iter is a stream of counted keys, strictly ascending. The key is valid
// until the next call.
type Iter interface {
	Next() (key []byte, count int64, ok bool, err error)
	Close() error
}

// Nop is an empty stream.
type Nop struct{}

// Next returns the end.
func (Nop) Next() ([]byte, int64, bool, error) { return nil, 0, false, nil }

// Close does nothing.
func (Nop) Close() error { return nil }

// NewMerge merges counted streams, summing the counts of a key and leaving
// out the keys whose sum is 0. A stream whose keys do not strictly ascend
// fails it. Close closes every stream.
func NewMerge(iters []Iter) Iter { return &merge{all: iters} }

type merge struct {
	all     []Iter
	heap    []head
	started bool
	key     []byte
	err     error
	// second is the index (1 or 2) of the smaller child of the top, the
	// smallest head but the top's, while the children stay; 0: unknown.
	second int
}

type head struct {
	key   []byte
	count int64
	it    Iter
}

func (m *merge) less(i, j int) bool { return bytes.Compare(m.heap[i].key, m.heap[j].key) < 0 }

func (m *merge) down(i int) {
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

// advance moves the top stream, whose key was m.key, on, or drops it at
// its end. above says the top is the stream's next key, below every other
// head (so above m.key, and alone): a long run of one stream costs one
// comparison with the smallest other head, which stays the same until the
// heap changes.
func (m *merge) advance() (above bool, err error) {
	h := &m.heap[0]
	k, c, ok, err := h.it.Next()
	if err != nil {
		return false, err
	}
	if !ok {
		m.heap[0] = m.heap[len(m.heap)-1]
		m.heap = m.heap[:len(m.heap)-1]
	} else {
		if bytes.Compare(k, m.key) <= 0 {
			return false, fmt.Errorf("keycount: keys out of order: %q after %q", k, m.key)
		}
		h.key, h.count = k, c
		if len(m.heap) == 1 {
			return true, nil
		}
		if m.second == 0 {
			m.second = 1
			if len(m.heap) > 2 && m.less(2, 1) {
				m.second = 2
			}
		}
		if bytes.Compare(k, m.heap[m.second].key) < 0 {
			return true, nil
		}
	}
	m.second = 0
	m.down(0)
	return false, nil
}

func (m *merge) Next() ([]byte, int64, bool, error) {
	if m.err != nil {
		return nil, 0, false, m.err
	}
	if !m.started {
		m.started = true
		for _, it := range m.all {
			k, c, ok, err := it.Next()
			if err != nil {
				m.err = err
				return nil, 0, false, err
			}
			if ok {
				m.heap = append(m.heap, head{key: k, count: c, it: it})
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	}
	// Every head is above m.key here: a head is checked to be above the
	// key taken before it when its stream moves on, and the heads equal to
	// that key are all taken before the next.
	for len(m.heap) > 0 {
		m.key = append(m.key[:0], m.heap[0].key...)
		var sum int64
		for {
			sum += m.heap[0].count
			above, err := m.advance()
			if err != nil {
				m.err = err
				return nil, 0, false, err
			}
			if above || len(m.heap) == 0 || !bytes.Equal(m.heap[0].key, m.key) {
				break
			}
		}
		if sum != 0 {
			return m.key, sum, true, nil
		}
	}
	return nil, 0, false, nil
}

func (m *merge) Close() error {
	var errs []error
	for _, it := range m.all {
		errs = append(errs, it.Close())
	}
	return errors.Join(errs...)
}

// spillFormat is the format of the spill files of counts: counts are not
// zero, aux is.
var spillFormat = &Format{
	Magic:   "lakegc-counts\x00v1\n",
	Name:    "spilled counts",
	Corrupt: errors.New("keycount: spilled counts corrupt"),
	Valid:   func(c int64, aux uint64) bool { return c != 0 && aux == 0 },
}

// File reads a file of counted keys.
type File struct {
	f      *os.File
	d      *Decoder
	remove bool
}

// OpenFile opens a file of counted keys of format f, read through a buffer
// of ioBuf bytes.
func OpenFile(name string, f *Format, ioBuf int) (*File, error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("keycount: %w", err)
	}
	d, err := NewDecoder(file, f, ioBuf)
	if err != nil {
		file.Close()
		return nil, err
	}
	return &File{f: file, d: d}, nil
}

// Entry returns the next entry, its aux too.
func (fc *File) Entry() ([]byte, int64, uint64, bool, error) { return fc.d.Next() }

// Next returns the next key and its count.
func (fc *File) Next() ([]byte, int64, bool, error) {
	k, c, _, ok, err := fc.d.Next()
	return k, c, ok, err
}

// Count returns the number of entries read so far.
func (fc *File) Count() int64 { return fc.d.Count() }

// Close closes the file (and removes it, for a spill file).
func (fc *File) Close() error {
	err := fc.f.Close()
	if fc.remove {
		os.Remove(fc.f.Name())
	}
	return err
}

// Spill writes the stream it to a new spill file of d and closes it; it
// returns the file's name.
func Spill(d *extsort.SpillDir, it Iter) (name string, err error) {
	defer func() { err = errors.Join(err, it.Close()) }()
	f, err := d.CreateFile("counts")
	if err != nil {
		return "", err
	}
	w := bufio.NewWriterSize(f, d.IOBuf())
	enc := NewEncoder(w, spillFormat, d.IOBuf())
	for {
		k, c, ok, err := it.Next()
		if err == nil && ok {
			err = enc.Add(k, c, 0)
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
	err = enc.Finish()
	if err == nil {
		err = w.Flush()
	}
	err = errors.Join(err, f.Close())
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("keycount: spill: %w", err)
	}
	return f.Name(), nil
}

// MergeSpills opens spill files as one merged stream, merging them fanIn
// at a time first when there are more; each file is removed once read.
func MergeSpills(d *extsort.SpillDir, names []string, fanIn int) (Iter, error) {
	fanIn = max(fanIn, 2)
	for len(names) > fanIn {
		it, err := openSpills(d, names[:fanIn])
		if err != nil {
			return nil, err
		}
		name, err := Spill(d, it)
		if err != nil {
			return nil, err
		}
		names = append(names[fanIn:], name)
	}
	return openSpills(d, names)
}

func openSpills(d *extsort.SpillDir, names []string) (Iter, error) {
	iters := make([]Iter, 0, len(names))
	for _, name := range names {
		fc, err := OpenFile(name, spillFormat, d.IOBuf())
		if err != nil {
			for _, it := range iters {
				it.Close()
			}
			return nil, err
		}
		fc.remove = true
		iters = append(iters, fc)
	}
	return NewMerge(iters), nil
}

// Prefetch returns the entries of it, read ahead on a goroutine of its own
// (extsort.NewPrefetch), so that the merges and decoding behind it run
// while its reader works. Close stops the goroutine and closes it.
func Prefetch(it Iter) Iter {
	return &prefetched{p: extsort.NewPrefetch(&withCount{it: it})}
}

// withCount passes each key with its count appended (8 bytes), so that a
// stream of keys carries both.
type withCount struct {
	it  Iter
	buf []byte
}

func (w *withCount) Next() ([]byte, bool, error) {
	k, c, ok, err := w.it.Next()
	if err != nil || !ok {
		return nil, ok, err
	}
	w.buf = binary.LittleEndian.AppendUint64(append(w.buf[:0], k...), uint64(c))
	return w.buf, true, nil
}

func (w *withCount) Close() error { return w.it.Close() }

type prefetched struct{ p extsort.Iter }

func (p *prefetched) Next() ([]byte, int64, bool, error) {
	k, ok, err := p.p.Next()
	if err != nil || !ok {
		return nil, 0, ok, err
	}
	if len(k) < 8 {
		return nil, 0, false, errors.New("keycount: prefetched entry without its count")
	}
	n := len(k) - 8
	return k[:n:n], int64(binary.LittleEndian.Uint64(k[n:])), true, nil
}

func (p *prefetched) Close() error { return p.p.Close() }
