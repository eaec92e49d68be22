package sweep

import (
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// partsOf is a host's Parts over a map of parts, counting the parts opened.
func partsOf(parts map[string][]string, ids []string, opened *int) *Parts {
	return &Parts{IDs: ids, ReadAhead: 3, Open: func(_ context.Context, id string) iter.Seq2[string, error] {
		if opened != nil {
			*opened++
		}
		keys, ok := parts[id]
		if !ok {
			return func(yield func(string, error) bool) { yield("", errors.New("no such part "+id)) }
		}
		return seqOf(keys)
	}}
}

// TestMarkPartsInputs: a keep set given as parts marks as the same keep set
// given flat, and the inputs' rules are enforced.
func TestMarkPartsInputs(t *testing.T) {
	m := newGCModel(t, 21, true, true)
	m.advance(40 * time.Hour)
	keep := m.keep()
	// Overlapping parts: every key in one or two of them.
	parts := map[string][]string{}
	for i, k := range keep {
		for _, p := range []string{string(rune('a' + i%5)), string(rune('a' + i%3))} {
			if !slices.Contains(parts[p], k) {
				parts[p] = append(parts[p], k)
			}
		}
	}
	for _, p := range parts {
		slices.Sort(p)
	}
	ids := slices.Collect(maps.Keys(parts))
	_, want := m.mark("flat")
	sum, err := Mark(m.ctx, m.b, "parts", Inputs{Uncommitted: seqOf(nil), Parts: partsOf(parts, append(ids, ids[0]), nil), ExportStart: m.now}, m.opts()...)
	require.NoError(t, err)
	got := collect(t, Candidates(m.ctx, m.b, DefaultStoragePrefix, "parts"))
	require.Equal(t, want, got)
	require.Equal(t, int64(len(want)), sum.NumDeletedObjects)

	bad := func(in Inputs) error {
		in.ExportStart = m.now
		if in.Uncommitted == nil {
			in.Uncommitted = seqOf(nil)
		}
		_, err := Mark(m.ctx, m.b, "bad", in, m.opts()...)
		return err
	}
	good := partsOf(parts, ids, nil)
	for name, in := range map[string]Inputs{
		"neither":           {},
		"both":              {Committed: seqOf(nil), Parts: good},
		"changes and parts": {Parts: good, Changes: &Changes{Since: "x", Added: seqOf(nil), Removed: seqOf(nil)}},
		"no open":           {Parts: &Parts{IDs: ids}},
		"empty id":          {Parts: partsOf(parts, []string{""}, nil)},
		"changes no since":  {Committed: seqOf(nil), Changes: &Changes{Added: seqOf(nil), Removed: seqOf(nil)}},
		"changes nil seq":   {Committed: seqOf(nil), Changes: &Changes{Since: "x", Added: seqOf(nil)}},
		"out of order":      {Parts: partsOf(map[string][]string{"x": {"data/b", "data/a"}}, []string{"x"}, nil)},
		"repeated key":      {Parts: partsOf(map[string][]string{"x": {"data/a", "data/a"}}, []string{"x"}, nil)},
		"full uri":          {Parts: partsOf(map[string][]string{"x": {"s3://b/data/a"}}, []string{"x"}, nil)},
	} {
		require.ErrorIs(t, bad(in), ErrInvalidInput, name)
	}
	// A part that cannot be read fails the run: never an empty part.
	err = bad(Inputs{Parts: partsOf(parts, append(ids, "missing"), nil)})
	require.ErrorContains(t, err, "no such part missing")
	sum, err = ReadSummary(m.ctx, m.b, DefaultStoragePrefix, "bad")
	require.NoError(t, err)
	require.False(t, sum.Success)
}
