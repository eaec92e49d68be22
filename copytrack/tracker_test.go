package copytrack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// clock is a settable clock for WithClock.
type clock struct{ now atomic.Int64 }

func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func (c *clock) set(t time.Time)  { c.now.Store(t.UnixNano()) }
func (c *clock) Now() time.Time   { return time.Unix(0, c.now.Load()).UTC() }

func list(t *testing.T, tr *Tracker, repository string) []Copy {
	t.Helper()
	var out []Copy
	for c, err := range tr.List(context.Background(), repository) {
		if err != nil {
			t.Fatalf("List(%q): %v", repository, err)
		}
		out = append(out, c)
	}
	return out
}

func sameCopies(a, b []Copy) bool {
	return slices.EqualFunc(a, b, func(x, y Copy) bool {
		return x.Repository == y.Repository && x.Branch == y.Branch && x.SrcPath == y.SrcPath &&
			x.DstPath == y.DstPath && x.PhysicalAddress == y.PhysicalAddress && x.CreatedAt.Equal(y.CreatedAt)
	})
}

// TestTrackerModel runs random Track, Expire and ForgetBranch calls on
// repository names chosen to collide if the key layout let them, and
// compares every List with a slice kept in Track order.
func TestTrackerModel(t *testing.T) {
	repos := []string{"a", "a/b", "ab", "a\x00", "a\x00b", "a\xff", "\xff", "b", "aa/b", "a/", string(make([]byte, 200))}
	branches := []string{"main", "dev", ""}
	times := []time.Time{t0.Add(-3 * time.Hour), t0.Add(-time.Hour), t0, t0.Add(time.Nanosecond), time.Unix(-5, 0).UTC(), t0.Add(time.Hour)}
	const ttl = 90 * time.Minute
	// What the random calls exercised: copies Expire and ForgetBranch
	// removed, and copies of the same repository (and, for ForgetBranch,
	// branch) they had to keep.
	var expired, expireKept, expireAtCutoff, forgotten, forgetKept, forgetAtCutoff int
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		clk := newClock(t0)
		tr := mustNew(t, NewMemStore(), WithTTL(ttl), WithClock(clk.Now))
		var model []Copy // in Track order
		ctx := context.Background()
		for i := range 150 {
			repo := repos[rng.IntN(len(repos))]
			switch op := rng.IntN(10); {
			case op < 7:
				c := Copy{Repository: repo, Branch: branches[rng.IntN(len(branches))],
					SrcPath: fmt.Sprintf("src/%d", i), DstPath: fmt.Sprintf("dst/%d\x00\xff", i),
					PhysicalAddress: fmt.Sprintf("data/%d", i)}
				if rng.IntN(4) > 0 {
					c.CreatedAt = times[rng.IntN(len(times))]
				}
				if err := tr.Track(ctx, c); err != nil {
					t.Fatal(err)
				}
				if c.CreatedAt.IsZero() {
					c.CreatedAt = clk.Now()
				}
				model = append(model, c)
			case op < 8:
				clk.set(times[rng.IntN(len(times))].Add(time.Duration(rng.IntN(3)) * time.Hour))
				if len(model) > 0 && rng.IntN(3) == 0 {
					// Exactly ttl after a tracked copy: that copy is at the
					// cutoff, not before it, and stays.
					c := model[rng.IntN(len(model))]
					repo = c.Repository
					clk.set(c.CreatedAt.Add(ttl))
				}
				cutoff := clk.Now().Add(-ttl)
				n := len(model)
				model = slices.DeleteFunc(model, func(c Copy) bool { return c.Repository == repo && c.CreatedAt.Before(cutoff) })
				expired += n - len(model)
				for _, c := range model {
					if c.Repository == repo {
						expireKept++
						if c.CreatedAt.Equal(cutoff) {
							expireAtCutoff++
						}
					}
				}
				removed, err := tr.Expire(ctx, repo)
				if err != nil || removed != n-len(model) {
					t.Fatalf("seed %d: Expire(%q) = %d, %v; want %d", seed, repo, removed, err, n-len(model))
				}
			default:
				branch := branches[rng.IntN(len(branches))]
				before := times[rng.IntN(len(times))]
				if len(model) > 0 && rng.IntN(3) == 0 {
					// The cut-off is a tracked copy's time: that copy is
					// not before it, and stays.
					c := model[rng.IntN(len(model))]
					repo, branch, before = c.Repository, c.Branch, c.CreatedAt
				}
				n := len(model)
				model = slices.DeleteFunc(model, func(c Copy) bool {
					return c.Repository == repo && c.Branch == branch && c.CreatedAt.Before(before)
				})
				forgotten += n - len(model)
				for _, c := range model {
					if c.Repository == repo && c.Branch == branch {
						forgetKept++
						if c.CreatedAt.Equal(before) {
							forgetAtCutoff++
						}
					}
				}
				removed, err := tr.ForgetBranch(ctx, repo, branch, before)
				if err != nil || removed != n-len(model) {
					t.Fatalf("seed %d: ForgetBranch(%q, %q) = %d, %v; want %d", seed, repo, branch, removed, err, n-len(model))
				}
			}
		}
		for _, repo := range repos {
			var want []Copy
			for _, c := range model {
				if c.Repository == repo {
					want = append(want, c)
				}
			}
			slices.SortStableFunc(want, func(a, b Copy) int { return a.CreatedAt.Compare(b.CreatedAt) })
			if got := list(t, tr, repo); !sameCopies(got, want) {
				t.Fatalf("seed %d: List(%q):\n got  %v\n want %v", seed, repo, got, want)
			}
		}
	}
	if expired == 0 || expireKept == 0 || expireAtCutoff == 0 || forgotten == 0 || forgetKept == 0 || forgetAtCutoff == 0 {
		t.Errorf("the random calls never exercised a case: Expire removed %d and kept %d (%d at the cutoff), ForgetBranch removed %d and kept %d (%d at the cutoff)",
			expired, expireKept, expireAtCutoff, forgotten, forgetKept, forgetAtCutoff)
	}
}

