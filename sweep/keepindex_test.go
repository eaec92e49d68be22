package sweep

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The model of a repository whose commits are sets of immutable parts, as
// lakeFS's metaranges are sets of ranges: a commit shares most parts with
// its parent, replaces a few by changed copies, reuses parts of old (even
// expired) commits, and branches are reset to old commits.

func partID(i int) string { return fmt.Sprintf("range-%05d", i) }

// newPart adds a part of keys and returns its index.
func (m *gcModel) newPart(keys []string) int {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	m.parts = append(m.parts, slices.Compact(keys))
	return len(m.parts) - 1
}

// partsCommit makes c, a commit of newly committed keys, a commit of parts:
// most of its parent's parts, a changed copy of one of them, a few old
// parts, and the new keys in new parts, some keys in two parts.
func (m *gcModel) partsCommit(c commit) commit {
	r := m.pr
	var ps []int
	if n := len(m.commits); n > 0 && r.IntN(5) != 0 {
		for _, p := range m.commits[n-1].parts {
			if r.IntN(8) != 0 {
				ps = append(ps, p)
			}
		}
	}
	if len(ps) > 0 && r.IntN(2) == 0 {
		// A changed range: most of an old part's keys, and some new ones.
		i := r.IntN(len(ps))
		old := m.parts[ps[i]]
		var keys []string
		for _, k := range old {
			if r.IntN(6) != 0 {
				keys = append(keys, k)
			}
		}
		take := r.IntN(len(c.keys) + 1)
		keys = append(keys, c.keys[:take]...)
		ps[i] = m.newPart(keys)
		c.keys = c.keys[take:]
	}
	for range r.IntN(3) {
		if len(m.parts) > 0 {
			ps = append(ps, r.IntN(len(m.parts)))
		}
	}
	if len(c.keys) > 0 {
		n := 1 + r.IntN(3)
		groups := make([][]string, n)
		for _, k := range c.keys {
			g := r.IntN(n)
			groups[g] = append(groups[g], k)
			if r.IntN(10) == 0 {
				groups[(g+1)%n] = append(groups[(g+1)%n], k)
			}
		}
		for _, g := range groups {
			if len(g) > 0 || r.IntN(10) == 0 { // an empty part now and then
				ps = append(ps, m.newPart(g))
			}
		}
	}
	return m.commitOf(ps, c.expires)
}

// commitOf is the commit of parts ps.
func (m *gcModel) commitOf(ps []int, expires time.Time) commit {
	slices.Sort(ps)
	ps = slices.Compact(ps)
	set := map[string]bool{}
	for _, p := range ps {
		for _, k := range m.parts[p] {
			set[k] = true
		}
	}
	return commit{keys: slices.Sorted(maps.Keys(set)), expires: expires, parts: ps}
}

// partsChurn resets a branch to an old commit, maybe expired: its parts are
// live again.
func (m *gcModel) partsChurn() {
	r := m.pr
	if len(m.commits) == 0 {
		return
	}
	old := m.commits[r.IntN(len(m.commits))]
	m.commits = append(m.commits, m.commitOf(slices.Clone(old.parts), m.now.Add(time.Duration(1+r.IntN(96))*time.Hour)))
}

// partsFromFlat gives the commits made before partsOn a part each.
func (m *gcModel) partsFromFlat() {
	for i, c := range m.commits {
		if c.parts == nil {
			m.commits[i] = m.commitOf([]int{m.newPart(c.keys)}, c.expires)
		}
	}
}

// staged returns the staged keys; committed the keys and the IDs of the
// parts of the unexpired commits.
func (m *gcModel) stagedKeys() []string {
	return slices.Sorted(maps.Values(m.staged))
}

