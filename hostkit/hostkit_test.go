package hostkit_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakegc/lakegc/hostkit"
	"github.com/lakegc/lakegc/retention"
	retentiontest "github.com/lakegc/lakegc/retention/sourcetest"
	"github.com/lakegc/lakegc/uncommitted"
	uncommittedtest "github.com/lakegc/lakegc/uncommitted/sourcetest"
)

// mapStore is a host's store of maps, adapted with hostkit alone.
type mapStore struct {
	mu      sync.Mutex
	staging map[string]map[string]uncommitted.Entry
	heads   map[string]string
	commits map[string]retention.Commit
}

func newMapStore() *mapStore {
	return &mapStore{staging: map[string]map[string]uncommitted.Entry{}, heads: map[string]string{},
		commits: map[string]retention.Commit{}}
}

func (s *mapStore) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hostkit.Keys(ctx, s.staging, from)
}

func (s *mapStore) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	s.mu.Lock()
	defer s.mu.Unlock()
	staged, ok := s.staging[branch]
	if !ok {
		return hostkit.Fail[uncommitted.Entry](uncommitted.ErrBranchNotFound)
	}
	return hostkit.Map(ctx, staged, from, func(_ string, e uncommitted.Entry) uncommitted.Entry { return e })
}

func (s *mapStore) Heads(ctx context.Context) iter.Seq2[retention.Branch, error] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hostkit.Map(ctx, s.heads, "", func(id, head string) retention.Branch { return retention.Branch{ID: id, CommitID: head} })
}

func (s *mapStore) List(ctx context.Context) iter.Seq2[retention.Commit, error] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hostkit.Values(ctx, s.commits, func(_ string, c retention.Commit) retention.Commit { return c })
}

func (s *mapStore) Get(ctx context.Context, id string) (retention.Commit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return hostkit.Get(ctx, s.commits, id)
}

func (s *mapStore) stage(_ context.Context, branch string, e uncommitted.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staging[branch][e.Key] = e
	return nil
}

func (s *mapStore) unstage(_ context.Context, branch, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.staging[branch], key)
	return nil
}

func (s *mapStore) deleteBranch(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.staging, id)
	return nil
}

func (s *mapStore) add(_ context.Context, f retentiontest.Fixture) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range f.Commits {
		if _, ok := s.commits[c.ID]; !ok {
			s.commits[c.ID] = c
		}
	}
	for _, b := range f.Branches {
		s.heads[b.ID] = b.Head
	}
	return nil
}

func loadStaging(s *mapStore, f uncommittedtest.Fixture) {
	for _, b := range f.Branches {
		s.staging[b.ID] = map[string]uncommitted.Entry{}
		for _, e := range b.Entries {
			s.staging[b.ID][e.Key] = e
		}
	}
}

// A store of maps adapted with Keys, Map, Values, Get and Fail passes both
// suites.
func TestMapStorePassesSuites(t *testing.T) {
	uncommittedtest.Run(t, func(t *testing.T, f uncommittedtest.Fixture) uncommittedtest.Harness {
		s := newMapStore()
		loadStaging(s, f)
		return uncommittedtest.Harness{Source: s, DeleteBranch: s.deleteBranch, Stage: s.stage, Unstage: s.unstage}
	})
	retentiontest.Run(t, func(t *testing.T, f retentiontest.Fixture) retentiontest.Harness {
		s := newMapStore()
		if err := s.add(context.Background(), f); err != nil {
			t.Fatal(err)
		}
		return retentiontest.Harness{Source: s, Add: s.add}
	})
}

// pagedStore reads its staging area a few keys a page, as a host reads a
// table with LIMIT; its reads fail on demand.
type pagedStore struct {
	*mapStore
	fail error
}

const pageSize = 3

func (s *pagedStore) page(keys func() []string) func(context.Context, string) ([]string, error) {
	return func(_ context.Context, from string) ([]string, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fail != nil {
			return nil, s.fail
		}
		all := slices.Sorted(slices.Values(keys()))
		all = slices.DeleteFunc(all, func(k string) bool { return k < from })
		return all[:min(pageSize, len(all))], nil
	}
}

func (s *pagedStore) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
	keys := func() []string { return slices.Collect(maps.Keys(s.staging)) }
	return hostkit.Pages(ctx, from, func(k string) string { return k }, s.page(keys))
}

