package keycount

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCRCWriter: whatever the writes' sizes, the writer's checksum is of
// all but the last 4 bytes, and it holds those and the first ones.
func TestCRCWriter(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	for range 2000 {
		data := make([]byte, r.IntN(60))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		var buf bytes.Buffer
		bw := bufio.NewWriter(&buf)
		cw := &crcWriter{w: bw}
		for rest := data; len(rest) > 0; {
			n := min(r.IntN(9), len(rest))
			_, err := cw.Write(rest[:n])
			require.NoError(t, err)
			rest = rest[n:]
		}
		require.NoError(t, bw.Flush())
		require.Equal(t, string(data), buf.String())
		require.Equal(t, int64(len(data)), cw.n)
		require.Equal(t, string(data[:min(len(data), 32)]), string(cw.head))
		if len(data) >= 4 {
			require.Equal(t, crc32.Checksum(data[:len(data)-4], table), cw.crc)
			require.Equal(t, data[len(data)-4:], cw.tail[:])
		}
	}
}

// TestCommonPrefix: eight bytes at a time, the same as one at a time.
func TestCommonPrefix(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	for range 20000 {
		a := make([]byte, r.IntN(40))
		for i := range a {
			a[i] = byte('a' + r.IntN(2))
		}
		b := slices.Clone(a[:r.IntN(len(a)+1)])
		if r.IntN(2) == 0 && len(b) > 0 {
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		}
		b = append(b, a[len(b):len(b)+r.IntN(len(a)-len(b)+1)]...)
		want := 0
		for want < min(len(a), len(b)) && a[want] == b[want] {
			want++
		}
		require.Equal(t, want, commonPrefix(a, b), "%q %q", a, b)
	}
}

type mem struct {
	keys   []string
	counts []int64
}

func (s *mem) Next() ([]byte, int64, bool, error) {
	if len(s.keys) == 0 {
		return nil, 0, false, nil
	}
	k, c := s.keys[0], s.counts[0]
	s.keys, s.counts = s.keys[1:], s.counts[1:]
	return []byte(k), c, true, nil
}

func (s *mem) Close() error { return nil }

// TestMergeModel: the merge of random streams is the sum of their counts
// by key, zeros left out; a stream that goes back or repeats a key fails.
func TestMergeModel(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 3))
	for trial := range 500 {
		want := map[string]int64{}
		var iters []Iter
		bad := false
		for range r.IntN(5) {
			s := &mem{}
			for k := range 20 {
				if r.IntN(3) == 0 {
					s.keys = append(s.keys, string(rune('a'+k)))
					c := int64(r.IntN(5) - 2)
					if c == 0 {
						c = 1
					}
					s.counts = append(s.counts, c)
					want[s.keys[len(s.keys)-1]] += c
				}
			}
			if len(s.keys) > 1 && r.IntN(10) == 0 {
				s.keys[1] = s.keys[0] // out of order
				bad = true
			}
			iters = append(iters, s)
		}
		m := NewMerge(iters)
		got := map[string]int64{}
		var err error
		var prev string
		for {
			var k []byte
			var c int64
			var ok bool
			if k, c, ok, err = m.Next(); err != nil || !ok {
				break
			}
			require.NotZero(t, c)
			require.Greater(t, string(k), prev)
			prev = string(k)
			got[string(k)] = c
		}
		if bad {
			require.Error(t, err, "trial %d", trial)
			continue
		}
		require.NoError(t, err)
		for k, c := range want {
			if c == 0 {
				delete(want, k)
			}
		}
		require.Equal(t, want, got, "trial %d", trial)
	}
}

