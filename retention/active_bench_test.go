package retention

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"iter"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// synthRepo is a CommitSource for benchmarks that makes its commits as List
// yields them, as a KV scan would, so the benchmark measures ActiveCommits
// and not a fixture held in memory (IDs stay valid after List moves on). IDs are hex SHA-256-sized, like lakeFS's.
//
// The history spans a year. A third of the commits land on main, the rest on
// feature branches that fork from main's HEAD of the day; a tenth of main's
// commits merge a feature branch (version 0 merges in the first quarter of
// the history). One branch in twenty was deleted, leaving dangling chains.
type synthRepo struct {
	n, branches int
	now         time.Time
	heads       []int // per branch, its last commit, or -1
}

func newSynthRepo(n, branches int, now time.Time) *synthRepo {
	s := &synthRepo{n: n, branches: branches, now: now}
	s.heads = make([]int, branches)
	for i := range s.heads {
		s.heads[i] = -1
	}
	for k := range n {
		s.heads[s.branchOf(k)] = k
	}
	return s
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func (s *synthRepo) branchOf(k int) int {
	r := splitmix(uint64(k))
	if k == 0 || r%3 == 0 {
		return 0
	}
	return 1 + int(r>>8)%(s.branches-1)
}

func (s *synthRepo) deleted(branch int) bool { return branch != 0 && branch%20 == 7 }

// hexID returns the ID of commit k, or of its metarange for salt 1.
func hexID(k int, salt uint64) string { return string(appendHexID(nil, k, salt)) }

func appendHexID(dst []byte, k int, salt uint64) []byte {
	var raw [32]byte
	for i := range 4 {
		binary.LittleEndian.PutUint64(raw[8*i:], splitmix(uint64(k)<<3|salt<<2|uint64(i)))
	}
	return hex.AppendEncode(dst, raw[:])
}

// synthBatch is how many commits List makes at a time: like a KV scan
// decoding a page, it allocates per batch, not per commit.
const synthBatch = 4096

// synthCommit is the shape of one commit: its main parent and the branch
// merged into it (-1 for none).
type synthCommit struct {
	k, parent, merged int
	date              time.Time
}

func (s *synthRepo) List(ctx context.Context) iter.Seq2[Commit, error] {
	return func(yield func(Commit, error) bool) {
		last := make([]int, s.branches)
		for i := range last {
			last[i] = -1
		}
		step := 365 * 24 * time.Hour / time.Duration(s.n)
		plan := make([]synthCommit, 0, synthBatch)
		const idLen = 64
		for first := 0; first < s.n; first += synthBatch {
			plan = plan[:0]
			for k := first; k < min(first+synthBatch, s.n); k++ {
				r := splitmix(uint64(k) ^ 0x5bd1e995)
				b := s.branchOf(k)
				c := synthCommit{k: k, parent: last[b], merged: -1,
					date: s.now.Add(-time.Duration(s.n-k)*step + time.Duration(r%uint64(time.Hour)))}
				if c.parent < 0 {
					c.parent = last[0] // a new branch forks from main
				}
				if other := last[1+int(r>>16)%(s.branches-1)]; b == 0 && r%10 == 0 && c.parent >= 0 && other >= 0 {
					c.merged = other
				}
				last[b] = k
				plan = append(plan, c)
			}
			// Per commit: its ID, its metarange ID, its parents' IDs.
			var text strings.Builder
			text.Grow(len(plan) * 4 * idLen)
			var buf []byte
			for _, c := range plan {
				buf = appendHexID(buf[:0], c.k, 0)
				buf = appendHexID(buf, c.k, 1)
				buf = appendHexID(buf, max(c.parent, 0), 0)
				buf = appendHexID(buf, max(c.merged, 0), 0)
				text.Write(buf)
			}
			all := text.String()
			parents := make([]string, 2*len(plan))
			for i, c := range plan {
				ids := all[i*4*idLen:]
				commit := Commit{ID: ids[:idLen], MetaRangeID: ids[idLen : 2*idLen], CreationDate: c.date, Version: 1}
				switch {
				case c.parent < 0:
				case c.merged < 0:
					commit.Parents = append(parents[2*i:2*i:2*i+2], ids[2*idLen:3*idLen])
				case c.k < s.n/4: // a version 0 merge lists its main parent last
					commit.Parents = append(parents[2*i:2*i:2*i+2], ids[3*idLen:4*idLen], ids[2*idLen:3*idLen])
					commit.Version = 0
				default:
					commit.Parents = append(parents[2*i:2*i:2*i+2], ids[2*idLen:3*idLen], ids[3*idLen:4*idLen])
				}
				if !yield(commit, nil) {
					return
				}
			}
		}
	}
}

func (s *synthRepo) Get(ctx context.Context, id string) (Commit, error) {
	return Commit{}, fmt.Errorf("synthRepo lists every commit; Get(%s)", id)
}

func (s *synthRepo) branchSeq() iter.Seq2[Branch, error] {
	return func(yield func(Branch, error) bool) {
		for b, head := range s.heads {
			if head < 0 || s.deleted(b) {
				continue
			}
			if !yield(Branch{ID: fmt.Sprintf("branch-%d", b), CommitID: hexID(head, 0)}, nil) {
				return
			}
		}
	}
}

func (s *synthRepo) rules() *Rules {
	r := &Rules{DefaultRetentionDays: 21, BranchRetentionDays: map[string]int32{"branch-0": 90}}
	for b := 1; b < s.branches; b++ {
		switch b % 10 {
		case 1:
			r.BranchRetentionDays[fmt.Sprintf("branch-%d", b)] = 7
		case 2:
			r.BranchRetentionDays[fmt.Sprintf("branch-%d", b)] = 0
		case 3:
			r.BranchRetentionDays[fmt.Sprintf("branch-%d", b)] = 60
		}
	}
	return r
}

// peakHeap samples the heap's object bytes until stop is called and returns
// the largest value seen.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

func BenchmarkActiveCommits(b *testing.B) {
	for _, size := range []struct{ commits, branches int }{{30_000, 1_000}, {1_000_000, 10_000}} {
		b.Run(fmt.Sprintf("commits=%d/branches=%d", size.commits, size.branches), func(b *testing.B) {
			now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
			repo := newSynthRepo(size.commits, size.branches, now)
			rules := repo.rules()
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := peakHeap()
			b.ReportAllocs()
			cpu0 := cpuTime()
			alloc0 := before.TotalAlloc
			active, runs := 0, 0
			for b.Loop() {
				got, err := ActiveCommits(b.Context(), repo.branchSeq(), repo, rules, now)
				if err != nil {
					b.Fatal(err)
				}
				active, runs = len(got), runs+1
			}
			cpu := cpuTime() - cpu0
			peak := stop()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			commits := float64(runs * size.commits)
			b.ReportMetric(float64(after.TotalAlloc-alloc0)/commits, "B/commit")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/commits, "ns/commit")
			b.ReportMetric(float64(cpu)/commits, "cpu-ns/commit")
			b.ReportMetric(float64(peak-min(peak, before.HeapAlloc))/float64(size.commits), "peak-B/commit")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(active)/float64(size.commits), "active/commit")
		})
	}
}

// BenchmarkSynthRepoList is the cost of the benchmark's commit source alone,
// to subtract from BenchmarkActiveCommits.
func BenchmarkSynthRepoList(b *testing.B) {
	for _, size := range []struct{ commits, branches int }{{30_000, 1_000}, {1_000_000, 10_000}} {
		b.Run(fmt.Sprintf("commits=%d/branches=%d", size.commits, size.branches), func(b *testing.B) {
			repo := newSynthRepo(size.commits, size.branches, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
			b.ReportAllocs()
			cpu0 := cpuTime()
			runs := 0
			for b.Loop() {
				for _, err := range repo.List(b.Context()) {
					if err != nil {
						b.Fatal(err)
					}
				}
				for _, err := range repo.branchSeq() {
					if err != nil {
						b.Fatal(err)
					}
				}
				runs++
			}
			cpu := cpuTime() - cpu0
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(runs*size.commits), "ns/commit")
			b.ReportMetric(float64(cpu)/float64(runs*size.commits), "cpu-ns/commit")
		})
	}
}