func (s *pagedStore) Uncommitted(ctx context.Context, branch, from string) iter.Seq2[uncommitted.Entry, error] {
	s.mu.Lock()
	_, ok := s.staging[branch]
	s.mu.Unlock()
	if !ok {
		return hostkit.Fail[uncommitted.Entry](uncommitted.ErrBranchNotFound)
	}
	return hostkit.Pages(ctx, from, func(e uncommitted.Entry) string { return e.Key },
		func(ctx context.Context, from string) ([]uncommitted.Entry, error) {
			keys, err := s.page(func() []string { return slices.Collect(maps.Keys(s.staging[branch])) })(ctx, from)
			s.mu.Lock()
			defer s.mu.Unlock()
			var out []uncommitted.Entry
			for _, k := range keys {
				if e, ok := s.staging[branch][k]; ok {
					out = append(out, e)
				}
			}
			return out, err
		})
}

func (s *pagedStore) failReads(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = err
}

// A store read a page at a time with Pages passes the staging suite,
// writes during a scan and failures midway included.
func TestPagedStorePassesSuite(t *testing.T) {
	uncommittedtest.Run(t, func(t *testing.T, f uncommittedtest.Fixture) uncommittedtest.Harness {
		s := &pagedStore{mapStore: newMapStore()}
		loadStaging(s.mapStore, f)
		return uncommittedtest.Harness{Source: s, DeleteBranch: s.deleteBranch, Stage: s.stage,
			Unstage: s.unstage, FailReads: s.failReads}
	})
}

// rows is a cursor over a table's rows, as *sql.Rows is.
type rows struct {
	data   [][2]string
	i      int
	err    error
	closed *bool
}

func (r *rows) Next() bool {
	if r.err != nil || r.i >= len(r.data) {
		return false
	}
	r.i++
	return true
}

func (r *rows) Scan(dest ...any) error {
	*dest[0].(*string), *dest[1].(*string) = r.data[r.i-1][0], r.data[r.i-1][1]
	return nil
}

func (r *rows) Err() error { return r.err }

func (r *rows) Close() error {
	*r.closed = true
	return nil
}

type kv struct{ k, v string }

func scanKV(r hostkit.Rows) (kv, error) {
	var x kv
	return x, r.Scan(&x.k, &x.v)
}

// Query yields every row, closes the rows when the iteration ends or
// stops, and ends with the rows' error, the query's, or ctx's.
func TestQuery(t *testing.T) {
	ctx := context.Background()
	data := [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		queryErr error
		rowsErr  error
		stopAt   int
		cancel   bool
		want     int
		wantErr  error
	}{
		{name: "all", want: 3},
		{name: "break", stopAt: 2, want: 2},
		{name: "rows error", rowsErr: boom, want: 0, wantErr: boom},
		{name: "query error", queryErr: boom, want: 0, wantErr: boom},
		{name: "cancelled", cancel: true, want: 0, wantErr: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed := false
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			if tc.cancel {
				cancel()
			}
			q := func(context.Context) (hostkit.Rows, error) {
				if tc.queryErr != nil {
					return nil, tc.queryErr
				}
				return &rows{data: data, err: tc.rowsErr, closed: &closed}, nil
			}
			n := 0
			var last error
			for v, err := range hostkit.Query(ctx, q, scanKV) {
				if err != nil {
					last = err
					continue
				}
				if n++; v.k != data[n-1][0] {
					t.Errorf("row %d: %v", n, v)
				}
				if n == tc.stopAt {
					break
				}
			}
			if n != tc.want || !errors.Is(last, tc.wantErr) || (last == nil) != (tc.wantErr == nil) {
				t.Errorf("%d rows, then %v; want %d, then %v", n, last, tc.want, tc.wantErr)
			}
			if tc.queryErr == nil && !tc.cancel && !closed {
				t.Error("rows left open")
			}
		})
	}
}

// Ordered ends an iteration whose keys are not ascending bytes with
// ErrOutOfOrder: a database collation that puts "a_b" before "a-b".
func TestOrdered(t *testing.T) {
	keys := func(ks ...string) iter.Seq2[string, error] { return hostkit.Slice(context.Background(), ks, nil) }
	id := func(k string) string { return k }
	for _, tc := range []struct {
		keys []string
		from string
		ok   bool
	}{
		{[]string{"a", "a-b", "a_b", "aa"}, "", true},
		{[]string{"a-b", "a_b"}, "a-b", true},
		{[]string{"a", "a_b", "a-b"}, "", false}, // a collation skipping punctuation
		{[]string{"A", "a", "B"}, "", false},     // case folded
		{[]string{"a", "a"}, "", false},          // repeated
		{[]string{"a", "b"}, "b", false},         // below from
	} {
		got, err := drain(hostkit.Ordered(keys(tc.keys...), id, tc.from))
		if tc.ok != (err == nil) || (!tc.ok && !errors.Is(err, hostkit.ErrOutOfOrder)) {
			t.Errorf("Ordered(%q from %q) = %q, %v", tc.keys, tc.from, got, err)
		}
	}
}

