package pathprovider_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakegc/lakegc/pathprovider"
)

// fakeClock is a clock tests move by hand; safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

var epoch = time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)

func mustNew(t testing.TB, opts ...pathprovider.Option) *pathprovider.Partitioned {
	t.Helper()
	p, err := pathprovider.New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func mustParse(t testing.TB, address string) pathprovider.Address {
	t.Helper()
	a, err := pathprovider.Parse(address)
	if err != nil {
		t.Fatalf("Parse(%q): %v", address, err)
	}
	return a
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  pathprovider.Option
	}{
		{"size negative", pathprovider.WithPartitionSize(-1)},
		{"size beyond the xid counter", pathprovider.WithPartitionSize(1<<24 + 1)},
		{"interval negative", pathprovider.WithInterval(-time.Second)},
		{"prefix leading slash", pathprovider.WithPrefix("/data")},
		{"prefix trailing slash", pathprovider.WithPrefix("data/")},
		{"nil option", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := pathprovider.New(tc.opt)
			if err == nil || p != nil {
				t.Fatalf("New = %v, %v; want an error", p, err)
			}
		})
	}
}

func TestNewAcceptsBoundaryOptions(t *testing.T) {
	p := mustNew(t,
		pathprovider.WithPartitionSize(1<<24),
		pathprovider.WithInterval(time.Nanosecond),
		pathprovider.WithPrefix("a/b/c"),
	)
	if got := p.CommonPrefix(); got != "a/b/c" {
		t.Fatalf("CommonPrefix = %q", got)
	}
	if got := mustNew(t).CommonPrefix(); got != pathprovider.DefaultPrefix {
		t.Fatalf("default CommonPrefix = %q", got)
	}
	zero := mustNew(t, pathprovider.WithPartitionSize(0), pathprovider.WithInterval(0),
		pathprovider.WithPrefix(""), pathprovider.WithClock(nil))
	if got := zero.CommonPrefix(); got != pathprovider.DefaultPrefix {
		t.Fatalf("CommonPrefix with WithPrefix(\"\") = %q", got)
	}
	_, err := pathprovider.New(pathprovider.WithInterval(-time.Second))
	if want := "pathprovider: invalid input: negative interval -1s"; err == nil || err.Error() != want || !errors.Is(err, pathprovider.ErrInvalidInput) {
		t.Fatalf("New(WithInterval(-1s)) = %v; want %q", err, want)
	}
}

func TestRolloverBySize(t *testing.T) {
	clock := newFakeClock(epoch)
	p := mustNew(t, pathprovider.WithPartitionSize(3), pathprovider.WithClock(clock.Now))
	var slicesSeen []string
	for i := range 10 {
		a := mustParse(t, p.NewPath())
		if i%3 == 0 {
			slicesSeen = append(slicesSeen, a.Slice)
		} else if a.Slice != slicesSeen[len(slicesSeen)-1] {
			t.Fatalf("path %d in slice %s, want %s", i, a.Slice, slicesSeen[len(slicesSeen)-1])
		}
	}
	if len(slicesSeen) != 4 || len(slices.Compact(slices.Sorted(slices.Values(slicesSeen)))) != 4 {
		t.Fatalf("slices %v: want 4 distinct", slicesSeen)
	}
}

func TestRolloverByInterval(t *testing.T) {
	clock := newFakeClock(epoch)
	p := mustNew(t, pathprovider.WithInterval(time.Minute), pathprovider.WithClock(clock.Now))

	first := mustParse(t, p.NewPath())
	clock.Advance(time.Minute - time.Nanosecond)
	if a := mustParse(t, p.NewPath()); a.Slice != first.Slice {
		t.Fatalf("just inside the interval: new slice %s", a.Slice)
	}
	clock.Advance(time.Nanosecond)
	second := mustParse(t, p.NewPath())
	if second.Slice == first.Slice {
		t.Fatal("a full interval passed but the slice did not change")
	}
	if !second.SliceTime.Equal(epoch.Add(time.Minute)) || !first.SliceTime.Equal(epoch) {
		t.Fatalf("slice times %v, %v", first.SliceTime, second.SliceTime)
	}
	if second.Slice >= first.Slice {
		t.Fatalf("newer slice %s does not sort before %s", second.Slice, first.Slice)
	}
	// A clock that steps back does not start a slice.
	clock.Advance(-time.Hour)
	if a := mustParse(t, p.NewPath()); a.Slice != second.Slice {
		t.Fatalf("clock stepped back: new slice %s", a.Slice)
	}
}