func (m *gcModel) committed() ([]string, []string) {
	keys, ids := map[string]bool{}, map[string]bool{}
	for _, c := range m.commits {
		if m.now.Before(c.expires) {
			for _, k := range c.keys {
				keys[k] = true
			}
			for _, p := range c.parts {
				ids[partID(p)] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(keys)), slices.Sorted(maps.Keys(ids))
}

// How a host fails to serve the parts that are not current any more.
const (
	keepAll   = iota // every part it ever made can be opened
	lostErr          // an error
	lostEmpty        // no keys: a cache that lost the part and says nothing
	lostOther        // the keys of another part: an ID given to other keys
)

// hostParts is the host's Parts, each ID of ids given once or more, in any
// order: every part it ever made can be opened, unless lost says how it
// serves the parts not in ids.
func (m *gcModel) hostParts(ids []string, lost int, opened *int) *Parts {
	current := map[string]bool{}
	for _, id := range ids {
		current[id] = true
	}
	given := append(slices.Clone(ids), ids[:m.pr.IntN(len(ids)+1)]...)
	given = shuffled(m.pr, given)
	// Read one at a time or several at once.
	return &Parts{IDs: given, ReadAhead: m.pr.IntN(5), Open: func(_ context.Context, id string) iter.Seq2[string, error] {
		*opened++
		i, err := strconv.Atoi(id[len("range-"):])
		if err != nil || i >= len(m.parts) {
			return func(yield func(string, error) bool) { yield("", errors.New("no range "+id)) }
		}
		if !current[id] {
			switch lost {
			case lostErr:
				return func(yield func(string, error) bool) { yield("", errors.New("no range "+id)) }
			case lostEmpty:
				return seqOf(nil)
			case lostOther:
				return seqOf(m.parts[(i+1)%len(m.parts)])
			}
		}
		return seqOf(m.parts[i])
	}}
}

// shuffled returns keys in a random order.
func shuffled(r *rand.Rand, keys []string) []string {
	keys = slices.Clone(keys)
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

// minus returns the keys of a (sorted) not in b (sorted).
func minus(a, b []string) []string { return diff(a, b) }

// hostAddresses is the multiset of addresses a flat host gives for the
// unexpired commits, sorted: each commit's keys, a key of several commits
// once for each, and some keys of a commit twice (a second spelling of the
// same key, as a relative and a full address are), plus extra, more
// spellings of committed keys.
func (m *gcModel) hostAddresses(extra map[string]int) []string {
	var out []string
	for i, c := range m.commits {
		if !m.now.Before(c.expires) {
			continue
		}
		for _, k := range c.keys {
			out = append(out, k)
			if (crc32.ChecksumIEEE([]byte(k))+uint32(i))%6 == 0 {
				out = append(out, k)
			}
		}
	}
	for k, n := range extra {
		for range n {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// multisetMinus returns a − b, multisets as sorted slices with repeats.
func multisetMinus(a, b []string) []string {
	var out []string
	for len(a) > 0 {
		switch {
		case len(b) == 0 || a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case a[0] == b[0]:
			a, b = a[1:], b[1:]
		default:
			b = b[1:]
		}
	}
	return out
}

// churnSpellings adds or drops extra spellings of committed keys: one
// more spelling of a key that already has others, or one less of a key
// that keeps others; a key no longer committed loses its extra spellings.
func churnSpellings(r *rand.Rand, extra map[string]int, keys []string) {
	for k := range extra {
		if _, ok := slices.BinarySearch(keys, k); !ok {
			delete(extra, k)
		}
	}
	if len(keys) > 0 && r.IntN(2) == 0 {
		extra[keys[r.IntN(len(keys))]]++
	}
	if len(extra) > 0 && r.IntN(3) == 0 {
		ks := slices.Sorted(maps.Keys(extra))
		k := ks[r.IntN(len(ks))]
		if extra[k]--; extra[k] == 0 {
			delete(extra, k)
		}
	}
}

// TestKeepIndexMatchesClean runs sequences of GC runs over a churning
// repository whose commits are sets of parts: at every step an optimized
// run, given the committed keep set as parts (only the parts that changed
// are read), as Committed with Changes since its previous run, as Committed
// alone, or with Changes since another run, marks at the same moment as a
// clean run given the flat keep set (as a set, or as the host's addresses);
// the optimized run's candidates that exist must be exactly the clean
// run's, and none may be live. A flat host gives an address once for each
// commit that holds it, some twice (two spellings of one key), and
// spellings are added and dropped while the key stays committed: Changes
// are the multiset difference of the addresses since the previous run,
// with now and then a key both added and removed. Now and then the changes
// contradict the index (remove a key no longer given, or never given): the
// run must fail with ErrInvalidInput and mark nothing, and the next one is
// clean. Between
// steps the previous run's records are damaged now and then (a byte
// flipped, cut short, removed), and the host may forget the parts that left
// the set: the run must fall back (clean, or counting every part) and stay
// exact. Objects uploaded into old slices later than the margin allows are
// garbage only a clean run finds: the optimized run may miss them, and
// nothing else. LAKEGC_INDEX_SEEDS=n runs n sequences per layout (default 3, 1
// under the race detector or with -short), LAKEGC_INDEX_STEPS=n makes each n
// steps long (default 40): a longer chain of optimized runs.
func TestKeepIndexMatchesClean(t *testing.T) {
	seeds, steps := 3, 40
	if testing.Short() || raceEnabled {
		seeds = 1
	}
	if s := os.Getenv("LAKEGC_INDEX_SEEDS"); s != "" {
		var err error
		seeds, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	if s := os.Getenv("LAKEGC_INDEX_STEPS"); s != "" {
		var err error
		steps, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	sources := map[string]int{}
	kinds := map[string]int{}
	var stepsRun, damaged, damagedClean, partsRead, partsTotal, recounts, lateUploads, lateMisses, contradictions, heldRemoved int
	var copied, decoded int64
	for _, layout := range []struct {
		name string
		flat bool
	}{{"slices", false}, {"mixed", true}} {
		for seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed%d", layout.name, seed), func(t *testing.T) {
				m := newGCModel(t, uint64(1000+seed), layout.flat, true)
				m.partsOn, m.pr = true, rand.New(rand.NewPCG(uint64(seed), 28))
				m.partsFromFlat()
				r := m.pr
				committedAt := map[string][]string{} // the host's addresses at each run
				extra := map[string]int{}            // more spellings of committed keys
				late := map[string]bool{}            // uploaded into a slice later than the margin allows
				prevOpt := ""
				prevFlat := false // the previous optimized run was given Committed
				for step := range steps {
					m.advance(time.Duration(1+r.IntN(10)) * time.Hour)
					if r.IntN(6) == 0 {
						// A late upload into a slice days old: garbage
						// only a clean run sees, or, staged, live.
						at := m.now.Add(-time.Duration(3+r.IntN(5)) * 24 * time.Hour)
						k := "data/" + randDescendingName(r, at) + "/" + randXID(r, at)
						m.put(k, m.now)
						late[k] = true
						if r.IntN(3) == 0 {
							m.paths++
							m.staged["late"+strconv.Itoa(m.paths)] = k
						}
						lateUploads++
					}
					m.back = 0
					if r.IntN(10) == 0 {
						m.back = time.Duration(1+r.IntN(48)) * time.Hour
					}
					staged := m.stagedKeys()
					keys, ids := m.committed()
					churnSpellings(r, extra, keys)
					addrs := m.hostAddresses(extra)
					require.Equal(t, keys, slices.Compact(slices.Clone(addrs)))
					damage := ""
					if prevOpt != "" && r.IntN(8) == 0 {
						if damage = m.damageRecords(prevOpt); damage != "" {
							damaged++
						}
					}
					clean, opt := fmt.Sprintf("c%03d", step), fmt.Sprintf("o%03d", step)
					in := Inputs{Uncommitted: seqOf(staged), Committed: seqOf(keys), ExportStart: m.now.Add(-m.back)}
					if r.IntN(2) == 0 {
						in.Committed = seqOf(shuffled(r, addrs))
					}
					_, err := Mark(m.ctx, m.b, clean, in, m.opts()...)
					require.NoError(t, err)
					want := collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, clean))
					in.Committed = seqOf(shuffled(r, addrs))
					opened := 0
					contradicts := false
					mode := r.IntN(10)
					if prevFlat && mode < 6 && mode%2 == 1 {
						mode = 6 // after a flat run, changes more often
					}
					held := 0
					switch {
					case mode < 6: // parts
						in.Committed = nil
						lost := keepAll
						if r.IntN(6) == 0 {
							lost = 1 + r.IntN(3)
						}
						in.Parts = m.hostParts(ids, lost, &opened)
					case mode < 8: // changes since the previous run
						then := committedAt[prevOpt]
						added, removed := multisetMinus(addrs, then), multisetMinus(then, addrs)
						if len(keys) > 0 && r.IntN(4) == 0 { // in both: neither
							k := keys[r.IntN(len(keys))]
							added, removed = append(added, k), append(removed, k)
						}
						if r.IntN(10) == 0 {
							// A key removed that is not given now: one
							// given at the previous run, or never.
							contradicts = true
							k := "data/never/" + strconv.Itoa(step)
							if gone := minus(then, keys); len(gone) > 0 && r.IntN(2) == 0 {
								k = gone[r.IntN(len(gone))]
							}
							removed = append(removed, k)
						}
						for _, k := range removed {
							if _, ok := slices.BinarySearch(addrs, k); ok {
								held++ // a spelling removed, the key still given
							}
						}
						in.Changes = &Changes{Since: prevOpt, Added: seqOf(shuffled(r, added)), Removed: seqOf(shuffled(r, removed))}
						if prevOpt == "" {
							in.Changes, contradicts = nil, false
						}
					case mode < 9: // changes since another run: not used
						in.Changes = &Changes{Since: clean, Added: func(func(string, error) bool) { panic("read") }, Removed: seqOf(nil)}
					}
					sum, err := Mark(m.ctx, m.b, opt, in, m.opts(WithPrevious(prevOpt), WithCleanEvery(1000))...)
					committedAt[opt] = addrs
					if contradicts && (err != nil || sum.KeepSource == KeepChanges) {
						// Unused (a clean run), the changes cannot fail it.
						require.ErrorIs(t, err, ErrInvalidInput, "step %d: changes that contradict the index", step)
						require.ErrorContains(t, err, "contradict")
						require.Empty(t, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, opt)))
						contradictions++
						prevOpt, prevFlat = opt, false // the next run is clean
						continue
					}
					require.NoError(t, err)
					prevFlat = in.Parts == nil
					if sum.KeepSource == KeepChanges {
						heldRemoved += held
					}
					got := collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, opt))
					kinds[sum.RunKind]++
					sources[sum.KeepSource]++
					copied += sum.IndexBlocksCopied
					decoded += sum.IndexBlocksDecoded
					stepsRun++
					if sum.KeepSource == KeepPartsChanged {
						partsRead += opened
						partsTotal += len(ids)
					}
					if sum.RunKind == RunOptimized && sum.KeepSource == KeepParts {
						recounts++
					}
					if damage != "" && sum.RunKind == RunClean {
						damagedClean++
					}
					live := append(slices.Clone(staged), keys...)
					slices.Sort(live)
					if bad := diff(got, minus(got, live)); len(bad) > 0 {
						t.Fatalf("step %d: optimized run %s (%s, %s) marks live keys %q", step, opt, sum.RunKind, sum.KeepSource, bad[:min(3, len(bad))])
					}
					var present []string
					for _, k := range got {
						if _, ok := m.mods[k]; ok {
							present = append(present, k)
						}
					}
					missed := diff(want, present)
					var lateMissed int
					for _, k := range missed {
						if late[k] {
							lateMissed++
						}
					}
					lateMisses += lateMissed
					if lateMissed == len(missed) {
						missed = nil
					}
					if extra := diff(present, want); len(extra)+len(missed) > 0 {
						t.Fatalf("step %d: optimized run %s (%s, %s, previous %s %s, damage %q) marks %d objects the clean run keeps %q and misses %d it marks %q",
							step, opt, sum.RunKind, sum.KeepSource, prevOpt, sum.CleanReason, damage, len(extra), extra[:min(3, len(extra))], len(missed), missed[:min(3, len(missed))])
					}
					if r.IntN(5) < 3 {
						res, err := Sweep(m.ctx, m.b, opt, sweepOpts(m.opts())...)
						require.NoError(t, err)
						require.Zero(t, res.Failed+res.Refused)
						for _, k := range got {
							delete(m.mods, k)
						}
					}
					prevOpt = opt
				}
			})
		}
	}
	t.Logf("%d steps: run kinds %v, keep sources %v; parts-changed runs read %d parts of %d; %d optimized runs counted every part; %d damaged records, %d then clean; %d late uploads, missed %d times by optimized runs; %d changes contradicted the index; %d removed spellings of keys still given; committed index blocks %d copied, %d decoded",
		stepsRun, kinds, sources, partsRead, partsTotal, recounts, damaged, damagedClean, lateUploads, lateMisses, contradictions, heldRemoved, copied, decoded)
	require.Positive(t, copied, "blocks of the committed index copied whole")
	require.Greater(t, kinds[RunOptimized], kinds[RunClean])
	require.Positive(t, sources[KeepPartsChanged])
	require.Positive(t, sources[KeepChanges])
	require.Positive(t, contradictions)
	require.Positive(t, heldRemoved)
	require.Positive(t, recounts)
	require.Positive(t, damaged)
	require.Equal(t, damaged, damagedClean, "a damaged record makes a clean run")
	require.Less(t, partsRead, partsTotal/2, "a parts-changed run reads what changed")
}

