package sweep

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/layout"
	"github.com/stretchr/testify/require"
)

// TestCarryFilter checks the carry filter, which decides a slice once for
// all its keys, against the decision made for each key alone: on sorted and
// shuffled keys of slices and of folders whose names share a prefix with a
// slice's (a slice's name and one character more or less, "g1" and "g10"),
// keys between the folders, outside the data folder, and of odd shapes; with
// and without checking the recognizer again, with include prefixes and a
// custom recognizer.
func TestCarryFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	for round := range 200 {
		data := "data/"
		if round%4 == 3 {
			data = "my/data/"
		}
		var names []string
		for range 1 + r.IntN(6) {
			names = append(names, randDescendingName(r, t0.Add(-time.Duration(r.IntN(1000))*time.Hour)))
		}
		skipped := map[string]bool{}
		for _, n := range names {
			skipped[n] = r.IntN(3) > 0
		}
		skip := func(name string, _ time.Time) bool { return skipped[name] }
		var folders []string
		for _, n := range names {
			folders = append(folders, n, n+"0", n[:len(n)-1], n[:len(n)-1]+"x", n+"/sub")
		}
		folders = append(folders, "g1", "g10", "g1.", "", "legacy")
		var keys []string
		for range 10 + r.IntN(200) {
			f := pick(r, folders)
			at := t0.Add(-time.Duration(r.IntN(1000)) * time.Hour)
			switch r.IntN(8) {
			case 0:
				keys = append(keys, data+f) // the folder's name alone: a loose object
			case 1:
				keys = append(keys, data+f+"/"+randXID(r, at)+","+strings.Repeat("A", layout.SignatureLen))
			case 2:
				keys = append(keys, data+f+"/report.csv")
			case 3:
				keys = append(keys, strings.TrimSuffix(data, "/")+"2/"+f+"/"+randXID(r, at)) // another data folder
			case 4:
				keys = append(keys, data+f+"/"+randXID(r, at)+"/x")
			default:
				keys = append(keys, data+f+"/"+randXID(r, at))
			}
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		recs := []layout.Recognizer{
			{Data: strings.TrimSuffix(data, "/")},
			{Data: strings.TrimSuffix(data, "/"), Include: []string{data + names[0] + "/"}},
			{Data: strings.TrimSuffix(data, "/"), Custom: func(k string) bool { return strings.HasSuffix(k, ".csv") }},
		}
		for _, rec := range recs {
			for _, recheck := range []bool{false, true} {
				want := func(key string) bool {
					name, at, ok := sliceOf([]byte(key), data)
					return ok && skip(name, at) && (!recheck || rec.OK(key))
				}
				for _, order := range []string{"sorted", "shuffled"} {
					ks := slices.Clone(keys)
					if order == "shuffled" {
						r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
					}
					keep := newCarryFilter(data, skip, rec, recheck)
					for _, k := range ks {
						if got := keep([]byte(k)); got != want(k) {
							t.Fatalf("round %d, %s keys, recheck %v, include %q: keep(%q) = %v, want %v (slices %v)",
								round, order, recheck, rec.Include, k, got, want(k), skipped)
						}
					}
				}
			}
		}
	}
}

// TestCarryFilterChecksRecognized: keys the recognizer accepts are carried
// alike whether it checks them again or not, and a key of a slice it does
// not accept is carried only when the recognizer is not asked.
func TestCarryFilterChecksRecognized(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 2))
	name := randDescendingName(r, t0.Add(-100*time.Hour))
	skip := func(string, time.Time) bool { return true }
	rec := layout.Recognizer{Data: "data"}
	good := "data/" + name + "/" + randXID(r, t0)
	odd := "data/" + name + "/report.csv"
	for _, recheck := range []bool{false, true} {
		keep := newCarryFilter("data/", skip, rec, recheck)
		if !keep([]byte(good)) {
			t.Errorf("recheck %v: a recognized key of a skipped slice is not carried", recheck)
		}
		if got := keep([]byte(odd)); got == recheck {
			t.Errorf("recheck %v: keep(%q) = %v", recheck, odd, got)
		}
	}
}

