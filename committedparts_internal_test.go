package lakegc

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lakegc/lakegc/internal/nsaddr"
	"github.com/lakegc/lakegc/sweep"
)

// LimitPartBuffers sets, for the test t, the bounds of the buffers through
// which Collect reads a part once (partBufferLimits): part for one part's
// front-coded relative addresses, all for a cycle's at once. A part over
// them is read twice. Tests that call it must not run in parallel.
func LimitPartBuffers(t testing.TB, part, all int64) {
	old := partBufferLimits
	partBufferLimits = func(int64) (int64, int64) { return part, all }
	t.Cleanup(func() { partBufferLimits = old })
}

// frontCodedSize is the size partBuffer's documentation gives a part's
// relative addresses: for each, the length it shares with the one before
// and the length of the rest, as uvarints, then the rest.
func frontCodedSize(addresses []string) int64 {
	var size int64
	prev := ""
	for _, a := range addresses {
		if nsaddr.IsFull(a) {
			continue
		}
		s := 0
		for s < len(a) && s < len(prev) && a[s] == prev[s] {
			s++
		}
		size += int64(len(uvarint(uint64(s))) + len(uvarint(uint64(len(a)-s))) + len(a) - s)
		prev = a
	}
	return size
}

func uvarint(n uint64) []byte {
	var b []byte
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(b, byte(n))
}

// testParts is a host's parts held in memory, counting their opens; a
// part in drop yields its irregular addresses only on its first open.
type testParts struct {
	mu    sync.Mutex
	parts map[string][]string
	opens map[string]int
	drop  map[string]bool
	fail  map[string]int // a part fails after this many addresses
}

func (p *testParts) open(_ context.Context, id string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		p.mu.Lock()
		p.opens[id]++
		later := p.opens[id] > 1
		p.mu.Unlock()
		n, fails := p.fail[id]
		for i, a := range p.parts[id] {
			if fails && i == n {
				yield("", errors.New("testparts: part unreadable"))
				return
			}
			if later && p.drop[id] && (nsaddr.IsFull(a) || nsaddr.MayClean(a)) {
				continue
			}
			if !yield(a, nil) {
				return
			}
		}
	}
}

// randomPart returns a part's addresses: relative ones strictly ascending,
// some spelled as the namespace's S3 resolution cleans them (which keep
// their cleaned spelling too), and full ones anywhere, inside the
// namespace or not.
func randomPart(r *rand.Rand, n int) []string {
	var rel []string
	for range n {
		k := fmt.Sprintf("data/g%02d/%s", r.IntN(8), strings.Repeat(string(rune('a'+r.IntN(3))), 1+r.IntN(3))+[]string{"", "-x", ".y", "_z"}[r.IntN(4)])
		switch r.IntN(8) {
		case 0:
			k = "./" + k
		case 1:
			k = "/" + k
		case 2:
			k = strings.Replace(k, "/", "//", 1)
		case 3:
			k = strings.Replace(k, "/", "/./", 1)
		}
		rel = append(rel, k)
	}
	slices.Sort(rel)
	rel = slices.Compact(rel)
	for range r.IntN(4) {
		var a string
		switch r.IntN(3) {
		case 0:
			a = fmt.Sprintf("s3://bucket/repo/data/g%02d/f%d", r.IntN(8), r.IntN(5))
		case 1:
			a = fmt.Sprintf("s3://bucket/repo//data/g%02d/c%d", r.IntN(8), r.IntN(5))
		default:
			a = fmt.Sprintf("gs://elsewhere/imports/%d.parquet", r.IntN(5))
		}
		rel = slices.Insert(rel, r.IntN(len(rel)+1), a)
	}
	return rel
}

