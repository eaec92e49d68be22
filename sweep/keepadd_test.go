package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lakegc/lakegc/internal/extsort"
)

// keepAdderKeys returns n keys, most of the bottom line's shape, some long
// enough to fill a batch's bytes before its count, with repeats.
func keepAdderKeys(r *rand.Rand, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		switch {
		case i%997 == 0:
			keys[i] = "data/long/" + strings.Repeat("x", r.IntN(maxRecordKey-10)+1)
		case i%5 == 0 && i > 0:
			keys[i] = keys[r.IntN(i)]
		default:
			keys[i] = fmt.Sprintf("data/%04d/%08x", r.IntN(50), r.Uint32())
		}
	}
	return keys
}

// newKeepSorter returns a sorter with a block of block bytes in a spill
// folder of its own, removed with the test.
func newKeepSorter(t *testing.T, block int) (*extsort.Sorter, *extsort.SpillDir) {
	dir, err := extsort.NewSpillDir(t.TempDir(), 4<<10)
	require.NoError(t, err)
	t.Cleanup(func() { dir.Remove() })
	s := extsort.NewSorter(dir, block, 8)
	t.Cleanup(s.Release)
	return s, dir
}

func drain(t *testing.T, s *extsort.Sorter) []string {
	it, err := s.Finish()
	require.NoError(t, err)
	defer it.Close()
	var out []string
	for {
		k, ok, err := it.Next()
		require.NoError(t, err)
		if !ok {
			return out
		}
		out = append(out, string(k))
	}
}

// TestReadKeepKeepsEveryKey reads keys across many batches, by count and by
// bytes, into a sorter whose block spills: every key comes out, once.
func TestReadKeepKeepsEveryKey(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := keepAdderKeys(r, keepBatchKeys*keepBatches+123)
	s, _ := newKeepSorter(t, 256<<10)
	withAdderCheck(t, func(ctx context.Context) {
		require.NoError(t, readKeep(ctx, seqOf(keys), s))
	})
	want := slices.Clone(keys)
	slices.Sort(want)
	require.Equal(t, slices.Compact(want), drain(t, s))
}

// TestReadKeepErrors has readKeep fail in each way it can, after many
// batches: it returns the error it returned when it added each key before
// reading the next (the first in the input's order) or panics with the
// input's panic, stops reading the input soon after a key the sorter
// refused, and returns only once the adder has stopped.
func TestReadKeepErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	keys := make([]string, 5*keepBatchKeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("data/%04d/%08x", r.IntN(50), r.Uint32())
	}
	inputErr := errors.New("input broke")
	// input yields keys[:n], then calls end; yielded counts the keys it
	// yielded.
	var yielded int
	input := func(n int, end func(yield func(string, error) bool)) iter.Seq2[string, error] {
		yielded = 0
		return func(yield func(string, error) bool) {
			for _, k := range keys[:n] {
				if !yield(k, nil) {
					return
				}
				yielded++
			}
			end(yield)
		}
	}
	invalid := func(yield func(string, error) bool) { yield("/abs", nil) }
	after := 3*keepBatchKeys + 17 // the adder has added batches by then
	read := func(t *testing.T, seq iter.Seq2[string, error], keep *extsort.Sorter) (err error) {
		withAdderCheck(t, func(ctx context.Context) { err = readKeep(ctx, seq, keep) })
		return err
	}
	// broken returns a sorter with a 64 KiB block whose spill folder is gone:
	// it refuses the key that fills its block, well within the first batch.
	broken := func(t *testing.T) *extsort.Sorter {
		s, dir := newKeepSorter(t, 64<<10)
		require.NoError(t, dir.Remove())
		return s
	}

	t.Run("input error", func(t *testing.T) {
		s, _ := newKeepSorter(t, 64<<10)
		err := read(t, input(after, func(yield func(string, error) bool) { yield("", inputErr) }), s)
		require.ErrorIs(t, err, inputErr)
		require.ErrorContains(t, err, "sweep: input: ")
	})
	t.Run("invalid key", func(t *testing.T) {
		s, _ := newKeepSorter(t, 64<<10)
		err := read(t, input(after, invalid), s)
		require.ErrorIs(t, err, ErrInvalidInput)
		require.ErrorContains(t, err, `keep key "/abs"`)
	})
	t.Run("cancelled", func(t *testing.T) {
		s, _ := newKeepSorter(t, 64<<10)
		ctx, cancel := context.WithCancel(context.Background())
		var err error
		withAdderCheck(t, func(context.Context) {
			err = readKeep(ctx, input(after, func(yield func(string, error) bool) {
				cancel()
				for _, k := range keys {
					if !yield(k, nil) {
						return
					}
					yielded++
				}
			}), s)
		})
		require.ErrorIs(t, err, context.Canceled)
		require.Less(t, yielded, after+4096+1, "read on after ctx ended")
	})
	t.Run("sorter fails", func(t *testing.T) {
		err := read(t, input(len(keys), invalid), broken(t))
		require.Error(t, err)
		require.NotErrorIs(t, err, ErrInvalidInput, "the input was read to its end")
		require.Less(t, yielded, (keepBatches+1)*keepBatchKeys, "read on after the sorter failed")
	})
	t.Run("sorter fails before an invalid key", func(t *testing.T) {
		// The invalid key is read before the sorter has the batch whose
		// key it refuses: the refusal came first.
		err := read(t, input(keepBatchKeys-1, invalid), broken(t))
		require.Error(t, err)
		require.NotErrorIs(t, err, ErrInvalidInput)
	})
	t.Run("input panics", func(t *testing.T) {
		s, _ := newKeepSorter(t, 64<<10)
		withAdderCheck(t, func(ctx context.Context) {
			defer func() { require.Equal(t, "input panicked", recover()) }()
			readKeep(ctx, input(after, func(func(string, error) bool) { panic("input panicked") }), s)
		})
	})
	t.Run("sorter fails, then the input panics", func(t *testing.T) {
		// The one way out that may differ from adding each key before
		// reading the next (readKeep's comment): the input is read past
		// the key the sorter refused, up to when readKeep sees the
		// adder has stopped, and its panic there comes out. Which of
		// the two comes out depends on when readKeep sees it.
		withAdderCheck(t, func(ctx context.Context) {
			defer func() {
				if p := recover(); p != nil {
					require.Equal(t, "input panicked", p)
					require.Equal(t, 2*keepBatchKeys, yielded)
				}
			}()
			err := readKeep(ctx, input(2*keepBatchKeys, func(func(string, error) bool) { panic("input panicked") }), broken(t))
			require.Error(t, err)
			require.Less(t, yielded, 2*keepBatchKeys, "read to the panic, yet no panic")
		})
	})
	t.Run("sorter panics", func(t *testing.T) {
		// A nil sorter panics in Add, on the adder's goroutine: the panic
		// reaches readKeep's caller, as when readKeep added the keys itself.
		withAdderCheck(t, func(ctx context.Context) {
			defer func() {
				_, ok := recover().(runtime.Error)
				require.True(t, ok, "no runtime error")
			}()
			readKeep(ctx, input(after, func(func(string, error) bool) {}), nil)
		})
	})
}