// damageRecords damages the records of run id: flips a byte of, cuts or
// removes its committed index, staged index or parts record. It says what
// it did.
func (m *gcModel) damageRecords(id string) string {
	r := m.pr
	dir := reportDir(DefaultStoragePrefix, id)
	name := dir + indexName
	switch r.IntN(4) {
	case 0:
		name = dir + partsName
	case 1:
		name = dir + stagedName
	}
	b, err := m.base.ReadAll(m.ctx, name)
	if err != nil {
		return "" // a record of a flat keep set has no parts record
	}
	switch r.IntN(3) {
	case 0:
		b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		require.NoError(m.t, m.base.WriteAll(m.ctx, name, b, nil))
		return "flipped " + name
	case 1:
		require.NoError(m.t, m.base.WriteAll(m.ctx, name, b[:r.IntN(len(b))], nil))
		return "cut " + name
	}
	require.NoError(m.t, m.base.Delete(m.ctx, name))
	return "removed " + name
}

// partsWorld is a namespace of old objects, each in its own hourly slice,
// for the tests of what a host gets wrong.
func partsWorld(t *testing.T, n int) (*gcModel, []string) {
	m := newGCModel(t, 28, false, false)
	var keys []string
	for i := range n {
		at := m.now.Add(-time.Duration(100+i) * time.Hour)
		k := "data/" + descendingName(at) + "/" + objID(i)
		m.put(k, at)
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return m, keys
}

// TestPartChangedContent: a host that gives a part ID to other keys (here
// a removed part read again now holds a key another part still holds)
// must not make that key garbage: the run sees the part's keys differ from
// what it recorded, and counts every current part instead.
func TestPartChangedContent(t *testing.T) {
	m, keys := partsWorld(t, 6)
	parts := map[string][]string{"A": keys[0:2], "B": keys[2:4]}
	mark := func(id string, ids []string, prev string) *Summary {
		sum, err := Mark(m.ctx, m.b, id, Inputs{Uncommitted: seqOf(nil), Parts: partsOf(parts, ids, nil), ExportStart: m.now}, m.opts(WithPrevious(prev))...)
		require.NoError(t, err)
		return sum
	}
	mark("r1", []string{"A", "B"}, "")
	parts["A"] = []string{keys[0], keys[1], keys[2]} // keys[2] is B's too
	sum := mark("r2", []string{"B"}, "r1")
	require.Equal(t, []string{keys[0], keys[1], keys[4], keys[5]}, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "r2")))
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Equal(t, KeepParts, sum.KeepSource)
	// Read as recorded, the removed part takes back its keys.
	parts["A"] = keys[0:2]
	mark("r3", []string{"A", "B"}, "r2")
	sum = mark("r4", []string{"B"}, "r3")
	require.Equal(t, KeepPartsChanged, sum.KeepSource)
	require.Equal(t, int64(1), sum.PartsRead)
	require.Equal(t, []string{keys[0], keys[1], keys[4], keys[5]}, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "r4")))
}