func TestRepositoryPrefixesArePrefixFree(t *testing.T) {
	names := []string{"", "a", "a/b", "ab", "a\x00", "a\x00b", "a\xff", "\x01a", "\x02ab", string(make([]byte, 127)), string(make([]byte, 128))}
	for _, a := range names {
		for _, b := range names {
			if a != b && bytes.HasPrefix(repositoryPrefix(b), repositoryPrefix(a)) {
				t.Errorf("prefix of %q is a prefix of the prefix of %q", a, b)
			}
		}
	}
}

func TestForgetBranchLeavesOthersIntact(t *testing.T) {
	ctx := context.Background()
	tr := mustNew(t, NewMemStore(), WithClock(func() time.Time { return t0.Add(time.Second) })) // after every copy
	var all []Copy
	for i, c := range []struct{ repo, branch string }{{"a", "main"}, {"a", "dev"}, {"a/b", "main"}, {"a", "main"}, {"b", "main"}, {"a", "main2"}} {
		cp := Copy{Repository: c.repo, Branch: c.branch, PhysicalAddress: fmt.Sprint("addr", i), CreatedAt: t0.Add(time.Duration(i))}
		if err := tr.Track(ctx, cp); err != nil {
			t.Fatal(err)
		}
		all = append(all, cp)
	}
	removed, err := tr.ForgetBranch(ctx, "a", "main", t0.Add(time.Second))
	if err != nil || removed != 2 {
		t.Fatalf("ForgetBranch = %d, %v; want 2, nil", removed, err)
	}
	for repo, want := range map[string][]Copy{"a": {all[1], all[5]}, "a/b": {all[2]}, "b": {all[4]}} {
		if got := list(t, tr, repo); !sameCopies(got, want) {
			t.Errorf("List(%q) = %v, want %v", repo, got, want)
		}
	}
}

// countingStore counts the pairs its Scans yield.
type countingStore struct {
	Store
	read atomic.Int64
}

func (s *countingStore) Scan(ctx context.Context, prefix []byte) iter.Seq2[KV, error] {
	return func(yield func(KV, error) bool) {
		for kv, err := range s.Store.Scan(ctx, prefix) {
			s.read.Add(1)
			if !yield(kv, err) {
				return
			}
		}
	}
}

