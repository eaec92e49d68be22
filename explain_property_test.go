package lakegc_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/sweep"
)

// For random namespaces (the world, plus objects of every kind: in and
// outside the data folder, unrecognized, under the storage prefix, young
// and old, staged, committed, in nothing), Explain's verdict on every
// object of the bucket agrees with the run's deleted/ list and with a
// model of the keep set: marked exactly when a candidate, and a candidate
// exactly when the model calls it garbage.
func TestExplainAgreesWithTheRun(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			explainAgrees(t, seed)
		})
	}
}

func explainAgrees(t *testing.T, seed uint64) {
	w := newWorld(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 25))
	type kind struct {
		key      string // with %d for the object's number
		listed   bool   // a mark lists and judges it
		reason   string // what a kept object's reason says, if not by its references
		verdicts []string
	}
	kinds := []kind{
		{key: "data/old/p%03d", listed: true},
		{key: "data/p%03d.csv", reason: "unrecognized", verdicts: []string{lakegc.VerdictKept}},
		{key: "tenant/p%03d", reason: "outside the data folder", verdicts: []string{lakegc.VerdictNotListed}},
		{key: "_lakefs/p%03d", reason: "lakeFS's own files", verdicts: []string{lakegc.VerdictNotListed}},
	}
	ages := []time.Duration{time.Hour, 10 * 24 * time.Hour, 60 * 24 * time.Hour}
	want := map[string]string{} // key → the model's verdict, for the random objects
	committed := false
	for i := range 40 + r.IntN(40) {
		k := kinds[r.IntN(len(kinds))]
		key := fmt.Sprintf(k.key, i)
		age := ages[r.IntN(len(ages))]
		young := age < 24*time.Hour
		switch ref := r.IntN(3); {
		case !k.listed:
			w.object(key, age, true, "never listed")
			want[key] = k.verdicts[0]
		case ref == 0: // staged on feature
			w.object(key, age, true, "staged")
			w.host.stage("feature", entry(fmt.Sprintf("prop-%03d", i), key))
			want[key] = lakegc.VerdictKept
		case ref == 1: // committed on main, in its new HEAD
			w.object(key, age, true, "committed")
			w.host.stage("main", entry(fmt.Sprintf("prop-%03d", i), key))
			committed = true
			want[key] = lakegc.VerdictKept
		case young:
			w.object(key, age, true, "young")
			want[key] = lakegc.VerdictKept
		default:
			w.object(key, age, false, "in nothing")
			want[key] = lakegc.VerdictMarked
		}
	}
	if committed {
		w.host.commit("main", w.commitAt("prop", 0))
	}
	rep, err := lakegc.Collect(ctx, w.host.host(), w.config())
	if err != nil {
		t.Fatal(err)
	}
	marked := map[string]bool{}
	for a, err := range sweep.Candidates(ctx, w.bucket, "_lakefs", rep.RunID) {
		if err != nil {
			t.Fatal(err)
		}
		marked[a] = true
	}
	// Every object of the bucket, the run's own records included.
	var keys []string
	it := w.bucket.List(&blob.ListOptions{})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, o.Key)
	}
	got, err := lakegc.Explain(ctx, w.host.host(), w.config(), rep.RunID, keys)
	if err != nil {
		t.Fatal(err)
	}
	nMarked := 0
	for i, e := range got {
		key := keys[i]
		if (e.Verdict == lakegc.VerdictMarked) != marked[key] {
			t.Errorf("%s: verdict %q (%s), but a candidate of the run: %v", key, e.Verdict, e.Reason, marked[key])
		}
		if e.Verdict == lakegc.VerdictMarked {
			nMarked++
		}
		if _, garbage := w.garbage[key]; garbage != marked[key] {
			t.Errorf("%s: a candidate %v, the model's garbage %v", key, marked[key], garbage)
		}
		if v, ok := want[key]; ok && e.Verdict != v {
			t.Errorf("%s: verdict %q (%s), want %q", key, e.Verdict, e.Reason, v)
		}
		if e.Verdict == "" || e.Reason == "" || !e.Exists || e.Address != key {
			t.Errorf("%s: explanation %+v", key, e)
		}
		if strings.HasPrefix(key, "_lakefs/") && e.Verdict != lakegc.VerdictNotListed {
			t.Errorf("%s: lakeFS's own file judged %q", key, e.Verdict)
		}
	}
	if nMarked != len(marked) || int64(nMarked) != rep.Mark.Summary.NumDeletedObjects {
		t.Errorf("%d objects explained as marked, %d candidates, the summary says %d", nMarked, len(marked), rep.Mark.Summary.NumDeletedObjects)
	}
}