// TestChangesContradict: changes that contradict the previous run's index
// (removing a key that was not committed, or a key more times than it was
// given) fail the run rather than delete; the next run, from the failed one,
// is clean. Adding a key already committed is no contradiction: the flat
// keep set is counted, and the key is kept until it is removed as many
// times as it was given.
func TestChangesContradict(t *testing.T) {
	m, keys := partsWorld(t, 6)
	mark := func(id, prev string, committed []string, ch *Changes) (*Summary, error) {
		return Mark(m.ctx, m.b, id, Inputs{Uncommitted: seqOf(nil), Committed: seqOf(committed), Changes: ch, ExportStart: m.now}, m.opts(WithPrevious(prev))...)
	}
	_, err := mark("r1", "", keys[:3], nil)
	require.NoError(t, err)
	for i, ch := range []*Changes{
		{Since: "r1", Added: seqOf(nil), Removed: seqOf(keys[4:5])},
		{Since: "r1", Added: seqOf(nil), Removed: seqOf([]string{keys[1], keys[1]})},
		{Since: "r1", Added: seqOf(keys[2:3]), Removed: seqOf([]string{keys[2], keys[2], keys[2]})},
	} {
		_, err = mark(fmt.Sprintf("bad%d", i), "r1", nil, ch)
		require.ErrorIs(t, err, ErrInvalidInput)
		require.ErrorContains(t, err, "contradict")
		require.Empty(t, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, fmt.Sprintf("bad%d", i))))
	}
	// Consistent changes are used; a key in both Added and Removed is
	// neither, and a key added again (keys[1]) and removed once stays.
	sum, err := mark("r2", "r1", nil, &Changes{Since: "r1",
		Added: seqOf([]string{keys[3], keys[5], keys[1]}), Removed: seqOf([]string{keys[0], keys[5], keys[1]})})
	require.NoError(t, err)
	require.Equal(t, KeepChanges, sum.KeepSource)
	require.Equal(t, []string{keys[0], keys[4], keys[5]}, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "r2")))
	// keys[2] given twice more, then removed twice: still once.
	_, err = mark("r2b", "r2", nil, &Changes{Since: "r2", Added: seqOf([]string{keys[2], keys[2]}), Removed: seqOf(nil)})
	require.NoError(t, err)
	sum, err = mark("r2c", "r2b", nil, &Changes{Since: "r2b", Added: seqOf(nil), Removed: seqOf([]string{keys[2], keys[2]})})
	require.NoError(t, err)
	require.Equal(t, KeepChanges, sum.KeepSource)
	require.Equal(t, []string{keys[0], keys[4], keys[5]}, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "r2c")))
	// From a failed run: clean, and Committed is read.
	sum, err = mark("r3", "bad0", keys[:3], &Changes{Since: "bad0", Added: seqOf(nil), Removed: seqOf(nil)})
	require.NoError(t, err)
	require.Equal(t, RunClean, sum.RunKind)
	require.Empty(t, sum.KeepSource)
}