func TestExpireReadsOnlyExpiredPlusOne(t *testing.T) {
	for _, expired := range []int{0, 1, expireBatch - 1, expireBatch, expireBatch + 1, 2*expireBatch + 5} {
		store := &countingStore{Store: NewMemStore()}
		tr := mustNew(t, store, WithTTL(time.Hour), WithClock(func() time.Time { return t0 }))
		ctx := context.Background()
		for i := range expired + 500 {
			created := t0.Add(-2 * time.Hour).Add(time.Duration(i) * time.Millisecond) // expired
			if i >= expired {
				created = t0.Add(time.Duration(i) * time.Millisecond)
			}
			if err := tr.Track(ctx, Copy{Repository: "r", PhysicalAddress: "x", CreatedAt: created}); err != nil {
				t.Fatal(err)
			}
		}
		store.read.Store(0)
		removed, err := tr.Expire(ctx, "r")
		if err != nil || removed != expired {
			t.Fatalf("Expire = %d, %v; want %d", removed, err, expired)
		}
		if got := store.read.Load(); got != int64(expired+1) {
			t.Errorf("Expire of %d records read %d, want %d", expired, got, expired+1)
		}
		if got := len(list(t, tr, "r")); got != 500 {
			t.Errorf("after Expire, %d records left, want 500", got)
		}
	}
}

