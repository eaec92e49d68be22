package uncommitted_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakegc/lakegc/uncommitted"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"
)

var modelCases = flag.Int("uncommitted.cases", 0, "random repositories per bucket in TestPrepareMatchesModel (0: a CI-sized default)")

// fakeClock advances by step each time it is read.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// buckets are the gocloud drivers every storage test runs on.
func buckets(t *testing.T) map[string]func(t *testing.T) *blob.Bucket {
	return map[string]func(t *testing.T) *blob.Bucket{
		"memblob": func(t *testing.T) *blob.Bucket {
			b := memblob.OpenBucket(nil)
			t.Cleanup(func() { b.Close() })
			return b
		},
		"fileblob": func(t *testing.T) *blob.Bucket {
			b, err := fileblob.OpenBucket(t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return b
		},
	}
}

const namespace = "s3://bucket/repo1"

// keyRunes are the characters keys and branch names are made of: '/', a
// prefix-ordering trap ('-' sorts before '/'), multi-byte UTF-8, and now
// and then a byte that is not UTF-8 (no mark can carry it).
var keyRunes = []rune("ab/-.zé日🙂")

func randName(r *rand.Rand, n int) string {
	var b strings.Builder
	for range 1 + r.IntN(n) {
		if r.IntN(30) == 0 {
			b.WriteByte([]byte{0x80, 0xff}[r.IntN(2)])
			continue
		}
		b.WriteRune(keyRunes[r.IntN(len(keyRunes))])
	}
	return b.String()
}

// randAddress returns an entry's address and the rows it exports to, if
// any.
func randAddress(r *rand.Rand) (addr string, typ uncommitted.AddressType, exported []string, ok bool) {
	rel := "data/" + randName(r, 3) + "/" + randName(r, 6)
	switch r.IntN(6) {
	case 0, 1:
		return rel, uncommitted.Relative, s3Keys(rel), true
	case 2:
		return namespace + "/" + rel, uncommitted.Full, s3Keys(rel), true
	case 3: // a sibling namespace sharing the prefix without the '/'
		return namespace + "x/" + rel, uncommitted.Full, nil, false
	case 4:
		return "gs://elsewhere/" + rel, uncommitted.Full, nil, false
	default:
		return namespace + "/", uncommitted.Full, nil, false // the namespace itself
	}
}

// s3Keys are the keys of the namespace's object at rel: rel, and the key
// lakeFS before v0.110 used on S3 — aws-sdk-go v1 cleaned the request's
// path, a trailing '/' kept.
func s3Keys(rel string) []string {
	keys := []string{rel}
	c := path.Clean("/repo1/" + rel)
	if strings.HasSuffix(rel, "/") && !strings.HasSuffix(c, "/") {
		c += "/"
	}
	if k, ok := strings.CutPrefix(c, "/repo1/"); ok && k != rel && k != "" {
		keys = append(keys, k)
	}
	return keys
}

type model struct {
	src      *memSource
	trailer  []string
	expected []uncommitted.Row // without the trailer's, whose date is the clock's
	trailerN int               // rows the trailer exports
	// may are the rows of branches deleted during the run: each is
	// exported at most once (before the deletion was seen) or not at all.
	may []uncommitted.Row
}

// randModel draws a repository from r; die draws which branches are
// deleted during the run, and when (a second source, so that the
// repositories drawn from r stay those of the seed).
func randModel(r, die *rand.Rand) *model {
	m := &model{src: newMemSource()}
	for range r.IntN(10) {
		branch := randName(r, 5)
		if _, dup := m.src.entries[branch]; dup {
			continue
		}
		gone := r.IntN(8) == 0
		m.src.gone[branch] = gone
		m.src.entries[branch] = nil
		var rows []uncommitted.Row
		keys := map[string]bool{}
		for range r.IntN(40) {
			k := randName(r, 8)
			if keys[k] {
				continue
			}
			keys[k] = true
			addr, typ, exported, ok := randAddress(r)
			e := uncommitted.Entry{
				Key: k, PhysicalAddress: addr, AddressType: typ,
				CreationDate: time.Unix(r.Int64N(1e9), 0), Tombstone: r.IntN(5) == 0,
			}
			m.src.add(branch, e)
			if ok && !e.Tombstone && !gone {
				for _, x := range exported {
					rows = append(rows, uncommitted.Row{PhysicalAddress: x, CreationDate: e.CreationDate.Unix()})
				}
			}
		}
		if !gone && die.IntN(4) == 0 {
			if die.IntN(2) == 0 {
				m.src.dieAfter[branch] = die.IntN(len(m.src.entries[branch]) + 1)
			} else {
				m.src.dieAtListing[branch] = 1 + die.IntN(20)
			}
			m.src.unlistDead[branch] = die.IntN(2) == 0
			m.may = append(m.may, rows...)
		} else {
			m.expected = append(m.expected, rows...)
		}
	}
	if r.IntN(2) == 0 {
		for range r.IntN(6) {
			addr, typ, exported, ok := randAddress(r)
			if typ == uncommitted.Relative && r.IntN(2) == 0 {
				addr = "/" + addr // a relative address is kept as it is
				exported = s3Keys(addr)
			}
			m.trailer = append(m.trailer, addr)
			if ok {
				for _, x := range exported {
					m.trailerN++
					m.expected = append(m.expected, uncommitted.Row{PhysicalAddress: x, CreationDate: -1})
				}
			}
		}
	}
	return m
}

func (m *model) trailerSeq(ctx context.Context) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, a := range m.trailer {
			if !yield(a, nil) {
				return
			}
		}
	}
}