// TestNewerSlicesSortFirst walks a clock forward in random steps over decades
// and checks the model: a slice started at a later second sorts before every
// earlier one.
func TestNewerSlicesSortFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	clock := newFakeClock(time.Unix(0, 0))
	p := mustNew(t, pathprovider.WithInterval(time.Second), pathprovider.WithClock(clock.Now))
	reversal := time.Date(2094, 7, 27, 5, 24, 16, 0, time.UTC)
	prev := mustParse(t, p.NewPath())
	for range 5000 {
		clock.Advance(time.Second + time.Duration(rng.Int64N(int64(20*24*time.Hour))))
		if !clock.Now().Before(reversal) {
			break
		}
		a := mustParse(t, p.NewPath())
		if !a.SliceTime.After(prev.SliceTime) {
			t.Fatalf("slice time %v not after %v", a.SliceTime, prev.SliceTime)
		}
		if a.Slice >= prev.Slice {
			t.Fatalf("slice %s (%v) sorts after %s (%v)", a.Slice, a.SliceTime, prev.Slice, prev.SliceTime)
		}
		prev = a
	}
}

// TestConcurrentPathsUnique runs 8 goroutines on one provider with a clock
// that others move, and checks every path is distinct and no slice holds more
// than its size. Run it with -race.
func TestConcurrentPathsUnique(t *testing.T) {
	const goroutines, size = 8, 97
	perG := 5000
	if testing.Short() {
		perG = 1000
	}
	clock := newFakeClock(epoch)
	p := mustNew(t,
		pathprovider.WithPartitionSize(size),
		pathprovider.WithInterval(10*time.Millisecond),
		pathprovider.WithClock(clock.Now),
	)
	paths := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]string, perG)
			for i := range out {
				if i%50 == 0 {
					clock.Advance(time.Millisecond)
				}
				out[i] = p.NewPath()
			}
			paths[g] = out
		}()
	}
	wg.Wait()

	seen := make(map[string]bool, goroutines*perG)
	perSlice := map[string]int{}
	for _, out := range paths {
		for _, path := range out {
			if seen[path] {
				t.Fatalf("path %s handed out twice", path)
			}
			seen[path] = true
			perSlice[mustParse(t, path).Slice]++
		}
	}
	for s, n := range perSlice {
		if n > size {
			t.Fatalf("slice %s holds %d paths, size is %d", s, n, size)
		}
	}
	if len(perSlice) < goroutines*perG/size {
		t.Fatalf("%d slices for %d paths of size %d", len(perSlice), goroutines*perG, size)
	}
}

// TestSliceOrderUnderConcurrency checks that, seen in the order paths were
// handed out to one goroutine, slice times never go backwards, even when
// other goroutines read an older clock and start the next slice. With size 1
// every call starts a slice, so rollovers race each other.
func TestSliceOrderUnderConcurrency(t *testing.T) {
	for _, tc := range []struct {
		size      int
		advancers int // goroutines that move the clock
		every     int // calls between moves
	}{
		{size: 5, advancers: 1, every: 10},
		{size: 1, advancers: 4, every: 3},
	} {
		t.Run(fmt.Sprintf("size %d", tc.size), func(t *testing.T) {
			clock := newFakeClock(epoch)
			p := mustNew(t, pathprovider.WithPartitionSize(tc.size), pathprovider.WithClock(clock.Now))
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var last time.Time
					for i := range 2000 {
						if g < tc.advancers && i%tc.every == 0 {
							clock.Advance(time.Second)
						}
						a, err := pathprovider.Parse(p.NewPath())
						if err != nil {
							t.Error(err)
							return
						}
						if a.SliceTime.Before(last) {
							t.Errorf("slice time went back from %v to %v", last, a.SliceTime)
							return
						}
						last = a.SliceTime
					}
				}()
			}
			wg.Wait()
		})
	}
}

