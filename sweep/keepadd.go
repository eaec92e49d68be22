package sweep

import "github.com/lakegc/lakegc/internal/extsort"

// This file adds keep keys to a sorter on a goroutine of its own. readKeep
// ranges over a host's input (uncommitted.Addresses decoding an export's
// Parquet pages, say) and the sorter copies each key into its block and
// sorts the block when it fills: on one goroutine the two take turns on one
// core. readKeep copies the keys into batches that a keepAdder adds in
// stream order, so the input's decoding and the sorter overlap.
//
// The batches count against no budget: there are keepBatches of them, each
// of at most keepBatchBytes of keys (a key that does not fit starts the next
// batch; keepKeyErr bounds a key to 64 KiB) and keepBatchKeys ends, 432 KiB
// in all at most, taken as they fill (an input of a few keys takes about a
// KiB).
const (
	keepBatchBytes = 128 << 10 // key bytes a batch holds at most
	keepBatchKeys  = 4096      // keys a batch holds at most: 16 KiB of ends
	keepBatches    = 3         // one filled, one added, one ready to be filled
)

// keepBatch is a run of consecutive keys of an input, packed in data; the
// i-th key ends at ends[i].
type keepBatch struct {
	data []byte
	ends []uint32
}

// fits reports whether key may join b: b is empty, or holds fewer than
// keepBatchKeys keys and room for key within keepBatchBytes.
func (b *keepBatch) fits(key string) bool {
	return len(b.ends) == 0 || len(b.ends) < keepBatchKeys && len(b.data)+len(key) <= keepBatchBytes
}

// put appends key to b. Its arrays grow as they fill, doubling, to at most
// keepBatchBytes and keepBatchKeys, for keys that fit (see fits), and to
// what the first key needs beyond them.
func (b *keepBatch) put(key string) {
	b.data = append(grown(b.data, len(key), keepBatchBytes), key...)
	b.ends = append(grown(b.ends, 1, keepBatchKeys), uint32(len(b.data)))
}

// grown returns s with room for n more elements: s if it has it, else a
// copy of s whose capacity is twice s's, or what n needs, and at most bound
// unless n needs more.
func grown[E any](s []E, n, bound int) []E {
	need := len(s) + n
	if need <= cap(s) {
		return s
	}
	return append(make([]E, 0, max(min(max(2*cap(s), 256), bound), need)), s...)
}

// keepAdder adds the keys of the batches sent on full to keep, on a
// goroutine of its own, and hands each batch back on free once its keys are
// added. It stops at the first error, which err holds, or at a panic, whose
// value panicked holds, and closes done once it has returned: only then may
// err, panicked and keep be read.
type keepAdder struct {
	keep     *extsort.Sorter
	full     chan *keepBatch // filled batches, in stream order
	free     chan *keepBatch // batches whose keys are added
	done     chan struct{}
	err      error
	panicked any
	closed   bool // full is closed
}

// startKeepAdder starts a keepAdder on keep, with keepBatches empty batches
// ready on free.
func startKeepAdder(keep *extsort.Sorter) *keepAdder {
	a := &keepAdder{
		keep: keep,
		// Every batch fits in either channel: sending one never blocks.
		full: make(chan *keepBatch, keepBatches),
		free: make(chan *keepBatch, keepBatches),
		done: make(chan struct{}),
	}
	for range keepBatches {
		a.free <- &keepBatch{}
	}
	go a.run()
	return a
}

func (a *keepAdder) run() {
	defer close(a.done)
	defer func() {
		// The sorter's panic goes to readKeep's goroutine, as it did when
		// readKeep added the keys itself (see finish).
		if r := recover(); r != nil {
			a.panicked = r
		}
	}()
	for b := range a.full {
		if a.err = a.add(b); a.err != nil {
			return
		}
		a.free <- b
	}
}

// add adds b's keys to the sorter, in order.
func (a *keepAdder) add(b *keepBatch) error {
	start := uint32(0)
	for _, end := range b.ends {
		if err := a.keep.Add(b.data[start:end:end]); err != nil {
			return keepAddErr(err)
		}
		start = end
	}
	return nil
}

// next returns an empty batch, once the adder has added one, after sending
// b, filled, to be added; nil when the adder has stopped, its error to be
// read by finish.
func (a *keepAdder) next(b *keepBatch) *keepBatch {
	a.full <- b
	select {
	case <-a.done:
		return nil
	default:
	}
	select {
	case b = <-a.free:
		b.data, b.ends = b.data[:0], b.ends[:0]
		return b
	case <-a.done:
		return nil
	}
}

// finish sends b, if it holds a key, waits until the adder has added every
// key sent or stopped, and returns its error; the adder's panic panics
// here.
func (a *keepAdder) finish(b *keepBatch) error {
	if b != nil && len(b.ends) > 0 {
		a.full <- b
	}
	a.stop()
	if a.panicked != nil {
		panic(a.panicked)
	}
	return a.err
}

// stop closes full and waits for the adder to return. Deferred by readKeep,
// it is what stops the adder when the input panics, after at most the
// batches already sent are added.
func (a *keepAdder) stop() {
	if !a.closed {
		a.closed = true
		close(a.full)
	}
	<-a.done
}
