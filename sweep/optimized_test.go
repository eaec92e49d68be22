package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// The simulated host of the model test: a pathprovider whose slices take
// addresses for four hours, signed addresses valid for six hours, and a min
// age of six hours; the slice margin is their sum plus the clock skew. A
// long interval makes uploads into slices older than the previous run's
// newest slice common, which a run without a margin misses.
const (
	simInterval = 4 * time.Hour
	simTTL      = 6 * time.Hour
	simMargin   = simInterval + simTTL + DefaultClockSkew
)

// simWriter is one writer's pathprovider: its current slice.
type simWriter struct {
	slice string
	start time.Time
}

// pending is an address handed out and not uploaded yet.
type pending struct {
	key    string
	at     time.Time // when it is uploaded
	path   string    // the logical path it will be staged at; "" abandons it
	noTime bool      // the store reports no modification time for it
}

type commit struct {
	keys    []string
	expires time.Time
	parts   []int // with partsOn: the parts (indices of gcModel.parts) whose keys are keys
}

// gcModel is a namespace in memblob with a simulated clock and a host's keep
// set: staged paths, commits that expire, shallow copies, and writers that
// hand out addresses in slices and upload to them up to the link TTL later.
type gcModel struct {
	t       *testing.T
	r       *rand.Rand
	ctx     context.Context
	base    *blob.Bucket
	b       *blob.Bucket
	now     time.Time
	mods    map[string]time.Time // present objects → modification time (zero: unknown)
	staged  map[string]string    // path → key
	commits []commit
	writers []simWriter
	other   simWriter // the writer of data2/
	pend    []pending
	paths   int
	dir     string
	// back sets the GC host's clock this far behind the model's for the
	// next marks: their cutoff can be before the previous run's.
	back time.Duration
	// revived counts the objects staged again after no one referenced them.
	revived int
	// partsOn makes commits sets of immutable parts (see keepindex_test.go),
	// drawn from pr so that the other tests' sequences stay as they were.
	partsOn bool
	pr      *rand.Rand
	parts   [][]string // sorted keys; part i's ID is partID(i)
}

func newGCModel(t *testing.T, seed uint64, flat, slices bool) *gcModel {
	m := &gcModel{
		t: t, r: rand.New(rand.NewPCG(seed, 11)), ctx: context.Background(),
		base: memblob.OpenBucket(nil), now: t0.Add(-30 * 24 * time.Hour),
		mods: map[string]time.Time{}, staged: map[string]string{}, dir: t.TempDir(),
	}
	m.b = newTestBucket(m.base, &testDriver{modTime: func(key string) time.Time { return m.mods[key] }})
	if flat {
		// The old flat layout: top-level objects, some still referenced by
		// a commit that expires in a few days; and a folder that is not a
		// slice.
		var old []string
		for i := range 40 {
			key := randXID(m.r, m.now.Add(-time.Duration(100+i)*time.Hour))
			if i%5 == 0 {
				key = "data/legacy/" + key
			}
			m.put(key, m.now.Add(-time.Duration(100+i)*time.Hour))
			if i%2 == 0 {
				old = append(old, key)
			}
		}
		m.commits = append(m.commits, commit{keys: old, expires: m.now.Add(time.Duration(2+m.r.IntN(100)) * time.Hour)})
	}
	if slices {
		m.writers = []simWriter{{}, {}, {}}
	}
	// Another data prefix in the same namespace, for runs of another
	// prefix: recent slices, so that a run of it has a newest slice.
	for i := range 3 {
		at := m.now.Add(-time.Duration(10*i) * time.Hour)
		m.put("data2/"+randDescendingName(m.r, at)+"/"+randXID(m.r, at), at)
	}
	return m
}

func (m *gcModel) put(key string, mod time.Time) {
	require.NoError(m.t, m.base.WriteAll(m.ctx, key, []byte("x"), nil))
	m.mods[key] = mod
}

// handout returns a new address of writer w, rolling its slice over after
// the interval.
func (m *gcModel) handout(w int) string {
	return m.handoutIn("data/", &m.writers[w])
}