func sortRows(rows []uncommitted.Row) {
	slices.SortFunc(rows, func(a, b uncommitted.Row) int {
		if c := strings.Compare(a.PhysicalAddress, b.PhysicalAddress); c != 0 {
			return c
		}
		return int(min(max(a.CreationDate-b.CreationDate, -1), 1))
	})
}

// markAfter reports whether mark a is past mark b (nil: the run's start).
func markAfter(a, b *uncommitted.Checkpoint) bool {
	if b == nil {
		b = &uncommitted.Checkpoint{}
	}
	return a.BranchID > b.BranchID || a.BranchID == b.BranchID && a.Path > b.Path
}

// runToEnd calls Prepare from mark until the run completes, passing each
// mark through a token, and checks what every call promises. A call that
// fails with errAmbiguous (a flaky bucket's) is retried from its mark.
func runToEnd(t *testing.T, ctx context.Context, p *uncommitted.Preparer, bucket *blob.Bucket, src uncommitted.Source, mark *uncommitted.Checkpoint, maxCalls int) (runID string, files int) {
	t.Helper()
	runID, files, _ = runReplaying(t, ctx, p, bucket, src, mark, maxCalls, nil)
	return runID, files
}

// runReplaying is runToEnd, except that when replay is set, now and then
// (also once the run completed) it calls Prepare again from a mark it
// already passed, as a host does that resends a request or restarts from a
// saved token, and continues from that call's mark. It returns how many
// replays it made. A replay of the nil mark continues the run only with
// WithRunID. After every call that leaves the run unfinished, reading the
// run must fail.
func runReplaying(t *testing.T, ctx context.Context, p *uncommitted.Preparer, bucket *blob.Bucket, src uncommitted.Source, mark *uncommitted.Checkpoint, maxCalls int, replay *rand.Rand) (runID string, files, replays int) {
	t.Helper()
	passed := []*uncommitted.Checkpoint{mark}
	for call, retries := 0, 0; ; call++ {
		if call > maxCalls+replays*maxCalls {
			t.Fatalf("run did not complete in %d calls", maxCalls)
		}
		res, err := p.Prepare(ctx, uncommitted.Repository{ID: "repo1", StorageNamespace: namespace + "/"}, src, mark)
		if errors.Is(err, errAmbiguous) && retries < 100 {
			call--
			retries++
			continue
		}
		if err != nil {
			t.Fatalf("call %d: %v", call, err)
		}
		if runID == "" {
			runID = res.RunID
		} else if res.RunID != runID {
			t.Fatalf("call %d: run ID %q, want %q", call, res.RunID, runID)
		}
		if res.Checkpoint != nil && !markAfter(res.Checkpoint, mark) {
			t.Fatalf("call %d made no progress: mark %+v after %+v", call, res.Checkpoint, mark)
		}
		if (res.Rows > 0) != (res.Filename != "") {
			t.Fatalf("call %d: rows %d, filename %q", call, res.Rows, res.Filename)
		}
		if want := uncommitted.Location(namespace, "_lakefs", runID); res.Location != want {
			t.Fatalf("call %d: location %q, want %q", call, res.Location, want)
		}
		if res.Rows > 0 {
			files++
		}
		tok := uncommitted.EncodeToken(res.Checkpoint)
		mark, err = uncommitted.DecodeToken(tok)
		if err != nil {
			t.Fatalf("call %d: decode own token %q: %v", call, tok, err)
		}
		if mark != nil {
			if n, err := drain(uncommitted.Addresses(ctx, bucket, "_lakefs", runID)); !errors.Is(err, uncommitted.ErrIncomplete) && !errors.Is(err, uncommitted.ErrNoRun) {
				t.Fatalf("call %d: the run is unfinished, and reading it gave %d addresses and %v", call, len(n), err)
			}
		}
		if replay != nil && replays < 4 && replay.IntN(4) == 0 {
			replays++
			mark = passed[replay.IntN(len(passed))]
			continue
		}
		if mark == nil {
			return runID, files, replays
		}
		passed = append(passed, mark)
	}
}