// TestExpireUnderConcurrentTrack runs Expire in a loop while other
// goroutines Track fresh copies: every fresh copy survives, every old one goes.
func TestExpireUnderConcurrentTrack(t *testing.T) {
	ctx := context.Background()
	tr := mustNew(t, NewMemStore(), WithTTL(time.Hour), WithClock(func() time.Time { return t0 }))
	const old, writers, perWriter = 300, 4, 150
	for i := range old {
		if err := tr.Track(ctx, Copy{Repository: "r", PhysicalAddress: fmt.Sprint("old", i), CreatedAt: t0.Add(-2 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var expired atomic.Int64
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			n, err := tr.Expire(ctx, "r")
			if err != nil {
				t.Error(err)
				return
			}
			expired.Add(int64(n))
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	var writersWG sync.WaitGroup
	for w := range writers {
		writersWG.Add(1)
		go func() {
			defer writersWG.Done()
			for i := range perWriter {
				if err := tr.Track(ctx, Copy{Repository: "r", Branch: fmt.Sprint(w), PhysicalAddress: fmt.Sprint(w, "/", i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	writersWG.Wait()
	close(stop)
	wg.Wait()
	if expired.Load() != old {
		t.Errorf("Expire removed %d records in all, want %d", expired.Load(), old)
	}
	seen := map[string]bool{}
	for _, c := range list(t, tr, "r") {
		seen[c.PhysicalAddress] = true
	}
	for w := range writers {
		for i := range perWriter {
			if a := fmt.Sprint(w, "/", i); !seen[a] {
				t.Errorf("fresh copy %s lost", a)
			}
		}
	}
	if len(seen) != writers*perWriter {
		t.Errorf("%d records left, want %d", len(seen), writers*perWriter)
	}
}

func TestListInTrackOrderForEqualTimes(t *testing.T) {
	ctx := context.Background()
	tr := mustNew(t, NewMemStore(), WithClock(func() time.Time { return t0 }))
	var want []string
	for i := range 300 {
		a := fmt.Sprint("addr", 299-i) // not in lexical order
		if err := tr.Track(ctx, Copy{Repository: "r", PhysicalAddress: a}); err != nil {
			t.Fatal(err)
		}
		want = append(want, a)
	}
	var got []string
	for a, err := range tr.Addresses(ctx, "r") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Addresses = %v, want %v", got, want)
	}
}

func TestTrackRejectsInvalidCopies(t *testing.T) {
	tr := mustNew(t, NewMemStore())
	for _, c := range []Copy{
		{PhysicalAddress: "x"},
		{Repository: "r"},
		{Repository: "r", PhysicalAddress: "x", CreatedAt: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Repository: "r", PhysicalAddress: "x", CreatedAt: time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if err := tr.Track(context.Background(), c); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("Track(%+v) = %v, want ErrInvalidInput", c, err)
		}
	}
}

func TestCorruptRecordIsReportedNotSkipped(t *testing.T) {
	ctx := context.Background()
	store := NewMemStore()
	tr := mustNew(t, store, WithTTL(time.Hour), WithClock(func() time.Time { return t0 }))
	for i := range 3 {
		if err := tr.Track(ctx, Copy{Repository: "r", Branch: "main", PhysicalAddress: fmt.Sprint(i), CreatedAt: t0.Add(time.Duration(i))}); err != nil {
			t.Fatal(err)
		}
	}
	// At t0, with a sequence number above any counter: between the first
	// two records.
	badKey := encodeKey("r", t0, [seqLen]byte{1})
	if err := store.Set(ctx, badKey, []byte{recordVersion + 1, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	var listErr error
	for _, err := range tr.List(ctx, "r") {
		if err != nil {
			listErr = err
		}
	}
	if !errors.Is(listErr, ErrCorruptRecord) || !bytes.Contains([]byte(listErr.Error()), []byte(fmt.Sprintf("%q", badKey))) {
		t.Errorf("List error = %v, want ErrCorruptRecord naming key %q", listErr, badKey)
	}
	if n, err := tr.ForgetBranch(ctx, "r", "main", t0.Add(time.Hour)); !errors.Is(err, ErrCorruptRecord) || n != 0 {
		t.Errorf("ForgetBranch = %d, %v; want 0, ErrCorruptRecord", n, err)
	}
	if err := store.Set(ctx, append(repositoryPrefix("r"), "short"...), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Expire(ctx, "r"); !errors.Is(err, ErrCorruptRecord) {
		t.Errorf("Expire over a bad key = %v, want ErrCorruptRecord", err)
	}
	n := 0
	for kv, err := range store.Scan(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		_ = kv
		n++
	}
	if n != 5 {
		t.Errorf("%d records left after the errors, want all 5", n)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tr := mustNew(t, NewMemStore())
	if err := tr.Track(ctx, Copy{Repository: "r", PhysicalAddress: "x"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Track = %v", err)
	}
	if _, err := tr.Expire(ctx, "r"); !errors.Is(err, context.Canceled) {
		t.Errorf("Expire = %v", err)
	}
	if _, err := tr.ForgetBranch(ctx, "r", "b", t0); !errors.Is(err, context.Canceled) {
		t.Errorf("ForgetBranch = %v", err)
	}
	yielded := 0
	for _, err := range tr.Addresses(ctx, "r") {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Addresses = %v", err)
		}
		yielded++
	}
	if yielded != 1 {
		t.Errorf("Addresses yielded %d times, want the error once", yielded)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	c := Copy{Repository: "repo/a", Branch: "main", SrcPath: "a.csv", DstPath: "b.csv", PhysicalAddress: "data/gxyz/abc", CreatedAt: t0}
	f.Add(encodeKey(c.Repository, c.CreatedAt, [seqLen]byte{1, 2}), encodeValue(c))
	f.Add(encodeKey("", time.Unix(-1, 0), [seqLen]byte{}), encodeValue(Copy{}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, []byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		c, err := decodeRecord(key, value)
		if err != nil {
			if !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("error %v does not wrap ErrCorruptRecord", err)
			}
			return
		}
		var seq [seqLen]byte
		copy(seq[:], key[len(key)-seqLen:])
		if k := encodeKey(c.Repository, c.CreatedAt, seq); !bytes.Equal(k, key) {
			t.Errorf("key %q decodes to %+v, which encodes to %q", key, c, k)
		}
		if v := encodeValue(c); !bytes.Equal(v, value) {
			t.Errorf("value %q decodes to %+v, which encodes to %q", value, c, v)
		}
	})
}

// hookStore runs hook once, after its Scan yielded the first pair.
type hookStore struct {
	Store
	hook func()
}

func (s *hookStore) Scan(ctx context.Context, prefix []byte) iter.Seq2[KV, error] {
	return func(yield func(KV, error) bool) {
		for kv, err := range s.Store.Scan(ctx, prefix) {
			if !yield(kv, err) {
				return
			}
			if s.hook != nil {
				s.hook()
				s.hook = nil
			}
		}
	}
}

// TestForgetBranchKeepsCopiesTrackedWhileItRuns commits a branch and, while
// ForgetBranch reads its records, renames a file on the branch's new staging
// area: that copy is not covered by the commit, so its record must stay.
func TestForgetBranchKeepsCopiesTrackedWhileItRuns(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	store := &hookStore{Store: NewMemStore()}
	tr := mustNew(t, store, WithClock(clk.Now))
	const committed = 2 * memPageSize // enough for the scan to read a page after the hook
	for i := range committed {
		if err := tr.Track(ctx, Copy{Repository: "r", Branch: "main", PhysicalAddress: fmt.Sprint("old", i)}); err != nil {
			t.Fatal(err)
		}
	}
	clk.set(t0.Add(time.Second))
	commitTime := clk.Now()
	store.hook = func() {
		clk.set(t0.Add(2 * time.Second))
		if err := tr.Track(ctx, Copy{Repository: "r", Branch: "main", PhysicalAddress: "new"}); err != nil {
			t.Error(err)
		}
	}
	removed, err := tr.ForgetBranch(ctx, "r", "main", commitTime)
	if err != nil || removed != committed {
		t.Fatalf("ForgetBranch = %d, %v; want %d, nil", removed, err, committed)
	}
	if got := list(t, tr, "r"); len(got) != 1 || got[0].PhysicalAddress != "new" {
		t.Fatalf("after ForgetBranch, List = %v; want only the copy tracked while it ran", got)
	}
}

// TestForgetBranchCutsAtTheCommitTime commits a branch, renames a file on
// its new staging area, and only then calls ForgetBranch with the commit's
// time: the rename's record is newer than the commit and must stay, however
// late the call comes; a record older than the commit goes.
func TestForgetBranchCutsAtTheCommitTime(t *testing.T) {
	ctx := context.Background()
	clk := newClock(t0)
	tr := mustNew(t, NewMemStore(), WithClock(clk.Now))
	for _, c := range []Copy{
		{Repository: "r", Branch: "main", PhysicalAddress: "committed", CreatedAt: t0.Add(-time.Second)},
		{Repository: "r", Branch: "main", PhysicalAddress: "at-commit", CreatedAt: t0}, // ambiguous: kept
		{Repository: "r", Branch: "main", PhysicalAddress: "renamed-after", CreatedAt: t0.Add(time.Second)},
	} {
		if err := tr.Track(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	clk.set(t0.Add(time.Minute)) // the host calls ForgetBranch a minute after the commit
	removed, err := tr.ForgetBranch(ctx, "r", "main", t0)
	if err != nil || removed != 1 {
		t.Fatalf("ForgetBranch = %d, %v; want 1, nil", removed, err)
	}
	var got []string
	for _, c := range list(t, tr, "r") {
		got = append(got, c.PhysicalAddress)
	}
	if want := []string{"at-commit", "renamed-after"}; !slices.Equal(got, want) {
		t.Errorf("after ForgetBranch, records %q; want %q", got, want)
	}
	if n, err := tr.ForgetBranch(ctx, "r", "main", time.Time{}); !errors.Is(err, ErrInvalidInput) || n != 0 {
		t.Errorf("ForgetBranch with a zero time = %d, %v; want 0, ErrInvalidInput", n, err)
	}
	if got := list(t, tr, "r"); len(got) != 2 {
		t.Errorf("a refused ForgetBranch left %d records, want 2", len(got))
	}
}

// TestNewWithoutStoreOrOptions checks that a nil Store and nil options make
// errors, not panics.
func TestNewWithoutStoreOrOptions(t *testing.T) {
	ctx := context.Background()
	tr := mustNew(t, NewMemStore(), nil, WithTTL(time.Hour), nil)
	if err := tr.Track(ctx, Copy{Repository: "r", PhysicalAddress: "x"}); err != nil {
		t.Fatalf("Track with nil options given: %v", err)
	}

	if tr, err := New(nil); err == nil || tr != nil || !errors.Is(err, ErrInvalidInput) {
		t.Errorf("New(nil) = %v, %v; want an error wrapping ErrInvalidInput", tr, err)
	}
}

// TTL reports the TTL Expire uses: the option's, or the default for none;
// an invalid one fails New.
func TestTrackerTTL(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want time.Duration
	}{
		{nil, DefaultTTL},
		{[]Option{WithTTL(6 * time.Hour)}, 6 * time.Hour},
		{[]Option{WithTTL(0)}, DefaultTTL},
	} {
		if got := mustNew(t, NewMemStore(), tc.opts...).TTL(); got != tc.want {
			t.Errorf("TTL() = %v, want %v", got, tc.want)
		}
	}
}

// TestErrorTexts: each error says copytrack and its step once.
func TestErrorTexts(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := Copy{Repository: "r", Branch: "b", DstPath: "p", PhysicalAddress: "data/a/b"}
	err := mustNew(t, NewMemStore()).Track(ctx, c)
	if want := "copytrack: track: memstore set: context canceled"; err == nil || err.Error() != want || !errors.Is(err, context.Canceled) {
		t.Errorf("Track with a cancelled context = %v; want %q", err, want)
	}
	tr, err := New(NewMemStore(), WithTTL(-time.Hour))
	if want := "copytrack: invalid input: negative TTL -1h0m0s"; err == nil || tr != nil || err.Error() != want || !errors.Is(err, ErrInvalidInput) {
		t.Errorf("New with a negative TTL = %v; want %q", err, want)
	}
}

// mustNew is New for options that are valid.
func mustNew(tb testing.TB, store Store, opts ...Option) *Tracker {
	tb.Helper()
	tr, err := New(store, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}