// TestPartsVersion: a part's keys are recorded by its ID, so a host whose
// rules of spelling a part's keys change (an upgrade that also keeps a
// cleaned spelling, a namespace spelled otherwise) names the new rules with
// Parts.Version; the run after the change counts every part, and a key that
// only the new rules give (here keys[2], in part B, which is not read
// again otherwise) is kept.
func TestPartsVersion(t *testing.T) {
	m, keys := partsWorld(t, 4)
	parts := map[string][]string{"A": keys[0:1], "B": keys[1:2]}
	mark := func(id, prev, version string, ids ...string) *Summary {
		p := partsOf(parts, ids, nil)
		p.Version = version
		sum, err := Mark(m.ctx, m.b, id, Inputs{Uncommitted: seqOf(nil), Parts: p, ExportStart: m.now}, m.opts(WithPrevious(prev))...)
		require.NoError(t, err)
		return sum
	}
	mark("r1", "", "rules 1", "A", "B")
	parts["B"] = keys[1:3]
	sum := mark("r2", "r1", "rules 2", "B")
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Equal(t, KeepParts, sum.KeepSource)
	require.Equal(t, []string{keys[0], keys[3]}, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "r2")))
	// The same rules: only what changed is read.
	sum = mark("r3", "r2", "rules 2", "B")
	require.Equal(t, KeepPartsChanged, sum.KeepSource)
	require.Zero(t, sum.PartsRead)
}