// TestCopyChecked: a copy of a stream is checked whole: a flipped byte or a
// cut is an error wrapping Corrupt.
func TestCopyChecked(t *testing.T) {
	f := &Format{Magic: "test\n", Name: "test", Corrupt: errors.New("corrupt"), Valid: func(int64, uint64) bool { return true }}
	var buf bytes.Buffer
	e := NewEncoder(&buf, f, 64)
	for i := range 100 {
		require.NoError(t, e.Add([]byte{byte('a' + i/26), byte('a' + i%26)}, int64(i), 0))
	}
	require.NoError(t, e.Finish())
	b := buf.Bytes()
	var out bytes.Buffer
	require.NoError(t, CopyChecked(&out, bytes.NewReader(b), f))
	require.Equal(t, b, out.Bytes())
	for i := range b {
		c := slices.Clone(b)
		c[i] ^= 0x40
		require.ErrorIs(t, CopyChecked(io.Discard, bytes.NewReader(c), f), f.Corrupt, "flip at %d", i)
		require.ErrorIs(t, CopyChecked(io.Discard, bytes.NewReader(b[:i]), f), f.Corrupt, "cut at %d", i)
	}
}

// TestPrefetch: a stream read ahead gives the same entries, and its error.
func TestPrefetch(t *testing.T) {
	s := &mem{}
	for i := range 20000 {
		s.keys = append(s.keys, fmt.Sprintf("k%06d", i))
		s.counts = append(s.counts, int64(i%7)-3)
	}
	want := slices.Clone(s.keys)
	counts := slices.Clone(s.counts)
	p := Prefetch(s)
	for i := range want {
		k, c, ok, err := p.Next()
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want[i], string(k))
		require.Equal(t, counts[i], c)
	}
	_, _, ok, err := p.Next()
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, p.Close())
	bad := NewMerge([]Iter{&mem{keys: []string{"b", "a"}, counts: []int64{1, 1}}})
	p = Prefetch(bad)
	_, _, _, err = p.Next()
	if err == nil {
		_, _, _, err = p.Next()
	}
	require.Error(t, err)
	require.NoError(t, p.Close())
}

// bufMem yields its keys from one reused buffer, as a decoder does.
type bufMem struct {
	mem
	buf []byte
}

func (s *bufMem) Next() ([]byte, int64, bool, error) {
	k, c, ok, err := s.mem.Next()
	s.buf = append(s.buf[:0], k...)
	return s.buf, c, ok, err
}

// TestMergeModelLongRuns is TestMergeModel with up to 6 streams of up to
// 400 keys each, from buffers they reuse: long runs of one stream between
// the others' keys, keys shared by several streams, and streams that go
// back or repeat a key anywhere.
func TestMergeModelLongRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 4))
	failed := 0
	for trial := range 1000 {
		want := map[string]int64{}
		var iters []Iter
		bad := false
		for range r.IntN(7) {
			set := map[string]bool{}
			for range r.IntN(400) {
				set[fmt.Sprintf("k%0*d", 1+r.IntN(3), r.IntN(1000))] = true
			}
			s := &bufMem{}
			s.keys = slices.Sorted(maps.Keys(set))
			for _, k := range s.keys {
				c := int64(r.IntN(7) - 3)
				if c == 0 {
					c = 1
				}
				s.counts = append(s.counts, c)
				want[k] += c
			}
			if n := len(s.keys); n > 1 && r.IntN(8) == 0 {
				i := 1 + r.IntN(n-1)
				if r.IntN(2) == 0 {
					s.keys[i] = s.keys[i-1] // a repeat
				} else {
					s.keys[i-1], s.keys[i] = s.keys[i], s.keys[i-1] // back
				}
				bad = true
			}
			iters = append(iters, s)
		}
		m := NewMerge(iters)
		got := map[string]int64{}
		var err error
		var prev string
		for {
			var k []byte
			var c int64
			var ok bool
			if k, c, ok, err = m.Next(); err != nil || !ok {
				break
			}
			require.NotZero(t, c)
			require.Greater(t, string(k), prev)
			prev = string(k)
			got[string(k)] = c
		}
		if bad {
			require.Error(t, err, "trial %d", trial)
			failed++
			continue
		}
		require.NoError(t, err)
		maps.DeleteFunc(want, func(_ string, c int64) bool { return c == 0 })
		require.Equal(t, want, got, "trial %d", trial)
	}
	require.Greater(t, failed, 50)
}
