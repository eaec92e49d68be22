package extsort

import "errors"

// This file runs a key stream ahead of its reader. A merge-join reads two
// streams (each a merge of spilled runs, say) and compares them: on one
// goroutine the merges and the comparison take turns on one core. A
// prefetchIter runs its stream on a goroutine of its own and hands the keys
// over in batches, so the merges and the join overlap.
//
// The batches are outside any sorter's memory: each holds about
// prefetchChunk bytes of keys and at most prefetchKeys keys, and a stream
// has prefetchBatches of them, a fixed amount under 1 MiB for two streams
// together.

const (
	prefetchChunk   = 128 << 10 // key bytes per batch (one key may go beyond)
	prefetchKeys    = 4096      // keys per batch
	prefetchBatches = 3         // batches per stream: one read, two filled ahead
)

var errPrefetchClosed = errors.New("extsort: prefetch: next after close")

// keyBatch is a run of consecutive keys of a stream, packed in data; the
// i-th key ends at ends[i]. The last batch of a stream has last set, and the
// error that ended the stream, if any.
type keyBatch struct {
	data []byte
	ends []uint32
	last bool
	err  error
}

// start returns where the i-th key of b starts.
func (b *keyBatch) start(i int) uint32 {
	if i == 0 {
		return 0
	}
	return b.ends[i-1]
}

// prefetchIter passes on the keys of in, read ahead on its own goroutine. As
// for every Iter, a key it returns is valid until the following call to
// next. in's keys and its error come out in the order in gave them; once
// checked (see strict), next fails as soon as they do not strictly ascend. close
// stops the goroutine and waits for it before it closes in, so in is only
// ever used by one goroutine at a time.
type prefetchIter struct {
	in    Iter
	chunk int            // key bytes per batch
	keys  int            // keys per batch
	full  chan *keyBatch // filled batches, in stream order
	free  chan *keyBatch // batches read, to fill again
	stop  chan struct{}  // closed by close
	done  chan struct{}  // closed when the goroutine has returned

	cur    *keyBatch // the batch being read
	pos    int       // index in cur of the next key
	closed bool

	// Once checked (Strict), the keys handed out must strictly ascend: each
	// is compared with the one before, which is still in cur, or with
	// last, the copy of the previous batch's last key.
	name string // the stream's name in an error; "" checks nothing
	last []byte
	seen bool  // a key was handed out
	err  error // the keys were out of order; the stream stops there
}

// NewPrefetch returns the keys of in, read ahead on a goroutine of its own
// in batches of about 128 KiB; in's keys and its error come out in the
// order in gave them. The caller must close the result (which closes in),
// or the goroutine stays blocked. The result is for one goroutine; in is
// used by one goroutine at a time.
func NewPrefetch(in Iter) Iter { return newPrefetch(in, prefetchChunk, prefetchKeys) }

// NewPrefetchSize is NewPrefetch with batches of chunk bytes (one key may go
// beyond) and at most keys keys: small batches let a test cross their
// boundaries often.
func NewPrefetchSize(in Iter, chunk, keys int) Iter { return newPrefetch(in, chunk, keys) }

func newPrefetch(in Iter, chunk, keys int) *prefetchIter {
	p := &prefetchIter{
		in:    in,
		chunk: chunk,
		keys:  keys,
		full:  make(chan *keyBatch, prefetchBatches),
		free:  make(chan *keyBatch, prefetchBatches),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	for range prefetchBatches {
		p.free <- &keyBatch{
			data: make([]byte, 0, chunk),
			ends: make([]uint32, 0, keys),
		}
	}
	go p.run()
	return p
}

// run fills batches from in until it ends, fails, or close is called.
func (p *prefetchIter) run() {
	defer close(p.done)
	for {
		var b *keyBatch
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		if cap(b.data) > 2*p.chunk {
			// A long key grew it: the array goes rather than stay for
			// the rest of the stream.
			b.data = make([]byte, 0, p.chunk)
		}
		b.data, b.ends = b.data[:0], b.ends[:0]
		for len(b.data) < p.chunk && len(b.ends) < p.keys {
			k, ok, err := p.in.Next()
			if err != nil || !ok {
				b.last, b.err = true, err
				break
			}
			b.data = append(b.data, k...)
			b.ends = append(b.ends, uint32(len(b.data)))
		}
		select {
		case p.full <- b:
		case <-p.stop:
			return
		}
		if b.last {
			return
		}
	}
}

func (p *prefetchIter) Next() ([]byte, bool, error) {
	if p.closed {
		return nil, false, errPrefetchClosed
	}
	if p.err != nil {
		return nil, false, p.err
	}
	for {
		if b := p.cur; b != nil {
			if p.pos < len(b.ends) {
				start, end := b.start(p.pos), b.ends[p.pos]
				k := b.data[start:end:end]
				if p.name != "" && p.seen {
					prev := p.last
					if p.pos > 0 {
						prev = b.data[b.start(p.pos-1):start]
					}
					if p.err = ascends(p.name, k, prev); p.err != nil {
						return nil, false, p.err
					}
				}
				p.pos++
				p.seen = true
				return k, true, nil
			}
			if b.last {
				return nil, false, b.err
			}
			// The key last returned is in b; it need only last until now,
			// but for the check of the next key's order.
			if n := len(b.ends); n > 0 && p.name != "" {
				p.last = append(p.last[:0], b.data[b.start(n-1):b.ends[n-1]]...)
			}
			p.free <- b // never blocks: free has room for every batch
			p.cur = nil
		}
		p.cur, p.pos = <-p.full, 0
	}
}

// strict makes next fail, naming the stream name, as soon as the keys it
// hands out do not strictly ascend. It must be called before the first next.
func (p *prefetchIter) strict(name string) { p.name = name }

// close stops the goroutine, waits for it, and closes in.
func (p *prefetchIter) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	close(p.stop)
	<-p.done
	return p.in.Close()
}