func testCycle(t *testing.T) *cycle {
	n, err := nsaddr.New("s3://bucket/repo", DefaultDataPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return &cycle{ns: n}
}

// TestPartKeysModel reads random parts, around the bound of a part's
// buffer, through partKeys: each yields exactly its addresses' keys as
// CommittedAddresses' path spells them, sorted and distinct, and is opened
// once when its relative addresses fit the bound, twice when not; the
// foreign addresses are counted once a part whatever the reads; the
// buffers' bytes are all given back.
func TestPartKeysModel(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	ctx := context.Background()
	// The steps that read a part once and merged keys not spelled by its
	// relative addresses (cleaned or full ones) below its last one, and
	// those that read it twice.
	var mergedOnce, twice int
	for step := range 3000 {
		addrs := randomPart(r, r.IntN(40))
		size := frontCodedSize(addrs)
		limit := max(size+int64(r.IntN(3))-1, 0)
		if r.IntN(4) == 0 {
			limit = r.Int64N(2*size + 2)
		}
		var want []string
		model := testCycle(t)
		for k, err := range model.relativeAddresses(ctx, "model", addresses(addrs)) {
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, k)
		}
		slices.Sort(want)
		want = slices.Compact(want)

		LimitPartBuffers(t, limit, 1<<30)
		c := testCycle(t)
		tp := &testParts{parts: map[string][]string{"p": addrs}, opens: map[string]int{}}
		hp := &sweep.Parts{Open: tp.open}
		pool := newPartBuffers(0)
		var got []string
		for k, err := range c.partKeys(ctx, hp, "p", pool) {
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			got = append(got, k)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: part %q yields\n %q\nwant\n %q", step, addrs, got, want)
		}
		wantOpens := 1
		if size > limit {
			wantOpens = 2
			twice++
		} else if len(addrs) > 0 && slices.ContainsFunc(want, func(k string) bool {
			return !slices.Contains(addrs, k) && k < addrs[len(addrs)-1]
		}) {
			mergedOnce++
		}
		if tp.opens["p"] != wantOpens {
			t.Fatalf("step %d: %d bytes front-coded, bound %d: %d opens, want %d", step, size, limit, tp.opens["p"], wantOpens)
		}
		if c.foreign.count != model.foreign.count {
			t.Fatalf("step %d: %d foreign addresses counted, want %d", step, c.foreign.count, model.foreign.count)
		}
		if free := pool.free.Load(); free != 1<<30 {
			t.Fatalf("step %d: %d bytes of the buffers not given back", step, 1<<30-free)
		}
	}
	if mergedOnce < 100 || twice < 100 {
		t.Errorf("%d parts read once with keys merged in, %d read twice: the generator misses cases", mergedOnce, twice)
	}
	t.Logf("%d parts read once with keys merged in, %d read twice", mergedOnce, twice)
}

// TestPartKeysFallbackChecks: a part read twice whose second read lacks an
// irregular address fails with ErrInvalidInput; one read once cannot be
// compared, and yields its one read's keys; an error of the host's read
// ends either; a part stopped early gives its buffer back.
func TestPartKeysFallbackChecks(t *testing.T) {
	ctx := context.Background()
	addrs := []string{"s3://bucket/repo/data/z/full", "data/a//2", "data/a/1", "data/b/3"}
	read := func(limit int64, tp *testParts, stopAfter int) ([]string, *partBuffers, error) {
		LimitPartBuffers(t, limit, 1<<20)
		pool := newPartBuffers(0)
		var got []string
		for k, err := range testCycle(t).partKeys(ctx, &sweep.Parts{Open: tp.open}, "p", pool) {
			if err != nil {
				return got, pool, err
			}
			if got = append(got, k); len(got) == stopAfter {
				break
			}
		}
		return got, pool, nil
	}
	newParts := func() *testParts {
		return &testParts{parts: map[string][]string{"p": addrs}, opens: map[string]int{}, drop: map[string]bool{"p": true}, fail: map[string]int{}}
	}
	if _, _, err := read(0, newParts(), -1); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "differ") {
		t.Errorf("two reads that differ: error %v", err)
	}
	got, _, err := read(1<<10, newParts(), -1)
	if want := []string{"data/a//2", "data/a/1", "data/a/2", "data/b/3", "data/z/full"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("one read: %q, %v; want %q", got, err, want)
	}
	for _, limit := range []int64{0, 1 << 10} {
		tp := newParts()
		tp.fail["p"] = 3
		if _, pool, err := read(limit, tp, -1); err == nil || !strings.Contains(err.Error(), "unreadable") || pool.free.Load() != 1<<20 {
			t.Errorf("bound %d: a read that fails: error %v, %d bytes free", limit, err, pool.free.Load())
		}
		if got, pool, err := read(limit, newParts(), 2); err != nil || len(got) != 2 || pool.free.Load() != 1<<20 {
			t.Errorf("bound %d: stopped after 2 keys: %q, %v, %d bytes free", limit, got, err, pool.free.Load())
		}
	}
}