// asOlderSetIndex rewrites run id's records as a version that counted a
// flat keep set as a set wrote them: every count 1, of kind "set".
func asOlderSetIndex(t *testing.T, m *gcModel, id string) {
	dir := reportDir(DefaultStoragePrefix, id)
	committed, staged := readRecords(t, m.ctx, m.base, dir)
	for _, es := range [][]indexEntry{committed, staged} {
		for i := range es {
			es[i].count = min(es[i].count, 1)
		}
	}
	cb, sb := cindexOf(t, cblockEntries, committed), encodeCounts(t, stagedFormat, staged)
	require.NoError(t, m.base.WriteAll(m.ctx, dir+indexName, cb, nil))
	require.NoError(t, m.base.WriteAll(m.ctx, dir+stagedName, sb, nil))
	st, err := readState(m.ctx, m.base, dir)
	require.NoError(t, err)
	require.Equal(t, kindMultiset, st.KeepKind)
	st.KeepKind = kindSet
	st.IndexSum, st.StagedSum = binary.BigEndian.Uint32(cb[len(cb)-4:]), binary.BigEndian.Uint32(sb[len(sb)-4:])
	require.NoError(t, writeJSON(m.ctx, m.base, dir+stateName, st))
}

// TestChangesAfterOlderSetIndex: a keep index of kind "set" (an older
// version's, which counted a key given twice once) is never combined with
// changes: removing one of a key's two occurrences would take it to 0. The
// run reads Committed in full and says so; the run after it counts from its
// own index.
func TestChangesAfterOlderSetIndex(t *testing.T) {
	m, keys := partsWorld(t, 4)
	mark := func(id, prev string, committed []string, ch *Changes) *Summary {
		sum, err := Mark(m.ctx, m.b, id, Inputs{Uncommitted: seqOf(nil), Committed: seqOf(committed), Changes: ch, ExportStart: m.now}, m.opts(WithPrevious(prev))...)
		require.NoError(t, err)
		return sum
	}
	mark("r1", "", []string{keys[0], keys[1], keys[0]}, nil)
	asOlderSetIndex(t, m, "r1")
	// keys[0] is given once now.
	now := []string{keys[0], keys[1]}
	sum := mark("r2", "r1", now, &Changes{Since: "r1", Added: seqOf(nil), Removed: seqOf(keys[:1])})
	require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
	require.Empty(t, sum.KeepSource, "an older set index is not combined with changes")
	require.Equal(t, keys[2:], collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "r2")))
	sum = mark("r3", "r2", keys[1:2], &Changes{Since: "r2", Added: seqOf(nil), Removed: seqOf(keys[:1])})
	require.Equal(t, KeepChanges, sum.KeepSource)
	require.Equal(t, []string{keys[0], keys[2], keys[3]}, collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "r3")))
}