// checkAddresses checks that Addresses yields the addresses of rows, the
// rows ReadRun read, in the same order.
func checkAddresses(t *testing.T, ctx context.Context, bucket *blob.Bucket, runID string, rows []uncommitted.Row) {
	t.Helper()
	i := 0
	for a, err := range uncommitted.Addresses(ctx, bucket, "_lakefs", runID) {
		if err != nil {
			t.Fatalf("Addresses: %v", err)
		}
		if i >= len(rows) || a != rows[i].PhysicalAddress {
			t.Fatalf("Addresses: address %d is %q, ReadRun read %v", i, a, rows)
		}
		i++
	}
	if i != len(rows) {
		t.Fatalf("Addresses yielded %d addresses, ReadRun %d rows", i, len(rows))
	}
}

func readAll(t *testing.T, ctx context.Context, bucket *blob.Bucket, runID string) []uncommitted.Row {
	t.Helper()
	var rows []uncommitted.Row
	for row, err := range uncommitted.ReadRun(ctx, bucket, "_lakefs", runID) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	return rows
}

// TestPrepareMatchesModel is the main invariant: whatever the repository,
// the budgets and the resumption points, the rows of a run's files are
// exactly the model's rows, each once.
func TestPrepareMatchesModel(t *testing.T) {
	for name, open := range buckets(t) {
		t.Run(name, func(t *testing.T) {
			n := 40 // each fileblob case costs ~10 file syscalls a call
			if name == "fileblob" {
				n = 10
			}
			if *modelCases > 0 {
				n = *modelCases
			}
			// What the repositories exercised: runs resumed from a mark,
			// rows that must be exported, and branches deleted mid-run.
			var resumed, replayed, rows, mayRows int
			for i := range n {
				seed := uint64(i)
				r := rand.New(rand.NewPCG(seed, 42))
				m := randModel(r, rand.New(rand.NewPCG(seed, 7)))
				bucket := open(t)
				clock := &fakeClock{t: time.Unix(1.7e9, 0), step: time.Duration(r.IntN(3)) * time.Second}
				maxSize := []int64{1, 200, 1 << 10, 8 << 10, 1 << 20}[r.IntN(5)]
				budget := uncommitted.WithoutTimeBudget()
				if d := time.Duration(r.IntN(20)) * time.Second; d > 0 {
					budget = uncommitted.WithPrepareDuration(d)
				}
				opts := []uncommitted.Option{
					uncommitted.WithMaxFileSize(maxSize),
					budget,
					uncommitted.WithClock(clock.now),
				}
				if m.trailer != nil {
					opts = append(opts, uncommitted.WithTrailer(m.trailerSeq))
				}
				// Some uploads report an error after they committed:
				// the retry from the same mark must replace the file.
				flaky := r.IntN(3) == 0
				if flaky {
					failures := rand.New(rand.NewPCG(seed, 9))
					bucket = newFlakyBucket(bucket, func(string) bool { return failures.IntN(3) == 0 })
				}
				// Some hosts replay marks they passed: a run's rows are then
				// all there, some more than once (the abandoned calls' files).
				var replay *rand.Rand
				if r.IntN(3) == 0 {
					replay = rand.New(rand.NewPCG(seed, 11))
					opts = append(opts, uncommitted.WithRunID(func() string { return fmt.Sprint("run", seed) }))
				}
				p := newPreparer(t, bucket, opts...)
				ctx := context.Background()
				runID, files, replays := runReplaying(t, ctx, p, bucket, m.src, nil, m.src.size()+2, replay)
				if files > 1 {
					resumed++
				}
				if replays > 0 {
					replayed++
				}
				rows += len(m.expected)
				mayRows += len(m.may)

				got := readAll(t, ctx, bucket, runID)
				checkAddresses(t, ctx, bucket, runID, got)
				for j := range got { // the trailer's dates come from the clock
					if got[j].CreationDate >= 1.7e9 {
						got[j].CreationDate = -1
					}
				}
				if replays > 0 {
					got = distinct(t, got, m.may, m.expected)
					m.expected = slices.Compact(sortedRows(m.expected))
				} else if m.may != nil {
					got = withoutMay(t, got, m.may, m.expected)
				}
				sortRows(got)
				sortRows(m.expected)
				if !slices.Equal(got, m.expected) {
					t.Fatalf("seed %d (max size %d): rows differ\n got %d: %v\nwant %d: %v", seed, maxSize, len(got), got, len(m.expected), m.expected)
				}
			}
			if *modelCases == 0 && (resumed == 0 || replayed == 0 || rows == 0 || mayRows == 0) { // a few cases asked for may miss one
				t.Errorf("the repositories never exercised a case: %d runs resumed, %d replayed, %d rows, %d rows of branches deleted mid-run", resumed, replayed, rows, mayRows)
			}
		})
	}
}