// TestPartBuffersShared: parts held open at once share the cycle's bound;
// those that do not fit in what the others hold are read twice, and yield
// the same keys.
func TestPartBuffersShared(t *testing.T) {
	ctx := context.Background()
	tp := &testParts{parts: map[string][]string{}, opens: map[string]int{}}
	r := rand.New(rand.NewPCG(28, 2))
	var ids []string
	var size int64
	for i := range 6 {
		id := fmt.Sprintf("p%d", i)
		tp.parts[id] = randomPart(r, 30)
		ids = append(ids, id)
		size = max(size, frontCodedSize(tp.parts[id]))
	}
	// Room for three parts at once, each held until its end.
	LimitPartBuffers(t, size, 3*size)
	c := testCycle(t)
	pool := newPartBuffers(0)
	var stops []func()
	for _, id := range ids {
		next, stop := iter.Pull2(c.partKeys(ctx, &sweep.Parts{Open: tp.open}, id, pool))
		stops = append(stops, stop)
		if _, err, _ := next(); err != nil {
			t.Fatal(err)
		}
	}
	once := 0
	for _, id := range ids {
		if tp.opens[id] == 1 {
			once++
		}
	}
	if once != 3 {
		t.Errorf("%d of %d parts held at once read once, want 3 (room for 3): opens %v", once, len(ids), tp.opens)
	}
	for _, stop := range stops {
		stop()
	}
	if pool.free.Load() != 3*size {
		t.Errorf("%d bytes free after every part stopped, want %d", pool.free.Load(), 3*size)
	}
}

// FuzzPartKeys reads a part of any addresses (lines of the input) once
// into a buffer and twice without one: both yield the same keys, or both
// fail, whatever the addresses (out of order, repeated, empty, full ones
// of any shape); when the relative ones strictly ascend, the keys are the
// addresses' keys sorted and distinct.
func FuzzPartKeys(f *testing.F) {
	f.Add("data/a\ndata/b\n")
	f.Add("s3://bucket/repo/data/z\n./data/a\ndata//b\ndata/b\n")
	f.Add("data/b\ndata/a\n")
	f.Add("\n\ndata/a\ngs://elsewhere/data/x\ns3://bucket/repo//data/a\n")
	f.Add("s3://bucket/other/x\n/data/.\ndata/./b/../c\n")
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, in string) {
		addrs := strings.Split(in, "\n")
		read := func(limit int64) ([]string, int, error) {
			LimitPartBuffers(t, limit, 1<<30)
			tp := &testParts{parts: map[string][]string{"p": addrs}, opens: map[string]int{}}
			var got []string
			for k, err := range testCycle(t).partKeys(ctx, &sweep.Parts{Open: tp.open}, "p", newPartBuffers(0)) {
				if err != nil {
					return got, tp.opens["p"], err
				}
				got = append(got, k)
			}
			return got, tp.opens["p"], nil
		}
		once, opens, errOnce := read(1 << 30)
		twice, _, errTwice := read(0)
		if (errOnce == nil) != (errTwice == nil) || !slices.Equal(once, twice) {
			t.Fatalf("read once: %q, %v; twice: %q, %v", once, errOnce, twice, errTwice)
		}
		if errOnce != nil {
			return
		}
		if opens != 1 {
			t.Fatalf("%d opens under a bound of 1 GiB", opens)
		}
		var rel []string
		for _, a := range addrs {
			if !nsaddr.IsFull(a) {
				rel = append(rel, a)
			}
		}
		if !slices.IsSorted(rel) || len(slices.Compact(slices.Clone(rel))) != len(rel) {
			return
		}
		var want []string
		for k, err := range testCycle(t).relativeAddresses(ctx, "model", addresses(addrs)) {
			if err != nil {
				t.Fatalf("the model fails where the part did not: %v", err)
			}
			want = append(want, k)
		}
		slices.Sort(want)
		if want = slices.Compact(want); !slices.Equal(once, want) {
			t.Fatalf("keys %q, want %q", once, want)
		}
	})
}