// TestLateReaderDoesNotStartAnOlderSlice replays one interleaving
// deterministically: A reads the clock, B reads a later time and starts a
// slice, then A finds that slice full. A's path is handed out after B's, so
// its slice must not be older.
func TestLateReaderDoesNotStartAnOlderSlice(t *testing.T) {
	var (
		mu      sync.Mutex
		calls   int
		aRead   = make(chan struct{})
		release = make(chan struct{})
	)
	clock := func() time.Time {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 { // A: reads 05:00, then is descheduled
			close(aRead)
			<-release
			return epoch
		}
		return epoch.Add(time.Hour) // B
	}
	p := mustNew(t, pathprovider.WithPartitionSize(1), pathprovider.WithClock(clock))

	aPath := make(chan string)
	go func() { aPath <- p.NewPath() }()
	<-aRead
	b := mustParse(t, p.NewPath())
	close(release)
	a := mustParse(t, <-aPath)
	if a.SliceTime.Before(b.SliceTime) {
		t.Fatalf("slice started after %v has time %v", b.SliceTime, a.SliceTime)
	}
	if a.Slice == b.Slice {
		t.Fatal("a slice of size 1 handed out two paths")
	}
	if !a.ObjectTime.Equal(epoch) {
		t.Fatalf("object time %v, want the time A read %v", a.ObjectTime, epoch)
	}
}

func TestNewPathRoundTrip(t *testing.T) {
	clock := newFakeClock(epoch.Add(1234567 * time.Millisecond))
	for _, prefix := range []string{"data", "repo1/data", "s3:/x"} {
		p := mustNew(t, pathprovider.WithPrefix(prefix), pathprovider.WithClock(clock.Now))
		for range 3 {
			path := p.NewPath()
			a := mustParse(t, path)
			want := clock.Now().Truncate(time.Second)
			if a.Prefix != prefix || a.Prefix+"/"+a.Slice+"/"+a.Name != path {
				t.Fatalf("Parse(%q) = %+v", path, a)
			}
			if !a.ObjectTime.Equal(want) || !a.SliceTime.Equal(want) {
				t.Fatalf("times of %q: slice %v object %v, want %v", path, a.SliceTime, a.ObjectTime, want)
			}
			got, err := p.ResolvePathTime(path)
			if err != nil || !got.Equal(want) {
				t.Fatalf("ResolvePathTime(%q) = %v, %v", path, got, err)
			}
			clock.Advance(90 * time.Minute)
		}
	}
}

func TestResolvePathTime(t *testing.T) {
	p := mustNew(t)
	const name = "c2r2is7s9gbrjaemnik0" // 2021-06-01T12:34:56Z, see testdata
	want := time.Date(2021, 6, 1, 12, 34, 56, 0, time.UTC)
	for _, address := range []string{
		name,
		"data/" + name,
		"data/h6ce3g624eave3ils1cg/" + name,
		"s3://bucket/repo/any/thing/" + name,
	} {
		got, err := p.ResolvePathTime(address)
		if err != nil || !got.Equal(want) {
			t.Errorf("ResolvePathTime(%q) = %v, %v; want %v", address, got, err, want)
		}
	}
	for _, address := range []string{"", "data/", "data/" + name + "/", "data/" + strings.ToUpper(name), "data/" + name[:19], "data/" + name + "0", "data/c2r2is7s9gbrjaemnik1"} {
		if _, err := p.ResolvePathTime(address); !errors.Is(err, pathprovider.ErrInvalidAddress) {
			t.Errorf("ResolvePathTime(%q) err = %v; want ErrInvalidAddress", address, err)
		}
	}
}