// TestRecognizerRulesCarry: the previous run's keys are carried without
// the recognizer only when its state says the rules of this version. The
// previous run's keep index is given a listed key of an old slice that the
// built-in rules do not recognize (as a lakegc whose rules accepted it
// would have recorded it), whose object is old and in no keep set: a run
// whose state says another version of the rules, or none, checks it again
// and keeps it, as a clean run does; one whose state says this version
// trusts the records and marks it.
func TestRecognizerRulesCarry(t *testing.T) {
	ctx := context.Background()
	dir := reportDir(DefaultStoragePrefix, "prev")
	for _, tc := range []struct {
		name  string
		rules any // the state's recognizer_rules; nil: absent
		marks bool
	}{
		{"same rules", layout.RecognizerRules, true},
		{"no rules", nil, false},
		{"other rules", layout.RecognizerRules + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newGCModel(t, 7, true, true)
			m.advance(40 * time.Hour)
			m.mark("prev")
			m.advance(5 * time.Hour)
			// Read the indexes, and add a listed key to the oldest slice
			// they have listed keys of (DescendingID: the greatest name),
			// in the staged index, counted 0.
			committed, staged := readRecords(t, ctx, m.base, dir)
			var oldest string
			for _, e := range append(committed, staged...) {
				if e.aux&idxListed != 0 && e.key > oldest {
					oldest = e.key
				}
			}
			require.NotEmpty(t, oldest)
			odd := oldest[:strings.LastIndexByte(oldest, '/')+1] + "report.csv"
			require.Equal(t, layout.Unrecognized, layout.Recognize(odd, layout.DataPrefix))
			m.put(odd, m.mods[oldest])
			staged = append(staged, indexEntry{odd, 0, idxListed})
			slices.SortFunc(staged, func(a, b indexEntry) int { return strings.Compare(a.key, b.key) })
			sb := encodeCounts(t, stagedFormat, staged)
			require.NoError(t, m.base.WriteAll(ctx, dir+stagedName, sb, nil))
			stagedSum := binary.BigEndian.Uint32(sb[len(sb)-4:])
			sb, err := m.base.ReadAll(ctx, dir+stateName)
			require.NoError(t, err)
			var st map[string]any
			require.NoError(t, json.Unmarshal(sb, &st))
			st["staged_keys"] = st["staged_keys"].(float64) + 1
			st["staged_crc32c"] = stagedSum
			st["live_keys"] = st["live_keys"].(float64) + 1
			require.Equal(t, float64(layout.RecognizerRules), st["recognizer_rules"], "the state says the run's rules")
			delete(st, "recognizer_rules")
			if tc.rules != nil {
				st["recognizer_rules"] = tc.rules
			}
			sb, err = json.Marshal(st)
			require.NoError(t, err)
			require.NoError(t, m.base.WriteAll(ctx, dir+stateName, sb, nil))

			_, clean := m.mark("clean")
			sum, got := m.mark("next", WithPrevious("prev"))
			require.Equal(t, RunOptimized, sum.RunKind, sum.CleanReason)
			require.NotContains(t, clean, odd)
			require.Equal(t, tc.marks, slices.Contains(got, odd), "candidates %q", got)
			require.Equal(t, clean, slices.DeleteFunc(got, func(k string) bool { return k == odd }))
		})
	}
}

// TestStateRecognizerRules: the state records the rules' version, and a
// negative one is refused.
func TestStateRecognizerRules(t *testing.T) {
	st, err := parseState([]byte(`{"version":3,"keep_kind":"set","recognizer_rules":3}`))
	require.NoError(t, err)
	require.Equal(t, 3, st.RecognizerRules)
	_, err = parseState([]byte(`{"version":3,"keep_kind":"set","recognizer_rules":-1}`))
	require.ErrorIs(t, err, ErrInvalidInput)
}

// bufCounts yields counted keys from one reused buffer.
type bufCounts struct {
	keys   []string
	counts []int64
	buf    []byte
}

func (s *bufCounts) Next() ([]byte, int64, bool, error) {
	if len(s.keys) == 0 {
		return nil, 0, false, nil
	}
	s.buf = append(s.buf[:0], s.keys[0]...)
	c := s.counts[0]
	s.keys, s.counts = s.keys[1:], s.counts[1:]
	return s.buf, c, true, nil
}

func (s *bufCounts) Close() error { return nil }