// Keys, Map and Sorted agree with a model, sorting by bytes, on random
// maps and resumption points.
func TestSortedModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "A", "-", "_", "/", "é", "\U00010000", "\ue000", "\x00"}
	word := func() string {
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	ctx := context.Background()
	for range 300 {
		m := map[string]int{}
		for i := range rng.IntN(30) {
			m[word()] = i
		}
		from := word()
		var want []string
		for k := range m {
			if k >= from {
				want = append(want, k)
			}
		}
		slices.Sort(want)
		if got, err := drain(hostkit.Keys(ctx, m, from)); err != nil || !slices.Equal(got, want) {
			t.Fatalf("Keys(%q) = %q, %v; want %q", from, got, err, want)
		}
		pairs, err := drain(hostkit.Map(ctx, m, from, func(k string, v int) kv { return kv{k, fmt.Sprint(v)} }))
		if err != nil || len(pairs) != len(want) {
			t.Fatalf("Map(%q) = %v, %v", from, pairs, err)
		}
		for i, p := range pairs {
			if p.k != want[i] || p.v != fmt.Sprint(m[p.k]) {
				t.Fatalf("Map(%q)[%d] = %v, want %s=%d", from, i, p, want[i], m[want[i]])
			}
		}
		items := slices.Collect(maps.Keys(m))
		if got, err := drain(hostkit.Sorted(ctx, items, func(k string) string { return k }, from)); err != nil || !slices.Equal(got, want) {
			t.Fatalf("Sorted(%q) = %q, %v; want %q", from, got, err, want)
		}
	}
}

// Concat yields each item's sequence in turn, stops at the first error,
// and ends with ctx's error.
func TestConcat(t *testing.T) {
	ctx := context.Background()
	files := map[string][]string{"c1": {"x", "y"}, "c2": {"z"}}
	each := func(id string) (iter.Seq[string], error) {
		f, err := hostkit.Get(ctx, files, id)
		return slices.Values(f), err
	}
	if got, err := drain(hostkit.Concat(ctx, []string{"c1", "c2"}, each)); err != nil || !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Errorf("Concat = %q, %v", got, err)
	}
	if got, err := drain(hostkit.Concat(ctx, []string{"c1", "gone", "c2"}, each)); !errors.Is(err, hostkit.ErrNotFound) || len(got) != 2 {
		t.Errorf("Concat with a missing commit = %q, %v; want 2 addresses, then ErrNotFound", got, err)
	}
	done, cancel := context.WithTimeout(ctx, -time.Second)
	defer cancel()
	if _, err := drain(hostkit.Concat(done, []string{"c1"}, each)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Concat with a done context: %v", err)
	}
	if _, err := hostkit.Get(done, files, "c1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get with a done context: %v", err)
	}
}

// Chain yields each item's sequence in turn and ends with the first error
// of one — a tree whose read fails midway ends it, never quietly — or with
// ctx's; after a break it reads no further item.
func TestChain(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	trees := map[string][]string{"c1": {"x", "y"}, "c2": {"z"}, "bad": {"w"}}
	var read []string
	each := func(id string) iter.Seq2[string, error] {
		read = append(read, id)
		err := error(nil)
		if id == "bad" {
			err = boom // fails after its first address
		}
		return hostkit.Slice(ctx, trees[id], err)
	}
	if got, err := drain(hostkit.Chain(ctx, []string{"c1", "c2"}, each)); err != nil || !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Errorf("Chain = %q, %v", got, err)
	}
	if got, err := drain(hostkit.Chain(ctx, []string{"c1", "bad", "c2"}, each)); !errors.Is(err, boom) || !slices.Equal(got, []string{"x", "y", "w"}) {
		t.Errorf("Chain over a tree that fails midway = %q, %v; want x y w, then boom", got, err)
	}
	done, cancel := context.WithTimeout(ctx, -time.Second)
	defer cancel()
	if got, err := drain(hostkit.Chain(done, []string{"c1"}, each)); !errors.Is(err, context.DeadlineExceeded) || len(got) != 0 {
		t.Errorf("Chain with a done context: %q, %v", got, err)
	}
	read = nil
	for range hostkit.Chain(ctx, []string{"c1", "c2"}, each) {
		break
	}
	if !slices.Equal(read, []string{"c1"}) {
		t.Errorf("after a break at the first address, Chain read %q", read)
	}
}