func (m *gcModel) handoutIn(prefix string, wr *simWriter) string {
	if wr.slice == "" || !m.now.Before(wr.start.Add(simInterval)) {
		wr.start = m.now
		wr.slice = randDescendingName(m.r, m.now)
	}
	return prefix + wr.slice + "/" + randXID(m.r, m.now)
}

// keep returns the keep set: staged keys and those of unexpired commits.
func (m *gcModel) keep() []string {
	set := map[string]bool{}
	for _, k := range m.staged {
		set[k] = true
	}
	for _, c := range m.commits {
		if m.now.Before(c.expires) {
			for _, k := range c.keys {
				set[k] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// advance moves the clock by d in steps, uploading what is due.
func (m *gcModel) advance(d time.Duration) {
	end := m.now.Add(d)
	for m.now.Before(end) {
		m.now = m.now.Add(time.Duration(5+m.r.IntN(40)) * time.Minute)
		if m.now.After(end) {
			m.now = end
		}
		m.churn()
		var left []pending
		for _, p := range m.pend {
			if p.at.After(m.now) {
				left = append(left, p)
				continue
			}
			mod := p.at
			if p.noTime {
				mod = time.Time{}
			}
			m.put(p.key, mod)
			if p.path != "" {
				m.staged[p.path] = p.key // linked: an upload or an overwrite
			}
		}
		m.pend = left
	}
}

// churn is what the host does in a few minutes.
func (m *gcModel) churn() {
	r := m.r
	if len(m.writers) > 0 {
		for w := range m.writers {
			// Writers hand out addresses at different rates: a slow one
			// leaves slices with long gaps between uploads, so that an
			// upload late in the link TTL can be the only one since a run
			// listed the slice.
			rate := []int{60, 30, 4}[w%3]
			wr := m.writers[w]
			late := w%3 == 2 && wr.slice != "" && m.now.After(wr.start.Add(simInterval-45*time.Minute)) && m.now.Before(wr.start.Add(simInterval))
			if late {
				rate = 40 // and its uploads come late: see below
			}
			if r.IntN(100) >= rate {
				continue
			}
			p := pending{key: m.handout(w)}
			// Uploads come up to the link TTL after the handout, often
			// late in it.
			switch r.IntN(3) + 2*b2i(late) {
			case 0:
				p.at = m.now
			case 1:
				p.at = m.now.Add(time.Duration(r.Int64N(int64(simTTL))))
			default:
				p.at = m.now.Add(simTTL - time.Duration(r.Int64N(int64(time.Hour))))
			}
			p.noTime = r.IntN(50) == 0
			switch {
			case r.IntN(4) == 0: // abandoned: garbage once old
			case len(m.staged) > 0 && r.IntN(3) == 0: // an overwrite
				p.path = pick(r, slices.Sorted(maps.Keys(m.staged)))
			default:
				m.paths++
				p.path = "p" + strconv.Itoa(m.paths)
			}
			m.pend = append(m.pend, p)
		}
		if r.IntN(3) == 0 { // a host writing under another prefix too
			m.put(m.handoutIn("data2/", &m.other), m.now)
		}
	}
	paths := slices.Sorted(maps.Keys(m.staged))
	switch r.IntN(8) {
	case 0, 1: // a commit of some staged paths, which expires later
		var c commit
		for _, p := range paths {
			if r.IntN(2) == 0 {
				c.keys = append(c.keys, m.staged[p])
				delete(m.staged, p)
			}
		}
		c.expires = m.now.Add(time.Duration(1+r.IntN(96)) * time.Hour)
		if m.partsOn {
			c = m.partsCommit(c)
		}
		m.commits = append(m.commits, c)
	case 2: // unstaged
		if len(paths) > 0 {
			delete(m.staged, pick(r, paths))
		}
	case 3: // a shallow copy of a live object, maybe in an old slice
		if keep := m.keep(); len(keep) > 0 {
			m.paths++
			m.staged["p"+strconv.Itoa(m.paths)] = pick(r, keep)
		}
	case 5: // an object no one references is staged again (a revert,
		// an undo): live again, maybe in a slice an optimized run skips,
		// maybe among the candidates of a run that was not swept
		if r.IntN(2) == 0 {
			keep := m.keep()
			var dead []string
			for _, k := range slices.Sorted(maps.Keys(m.mods)) {
				if _, ok := slices.BinarySearch(keep, k); !ok && strings.HasPrefix(k, "data/") {
					dead = append(dead, k)
				}
			}
			if len(dead) > 0 {
				m.paths++
				m.staged["p"+strconv.Itoa(m.paths)] = pick(r, dead)
				m.revived++
			}
		}
	case 6:
		if m.partsOn {
			m.partsChurn()
		}
	case 4: // an object removed from the store by hand
		if r.IntN(4) == 0 && len(m.mods) > 0 {
			k := pick(r, slices.Sorted(maps.Keys(m.mods)))
			require.NoError(m.t, m.base.Delete(m.ctx, k))
			delete(m.mods, k)
		}
	}
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func (m *gcModel) opts(extra ...MarkOption) []MarkOption {
	now := m.now.Add(-m.back)
	return append([]MarkOption{
		WithClock(func() time.Time { return now }), WithLinkTTL(simTTL), WithMinAge(simTTL),
		WithTempDir(m.dir), WithMemoryBudget(64 << 10), WithListConcurrency(3), WithSliceMargin(simMargin),
	}, extra...)
}

func (m *gcModel) mark(runID string, extra ...MarkOption) (*Summary, []string) {
	keep := m.keep()
	sum, err := Mark(m.ctx, m.b, runID, Inputs{Uncommitted: seqOf(keep[:len(keep)/2]), Committed: seqOf(keep[len(keep)/2:]), ExportStart: m.now.Add(-m.back)}, m.opts(extra...)...)
	require.NoError(m.t, err)
	return sum, collect(m.t, Candidates(m.ctx, m.b, DefaultStoragePrefix, runID))
}

// TestOptimizedMatchesClean runs sequences of GC runs over a churning
// namespace: at every step an optimized run (starting from the previous
// optimized run, or sometimes from the clean run, a run of another data
// prefix, or a run with another margin) and a clean run mark at the same
// moment; the optimized run's candidates that exist must be exactly the
// clean run's (so a subset: it deletes no object the clean run keeps, and
// finds all garbage the clean run finds). Optimized runs are swept or not at
// random. LAKEGC_OPT_SEEDS=n runs n sequences per layout (default 2, 1
// under the race detector or with -short).
func TestOptimizedMatchesClean(t *testing.T) {
	seeds, steps := 2, 30
	if testing.Short() || raceEnabled {
		seeds = 1
	}
	if s := os.Getenv("LAKEGC_OPT_SEEDS"); s != "" {
		var err error
		seeds, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	var kinds = map[string]int{}
	var skipped, carriedMarks, stepsRun, revived int64
	for _, layout := range []struct {
		name         string
		flat, slices bool
		flatSteps    int // steps with the flat layout only
	}{
		{"slices", false, true, 0},
		{"mixed", true, true, 0},
		{"flat-then-slices", true, true, 4},
	} {
		for seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed%d", layout.name, seed), func(t *testing.T) {
				m := newGCModel(t, uint64(seed), layout.flat, layout.slices && layout.flatSteps == 0)
				prevOpt, prevClean := "", ""
				for step := range steps {
					if step == layout.flatSteps && len(m.writers) == 0 && layout.slices {
						m.writers = []simWriter{{}, {}, {}}
					}
					m.advance(time.Duration(1+m.r.IntN(10)) * time.Hour)
					clean := fmt.Sprintf("c%03d", step)
					opt := fmt.Sprintf("o%03d", step)
					prev := prevOpt
					m.back = 0
					if m.r.IntN(8) == 0 {
						// The GC host's clock is behind: this step's cutoffs
						// may be before the previous run's.
						m.back = time.Duration(1+m.r.IntN(48)) * time.Hour
					}
					switch m.r.IntN(12) {
					case 0:
						prev = prevClean
					case 1: // a run of another data prefix
						other := fmt.Sprintf("d%03d", step)
						m.mark(other, WithDataPrefix("data2"))
						prev = other
					case 2: // a run with another margin
						other := fmt.Sprintf("m%03d", step)
						m.mark(other, WithPrevious(prevOpt), WithSliceMargin(simTTL+3*simInterval))
						prev = other
					}
					_, want := m.mark(clean)
					sum, got := m.mark(opt, WithPrevious(prev), WithCleanEvery(1000))
					kinds[sum.RunKind]++
					skipped += sum.SlicesSkipped
					stepsRun++
					var present []string
					for _, k := range got {
						if _, ok := m.mods[k]; ok {
							present = append(present, k)
						}
					}
					if extra, missed := diff(present, want), diff(want, present); len(extra)+len(missed) > 0 {
						t.Fatalf("step %d: optimized run %s (%s, previous %s %s, %d slices skipped) marks %d objects the clean run keeps %q and misses %d it marks %q",
							step, opt, sum.RunKind, prev, sum.CleanReason, sum.SlicesSkipped, len(extra), extra[:min(3, len(extra))], len(missed), missed[:min(3, len(missed))])
					}
					carriedMarks += int64(len(got))
					if m.r.IntN(5) < 3 {
						res, err := Sweep(m.ctx, m.b, opt, sweepOpts(m.opts())...)
						require.NoError(t, err)
						require.Zero(t, res.Failed+res.Refused)
						for _, k := range got {
							delete(m.mods, k)
						}
					}
					prevOpt, prevClean = opt, clean
				}
				revived += int64(m.revived)
			})
		}
	}
	t.Logf("%d steps: run kinds %v, %d slices skipped, %d candidates, %d objects staged again", stepsRun, kinds, skipped, carriedMarks, revived)
	// The test must exercise optimized runs that skip slices.
	require.Greater(t, kinds[RunOptimized], kinds[RunClean])
	require.Positive(t, skipped)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// diff returns the keys of a (sorted) that are not in b.
func diff(a, b []string) []string {
	var out []string
	for _, k := range a {
		if _, ok := slices.BinarySearch(b, k); !ok {
			out = append(out, k)
		}
	}
	return out
}

// TestOptimizedRefuses: a previous run that cannot be trusted makes a clean
// run that says why, with the clean run's candidates.
func TestOptimizedRefuses(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) *gcModel {
		m := newGCModel(t, 7, true, true)
		m.advance(40 * time.Hour)
		m.mark("prev")
		m.advance(5 * time.Hour)
		return m
	}
	dir := reportDir(DefaultStoragePrefix, "prev")
	for _, tc := range []struct {
		name   string
		break_ func(m *gcModel)
		opts   []MarkOption
		reason string
	}{
		{"no state", func(m *gcModel) { require.NoError(t, m.base.Delete(ctx, dir+stateName)) }, nil, "records"},
		{"no committed index", func(m *gcModel) { require.NoError(t, m.base.Delete(ctx, dir+indexName)) }, nil, "committed index"},
		{"no staged index", func(m *gcModel) { require.NoError(t, m.base.Delete(ctx, dir+stagedName)) }, nil, "staged index"},
		{"corrupt committed index", func(m *gcModel) {
			b, err := m.base.ReadAll(ctx, dir+indexName)
			require.NoError(t, err)
			b[len(b)/2] ^= 1
			require.NoError(t, m.base.WriteAll(ctx, dir+indexName, b, nil))
		}, nil, "committed index"},
		{"corrupt staged index", func(m *gcModel) {
			b, err := m.base.ReadAll(ctx, dir+stagedName)
			require.NoError(t, err)
			b[len(b)/2] ^= 1
			require.NoError(t, m.base.WriteAll(ctx, dir+stagedName, b, nil))
		}, nil, "staged index"},
		{"staged index of another run", func(m *gcModel) {
			m.mark("other")
			b, err := m.base.ReadAll(ctx, reportDir(DefaultStoragePrefix, "other")+stagedName)
			require.NoError(t, err)
			require.NoError(t, m.base.WriteAll(ctx, dir+stagedName, b, nil))
		}, nil, "another run's"},
		{"committed index of another run", func(m *gcModel) {
			m.mark("other")
			b, err := m.base.ReadAll(ctx, reportDir(DefaultStoragePrefix, "other")+indexName)
			require.NoError(t, err)
			require.NoError(t, m.base.WriteAll(ctx, dir+indexName, b, nil))
		}, nil, "another run's"},
		{"records of version 2", func(m *gcModel) {
			b, err := m.base.ReadAll(ctx, dir+stateName)
			require.NoError(t, err)
			b = bytes.Replace(b, []byte(`"version":3`), []byte(`"version":2`), 1)
			require.NoError(t, m.base.WriteAll(ctx, dir+stateName, b, nil))
		}, nil, "version 2"},
		{"failed", func(m *gcModel) {
			require.NoError(t, m.base.WriteAll(ctx, dir+"summary.json", []byte(`{"run_id":"prev","success":false}`), nil))
		}, nil, "failed"},
		{"no such run", func(m *gcModel) {}, []MarkOption{WithPrevious("nope")}, "no such run"},
		{"other min age", func(m *gcModel) {}, []MarkOption{WithMinAge(simTTL + time.Hour)}, "min age"},
		{"other margin", func(m *gcModel) {}, []MarkOption{WithSliceMargin(simMargin + time.Second)}, "margin"},
		{"other storage prefix", func(m *gcModel) {
			b, err := m.base.ReadAll(ctx, dir+stateName)
			require.NoError(t, err)
			b = bytes.Replace(b, []byte(`"_lakefs"`), []byte(`"_other"`), 1)
			require.NoError(t, m.base.WriteAll(ctx, dir+stateName, b, nil))
		}, nil, "storage prefix"},
		// The cutoff and the newest slice are the summary's (state.json
		// does not repeat them): a summary that lacks them is refused.
		{"no cutoff", func(m *gcModel) { editSummary(t, m, "prev", "cutoff_time", "") }, nil, "no cutoff"},
		{"no first slice", func(m *gcModel) { editSummary(t, m, "prev", "first_slice", "") }, nil, "listed no slice"},
		{"first slice not a slice", func(m *gcModel) { editSummary(t, m, "prev", "first_slice", "nope") }, nil, "not a slice"},
		{"clean every", func(m *gcModel) {}, []MarkOption{WithCleanEvery(1)}, "clean run every 1"},
		{"chain too long", func(m *gcModel) {
			b, err := m.base.ReadAll(ctx, dir+stateName)
			require.NoError(t, err)
			b = bytes.Replace(b, []byte(`"runs_since_clean":0`), []byte(`"runs_since_clean":9223372036854775807`), 1)
			require.NoError(t, m.base.WriteAll(ctx, dir+stateName, b, nil))
		}, nil, "clean run every"},
		// The GC host's clock went back: objects the previous run judged
		// old may be young now, and only a listing sees their age.
		{"earlier cutoff", func(m *gcModel) { m.back = 40 * time.Hour }, nil, "before the previous run's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := setup(t)
			tc.break_(m)
			_, want := m.mark("clean")
			sum, got := m.mark("next", append([]MarkOption{WithPrevious("prev")}, tc.opts...)...)
			require.Equal(t, RunClean, sum.RunKind)
			require.Contains(t, sum.CleanReason, tc.reason)
			require.Zero(t, sum.SlicesSkipped)
			if tc.name != "other min age" {
				require.Equal(t, want, got)
			}
		})
	}
	// The same previous run, untouched, is used.
	m := setup(t)
	sum, _ := m.mark("next", WithPrevious("prev"))
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Equal(t, "prev", sum.PreviousRunID)
	require.Positive(t, sum.SlicesSkipped)
	require.Positive(t, sum.SlicesListed)
}

// editSummary sets one field of run id's summary.json.
func editSummary(t *testing.T, m *gcModel, id, field string, value any) {
	t.Helper()
	key := reportDir(DefaultStoragePrefix, id) + "summary.json"
	b, err := m.base.ReadAll(m.ctx, key)
	require.NoError(t, err)
	var j map[string]any
	require.NoError(t, json.Unmarshal(b, &j))
	require.Contains(t, j, field)
	j[field] = value
	b, err = json.Marshal(j)
	require.NoError(t, err)
	require.NoError(t, m.base.WriteAll(m.ctx, key, b, nil))
}

// TestOptimizedRelistsYoungSlices: a slice where the previous run kept an
// object for its age (here: of unknown age) is listed again.
func TestOptimizedRelistsYoungSlices(t *testing.T) {
	m := newGCModel(t, 3, false, true)
	m.advance(40 * time.Hour)
	old := "data/" + randDescendingName(m.r, m.now.Add(-35*time.Hour)) + "/" + objID(1)
	m.put(old, time.Time{}) // unknown age: kept
	_, got := m.mark("prev")
	require.NotContains(t, got, old)
	st, err := readState(m.ctx, m.b, reportDir(DefaultStoragePrefix, "prev"))
	require.NoError(t, err)
	require.Contains(t, st.YoungSlices, old[5:25])
	// Now its age is known, and it is old: only a run that lists it again
	// marks it.
	m.mods[old] = m.now.Add(-35 * time.Hour)
	m.advance(5 * time.Hour)
	sum, got := m.mark("next", WithPrevious("prev"))
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Contains(t, got, old)
}

func TestLatestRun(t *testing.T) {
	m := newGCModel(t, 5, false, true)
	id, err := LatestRun(m.ctx, m.b, "")
	require.NoError(t, err)
	require.Empty(t, id)
	m.advance(30 * time.Hour)
	m.mark("zzz-first")
	m.advance(time.Hour)
	m.mark("aaa-second")
	id, err = LatestRun(m.ctx, m.b, DefaultStoragePrefix)
	require.NoError(t, err)
	require.Equal(t, "aaa-second", id)
	// Unreadable: say so rather than pick an older run.
	require.NoError(t, m.base.WriteAll(m.ctx, reportDir(DefaultStoragePrefix, "bad")+"summary.json", []byte("{"), nil))
	_, err = LatestRun(m.ctx, m.b, "")
	require.ErrorContains(t, err, "bad/summary.json")
	require.ErrorIs(t, err, ErrInvalidInput)
}

// TestWasSwept: only a sweep.json that says nothing failed or was refused
// lets a run skip judging the previous run's candidates again; a missing,
// unreadable or impossible one does not, and the reason says which.
func TestWasSwept(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	m := &marker{bucket: b, cfg: newMarkConfig(nil)}
	dir := reportDir(DefaultStoragePrefix, "r")
	swept, why := m.wasSwept(ctx, dir)
	require.False(t, swept)
	require.Equal(t, "not swept", why)
	for _, tc := range []struct {
		json, why string
	}{
		{`{"deleted":3,"already_gone":1,"failed":0,"refused":0}`, ""},
		{`{"deleted":3,"failed":1}`, "1 failed"},
		{`{"deleted":3,"refused":2}`, "2 refused"},
		{`{"deleted":-1}`, "negative count"},
		{`{"already_gone":-1}`, "negative count"},
		{`{"failed":-1}`, "negative count"},
		{`{`, "sweep.json: "},
	} {
		require.NoError(t, b.WriteAll(ctx, dir+"sweep.json", []byte(tc.json), nil))
		swept, why := m.wasSwept(ctx, dir)
		require.Equal(t, tc.why == "", swept, tc.json)
		if tc.why == "" {
			require.Empty(t, why, tc.json)
		} else {
			require.Contains(t, why, tc.why, tc.json)
		}
	}
}