// TestKeepBatchBounded fills batches as readKeep does, with short keys,
// then keys of up to the longest keepKeyErr accepts: no batch grows past
// its bounds.
func TestKeepBatchBounded(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	b := &keepBatch{}
	var byBytes, byCount int
	var keys []string
	for i := range 2 * keepBatchKeys {
		keys = append(keys, fmt.Sprintf("data/%04d/%08x", i%50, r.Uint32()))
	}
	bounded := func() {
		require.LessOrEqual(t, cap(b.data), keepBatchBytes)
		require.LessOrEqual(t, cap(b.ends), keepBatchKeys)
	}
	for _, key := range append(keys, keepAdderKeys(r, keepBatchKeys)...) {
		if !b.fits(key) {
			if len(b.ends) == keepBatchKeys {
				byCount++
			} else {
				byBytes++
			}
			bounded()
			b.data, b.ends = b.data[:0], b.ends[:0]
		}
		b.put(key)
	}
	bounded()
	require.Positive(t, byBytes, "no batch filled its bytes")
	require.Positive(t, byCount, "no batch filled its keys")
}

// TestKeepAddErr: a key too long for the sorter is invalid input.
func TestKeepAddErr(t *testing.T) {
	err := keepAddErr(fmt.Errorf("%w: 2 GiB", extsort.ErrKeyTooLong))
	require.ErrorIs(t, err, ErrInvalidInput)
	require.ErrorIs(t, err, extsort.ErrKeyTooLong)
	other := errors.New("disk full")
	require.Equal(t, other, keepAddErr(other))
}

// withAdderCheck runs f with goroutine labels of its own, which the adder
// readKeep starts inherits, and fails unless every goroutine with them has
// ended soon after f returns (one check before then proves that they
// show).
func withAdderCheck(t *testing.T, f func(ctx context.Context)) {
	t.Helper()
	value := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	pprof.Do(context.Background(), pprof.Labels("keepadder", value), func(ctx context.Context) {
		require.Equal(t, 1, labelled(value), "this goroutine")
		f(ctx)
	})
	for deadline := time.Now().Add(time.Second); labelled(value) > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of readKeep's still run after it returned", labelled(value))
		}
	}
}

// labelled counts the goroutines labelled keepadder=value.
func labelled(value string) int {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		panic(err)
	}
	label := fmt.Sprintf("%q:%q", "keepadder", value)
	n := 0
	for _, rec := range strings.Split(buf.String(), "\n\n") {
		if !strings.Contains(rec, label) {
			continue
		}
		_, first, _ := strings.Cut(rec, "goroutine profile: ")
		if first != "" {
			_, rec, _ = strings.Cut(first, "\n")
		}
		var c int
		if _, err := fmt.Sscanf(rec, "%d @", &c); err != nil {
			panic(fmt.Sprintf("goroutine profile: %q", rec))
		}
		n += c
	}
	return n
}