func drain[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// db is a table of keys read a page at a time as a database does: WHERE
// key >= from ORDER BY key LIMIT size, comparing by collate, keys it
// holds equal in any order.
func db(keys []string, collate func(a, b string) int, size int, rng *rand.Rand) func(context.Context, string) ([]string, error) {
	return func(_ context.Context, from string) ([]string, error) {
		var out []string
		for _, k := range keys {
			if collate(k, from) >= 0 {
				out = append(out, k)
			}
		}
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		slices.SortStableFunc(out, collate)
		return out[:min(size, len(out))], nil
	}
}

// Pages never skips a key quietly: over a table with a key held twice, or
// under a collation that holds "A" and "a" equal, a key at a page boundary
// was skipped when the next page began after it; now the iteration yields
// every key >= from in byte order, or ends with ErrOutOfOrder — always for
// a duplicate — and a byte-ordered table without duplicates reads whole.
// Pages hold two keys or more (a page of one cannot show the repeat).
func TestPagesNeverSkips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "A", "b", "B", "-", "_"}
	caseless := func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) }
	id := func(k string) string { return k }
	for round := range 3000 {
		var keys []string
		for range rng.IntN(8) {
			k := ""
			for range 1 + rng.IntN(3) {
				k += alphabet[rng.IntN(len(alphabet))]
			}
			keys = append(keys, k)
		}
		dups := round%2 == 1 && len(keys) > 0
		if dups {
			keys = append(keys, keys[rng.IntN(len(keys))])
		} else {
			keys = slices.Compact(slices.Sorted(slices.Values(keys)))
		}
		from := ""
		if rng.IntN(3) == 0 {
			from = alphabet[rng.IntN(len(alphabet))]
		}
		want := slices.Compact(slices.Sorted(slices.Values(keys)))
		want = want[lowerBound(want, from):]
		held := map[string]int{}
		for _, k := range keys {
			held[k]++
		}
		dupFrom := func(from string) bool {
			for k, n := range held {
				if n > 1 && k >= from {
					return true
				}
			}
			return false
		}
		size := 2 + rng.IntN(3)
		for name, collate := range map[string]func(a, b string) int{"bytes": strings.Compare, "caseless": caseless} {
			from, want := from, want
			if name == "caseless" {
				// A collated WHERE key >= from drops keys a caseless
				// order puts first ("_A" from "A"), unseen: only a
				// query in byte order resumes safely (see Ordered).
				from, want = "", slices.Compact(slices.Sorted(slices.Values(keys)))
			}
			hasDup := dupFrom(from)
			got, err := drain(hostkit.Pages(context.Background(), from, id, db(keys, collate, size, rng)))
			switch {
			case err != nil && !errors.Is(err, hostkit.ErrOutOfOrder):
				t.Fatalf("%s %q from %q, pages of %d: %v", name, keys, from, size, err)
			case err != nil && name == "bytes" && !hasDup:
				t.Fatalf("%s %q from %q, pages of %d: %v, a table in byte order", name, keys, from, size, err)
			case err == nil && hasDup:
				t.Fatalf("%s %q from %q, pages of %d: %q and no error, for a key held twice", name, keys, from, size, got)
			case err == nil && !slices.Equal(got, want):
				t.Fatalf("%s %q from %q, pages of %d: %q, want %q", name, keys, from, size, got, want)
			}
		}
		// A byte-ordered table without duplicates reads whole in pages of one.
		if !dupFrom(from) {
			if got, err := drain(hostkit.Pages(context.Background(), from, id, db(want, strings.Compare, 1, rng))); err != nil || !slices.Equal(got, want) {
				t.Fatalf("%q from %q, pages of 1: %q, %v", want, from, got, err)
			}
		}
	}
}

func lowerBound(sorted []string, from string) int {
	i, _ := slices.BinarySearch(sorted, from)
	return i
}

// Query ends with ctx's error when ctx is done between rows, and with a
// scan's error, and closes the rows either way: never a quiet end.
func TestQueryEndsMidway(t *testing.T) {
	data := [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		cancel  bool
		wantErr error
	}{{"cancelled", true, context.Canceled}, {"scan error", false, boom}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			closed := false
			q := func(context.Context) (hostkit.Rows, error) { return &rows{data: data, closed: &closed}, nil }
			scan := func(r hostkit.Rows) (kv, error) {
				x, err := scanKV(r)
				if x.k == "b" && !tc.cancel {
					return x, boom
				}
				return x, err
			}
			var got []string
			var last error
			for v, err := range hostkit.Query(ctx, q, scan) {
				if err != nil {
					last = err
					continue
				}
				got = append(got, v.k)
				if tc.cancel {
					cancel()
				}
			}
			if !slices.Equal(got, []string{"a"}) || !errors.Is(last, tc.wantErr) || !closed {
				t.Errorf("yielded %q, then %v, rows closed %t; want [a], then %v, closed", got, last, closed, tc.wantErr)
			}
		})
	}
}