func sortedRows(rows []uncommitted.Row) []uncommitted.Row {
	rows = slices.Clone(rows)
	sortRows(rows)
	return rows
}

// distinct returns the distinct rows of got that must be there, once a run
// was replayed: then rows may be there more than once, and those of
// branches deleted during the run any number of times.
func distinct(t *testing.T, got, may, must []uncommitted.Row) []uncommitted.Row {
	t.Helper()
	spare := map[uncommitted.Row]bool{}
	for _, r := range may {
		spare[r] = true
	}
	need := map[uncommitted.Row]bool{}
	for _, r := range must {
		need[r] = true
	}
	var kept []uncommitted.Row
	for _, r := range slices.Compact(sortedRows(got)) {
		if need[r] || !spare[r] {
			kept = append(kept, r) // a stray row: the comparison fails
		}
	}
	return kept
}

// withoutMay removes from got the rows of branches deleted during the run,
// each of which may be there once beyond what must be there.
func withoutMay(t *testing.T, got, may, must []uncommitted.Row) []uncommitted.Row {
	t.Helper()
	spare := map[uncommitted.Row]int{}
	for _, r := range may {
		spare[r]++
	}
	left := map[uncommitted.Row]int{}
	for _, r := range must {
		left[r]++
	}
	var kept []uncommitted.Row
	for _, r := range got {
		switch {
		case left[r] > 0:
			left[r]--
			kept = append(kept, r)
		case spare[r] > 0:
			spare[r]--
		default:
			kept = append(kept, r) // a duplicate or a stray row: the comparison fails
		}
	}
	return kept
}

// TestPrepareFileSizeBound checks the documented overshoot: a file that is
// not the run's last exceeds the size budget by at most one row plus the
// footer.
func TestPrepareFileSizeBound(t *testing.T) {
	ctx := context.Background()
	for _, maxSize := range []int64{64 << 10, 256 << 10} {
		t.Run(fmt.Sprint(maxSize), func(t *testing.T) {
			bucket := memblob.OpenBucket(nil)
			defer bucket.Close()
			src := newMemSource()
			r := rand.New(rand.NewPCG(uint64(maxSize), 1))
			for b := range 2 {
				var es []uncommitted.Entry
				for i := range 15000 {
					es = append(es, uncommitted.Entry{
						Key:             fmt.Sprintf("k%07d", i),
						PhysicalAddress: fmt.Sprintf("data/%x/%x", r.Uint64(), r.Uint64()),
						CreationDate:    time.Unix(r.Int64N(2e9), 0),
					})
				}
				src.add(fmt.Sprint("b", b), es...)
			}
			p := newPreparer(t, bucket, uncommitted.WithMaxFileSize(maxSize))
			runID, files := runToEnd(t, ctx, p, bucket, src, nil, 1000)
			if files < 2 {
				t.Fatalf("only %d files: the budget was never reached", files)
			}
			iter := bucket.List(&blob.ListOptions{Prefix: "_lakefs/retention/gc/uncommitted/" + runID + "/uncommitted/"})
			var sizes []int64
			for {
				obj, err := iter.Next(ctx)
				if err != nil {
					break
				}
				if !strings.HasSuffix(obj.Key, "/"+uncommitted.ManifestName) {
					sizes = append(sizes, obj.Size)
				}
			}
			slices.Sort(sizes)
			sizes = sizes[1:] // the run's last file may be small
			const footer, row = 4 << 10, 64
			for _, s := range sizes {
				if s > maxSize+footer+row {
					t.Errorf("file of %d bytes, budget %d: overshoot %d", s, maxSize, s-maxSize)
				}
				if s < maxSize*3/4 {
					t.Errorf("file of %d bytes, budget %d: stopped far too early", s, maxSize)
				}
			}
			t.Logf("budget %d: file sizes %v", maxSize, sizes)
		})
	}
}
