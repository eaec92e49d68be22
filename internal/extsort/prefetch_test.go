package extsort

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// scriptIter yields keys from one reused buffer, as the run readers do, then
// err (if any). It counts its calls, and fails the test if it is used after
// close or from two goroutines at once.
type scriptIter struct {
	t      testing.TB
	keys   [][]byte
	err    error
	i      int
	buf    []byte
	busy   atomic.Bool
	nexts  atomic.Int64
	closes atomic.Int64
	delay  time.Duration // before each key
}

func (s *scriptIter) Next() ([]byte, bool, error) {
	if !s.busy.CompareAndSwap(false, true) {
		s.t.Error("scriptIter: used by two goroutines at once")
	}
	defer s.busy.Store(false)
	s.nexts.Add(1)
	if s.closes.Load() > 0 {
		s.t.Error("scriptIter: next after close")
	}
	time.Sleep(s.delay)
	if s.i >= len(s.keys) {
		return nil, false, s.err
	}
	// Overwrite the previous key's bytes: a reader that kept them
	// without copying sees them change.
	for j := range s.buf {
		s.buf[j] = 0xff
	}
	s.buf = append(s.buf[:0], s.keys[s.i]...)
	s.i++
	return s.buf, true, nil
}

func (s *scriptIter) Close() error {
	if s.closes.Add(1) > 1 {
		s.t.Error("scriptIter: closed twice")
	}
	return nil
}

func randomKeys(r *rand.Rand, n, maxLen int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		k := make([]byte, r.IntN(maxLen+1)) // empty keys too
		for j := range k {
			k[j] = byte(r.IntN(256))
		}
		keys[i] = k
	}
	return keys
}

// TestPrefetchMatchesInner checks, on random streams and batch sizes, that a
// prefetchIter yields exactly the keys of its stream, then its end or its
// error, and keeps yielding that end.
func TestPrefetchMatchesInner(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	boom := errors.New("boom")
	for trial := range 300 {
		n := r.IntN(3000)
		if trial%10 == 0 {
			n = r.IntN(3)
		}
		maxLen := []int{1, 8, 40, 600}[r.IntN(4)]
		keys := randomKeys(r, n, maxLen)
		var err error
		if r.IntN(3) == 0 {
			err = boom
		}
		chunk, nkeys := 1+r.IntN(1024), 1+r.IntN(64)
		t.Run(fmt.Sprintf("%d/n=%d/chunk=%d/keys=%d/err=%v", trial, n, chunk, nkeys, err != nil), func(t *testing.T) {
			in := &scriptIter{t: t, keys: keys, err: err}
			p := newPrefetch(in, chunk, nkeys)
			for i := 0; ; i++ {
				k, ok, gotErr := p.Next()
				if i < n {
					if !ok || gotErr != nil || !bytes.Equal(k, keys[i]) {
						t.Fatalf("key %d: got %q %v %v, want %q", i, k, ok, gotErr, keys[i])
					}
					continue
				}
				if ok || gotErr != err {
					t.Fatalf("after %d keys: got %q %v %v, want the end with error %v", n, k, ok, gotErr, err)
				}
				// The end is sticky.
				if _, ok, again := p.Next(); ok || again != err {
					t.Fatalf("second call after the end: %v %v", ok, again)
				}
				break
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			if in.closes.Load() != 1 {
				t.Fatalf("inner closed %d times", in.closes.Load())
			}
		})
	}
}

// TestPrefetchKeyValidUntilNext checks that a key returned stays unchanged
// while the goroutine fills further batches, up to the following next.
func TestPrefetchKeyValidUntilNext(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	keys := randomKeys(r, 5000, 30)
	p := newPrefetch(&scriptIter{t: t, keys: keys}, 64, 4)
	defer p.Close()
	for i := range keys {
		k, ok, err := p.Next()
		if !ok || err != nil {
			t.Fatalf("key %d: %v %v", i, ok, err)
		}
		if i%500 == 0 {
			time.Sleep(time.Millisecond) // let the goroutine fill every free batch
		}
		if !bytes.Equal(k, keys[i]) {
			t.Fatalf("key %d changed before the next call: %q, want %q", i, k, keys[i])
		}
	}
}

// TestPrefetchEarlyClose checks that close stops the goroutine before it
// closes the stream, whatever point the reader stopped at, and that the
// stream is not read after close.
func TestPrefetchEarlyClose(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	keys := randomKeys(r, 100000, 10)
	for _, read := range []int{0, 1, 7, 1000} {
		t.Run(fmt.Sprint(read), func(t *testing.T) {
			in := &scriptIter{t: t, keys: keys, delay: time.Microsecond}
			p := newPrefetch(in, 256, 16)
			for i := range read {
				if k, ok, err := p.Next(); !ok || err != nil || !bytes.Equal(k, keys[i]) {
					t.Fatalf("key %d: %q %v %v", i, k, ok, err)
				}
			}
			if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.done:
			default:
				t.Fatal("goroutine still running after close")
			}
			if in.closes.Load() != 1 {
				t.Fatalf("inner closed %d times", in.closes.Load())
			}
			nexts := in.nexts.Load()
			if nexts >= int64(len(keys)) {
				t.Fatalf("the whole stream was read (%d calls) though the reader stopped", nexts)
			}
			time.Sleep(5 * time.Millisecond)
			if in.nexts.Load() != nexts {
				t.Fatal("stream read after close")
			}
			if err := p.Close(); err != nil {
				t.Fatalf("second close: %v", err)
			}
			if _, ok, err := p.Next(); ok || !errors.Is(err, errPrefetchClosed) {
				t.Fatalf("next after close: %v %v", ok, err)
			}
		})
	}
}

// TestPrefetchReadsAhead checks that the stream is read while the reader
// does something else: the point of the goroutine.
func TestPrefetchReadsAhead(t *testing.T) {
	keys := randomKeys(rand.New(rand.NewPCG(7, 8)), 100, 5)
	in := &scriptIter{t: t, keys: keys}
	p := newPrefetch(in, 1<<10, 10)
	defer p.Close()
	deadline := time.Now().Add(10 * time.Second)
	for in.nexts.Load() < 30 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := in.nexts.Load(); got != 30 {
		t.Fatalf("read ahead %d keys before the first next, want 3 batches of 10", got)
	}
}
