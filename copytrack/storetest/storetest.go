package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/internal/suite"
)

// Run runs the conformance suite as subtests of t. newStore must return a
// new, empty Store each time it is called (it may register cleanups on its t).
func Run(t *testing.T, newStore func(t *testing.T) copytrack.Store) {
	t.Helper()
	suite.Run(t, checks, newStore)
}

// reporter is what a check reports to: a *testing.T, or the self-tests' recorder.
type reporter = suite.Reporter

// check is one named check of the suite.
type check = suite.Check[copytrack.Store]

var checks = []check{
	{Name: "OrderedByBytes", Run: checkOrderedByBytes},
	{Name: "BinaryKeys", Run: checkBinaryKeys},
	{Name: "PrefixIsolation", Run: checkPrefixIsolation},
	{Name: "Overwrite", Run: checkOverwrite},
	{Name: "Delete", Run: checkDelete},
	{Name: "EmptyValue", Run: checkEmptyValue},
	{Name: "SetCopiesInput", Run: checkSetCopiesInput},
	{Name: "ScanCopiesOutput", Run: checkScanCopiesOutput},
	{Name: "EarlyBreak", Run: checkEarlyBreak},
	{Name: "ConcurrentWriters", Run: checkConcurrentWriters},
	{Name: "CancelledContext", Run: checkCancelledContext},
	{Name: "CancelDuringScan", Run: checkCancelDuringScan},
	{Name: "Model", Run: checkModel},
}

// trickyKeys sort differently as bytes, as signed bytes, as runes, and as
// NUL-terminated strings.
var trickyKeys = []string{
	"\x00", "\x00\x00", "\x00\xff", "\x01", "0", "A", "Z", "a", "a\x00", "a\x00b", "a\x01",
	"a\x7f", "a\x80", "a\xff", "a\xff\xff", "aa", "ab", "b", "z", "\x7f", "\x80",
	"\xc3\xbf", "\xfe", "\xfe\xff", "\xfe\xff\x01", "\xff", "\xff\x00", "\xff\xff", "\xff\xff\xff",
}

func checkOrderedByBytes(r reporter, s copytrack.Store) {
	model := fill(r, s, trickyKeys, 1)
	want := model.scan(nil)
	expectScan(r, s, nil, want)
	expectScan(r, s, []byte{}, want)
}

func checkBinaryKeys(r reporter, s copytrack.Store) {
	big := make([]byte, 4096)
	for i := range big {
		big[i] = byte(i * 7)
	}
	model := kvModel{}
	for i, k := range []string{"k", "k\x00", "k\x00\x00", "k\x00\xff", "k\xff", "k\xff\x00"} {
		v := append([]byte{0, 0xff, byte(i)}, big[:i*700]...)
		set(r, s, []byte(k), v)
		model[k] = string(v)
	}
	expectScan(r, s, []byte("k"), model.scan([]byte("k")))
}

func checkPrefixIsolation(r reporter, s copytrack.Store) {
	model := fill(r, s, trickyKeys, 2)
	for _, p := range []string{"a", "a\x00", "a\xff", "a\xff\xff", "ab", "\x00", "\xff", "\xff\xff", "\xff\xff\xff\xff", "\xfe\xff", "\x7f", "c", "a\x02"} {
		expectScan(r, s, []byte(p), model.scan([]byte(p)))
	}
}

func checkOverwrite(r reporter, s copytrack.Store) {
	set(r, s, []byte("k"), []byte("a long first value"))
	set(r, s, []byte("k"), []byte("v2"))
	set(r, s, []byte("k2"), []byte("other"))
	expectScan(r, s, nil, []copytrack.KV{kv("k", "v2"), kv("k2", "other")})
}

func checkDelete(r reporter, s copytrack.Store) {
	for _, k := range []string{"a", "b", "c"} {
		set(r, s, []byte(k), []byte("v"+k))
	}
	del(r, s, []byte("b"))
	expectScan(r, s, nil, []copytrack.KV{kv("a", "va"), kv("c", "vc")})
	del(r, s, []byte("b"))     // deleted already
	del(r, s, []byte("never")) // never set
	del(r, s, []byte("a\x00")) // missing, just after a key
	expectScan(r, s, nil, []copytrack.KV{kv("a", "va"), kv("c", "vc")})
	set(r, s, []byte("b"), []byte("again"))
	expectScan(r, s, nil, []copytrack.KV{kv("a", "va"), kv("b", "again"), kv("c", "vc")})
}

func checkEmptyValue(r reporter, s copytrack.Store) {
	set(r, s, []byte("nil"), nil)
	set(r, s, []byte("empty"), []byte{})
	expectScan(r, s, nil, []copytrack.KV{kv("empty", ""), kv("nil", "")})
}

func checkSetCopiesInput(r reporter, s copytrack.Store) {
	key, value := []byte("key1"), []byte("value1")
	set(r, s, key, value)
	key[3], value[0] = 'X', 'X'
	buf := []byte("b")
	for i := range 3 { // one buffer reused for several keys and values
		buf = append(buf[:1], byte('0'+i))
		set(r, s, buf, buf)
	}
	buf[1] = 'X'
	expectScan(r, s, nil, []copytrack.KV{kv("b0", "b0"), kv("b1", "b1"), kv("b2", "b2"), kv("key1", "value1")})
}

func checkScanCopiesOutput(r reporter, s copytrack.Store) {
	set(r, s, []byte("k1"), []byte("v1"))
	set(r, s, []byte("k2"), []byte("v2"))
	for kv, err := range s.Scan(context.Background(), nil) {
		if err != nil {
			r.Fatalf("Scan: %v", err)
		}
		if len(kv.Key) > 0 && len(kv.Value) > 0 {
			kv.Key[0], kv.Value[0] = 'X', 'X'
		}
		kv.Key = append(kv.Key[:0], "junk"...)
	}
	expectScan(r, s, nil, []copytrack.KV{kv("k1", "v1"), kv("k2", "v2")})
}

func checkEarlyBreak(r reporter, s copytrack.Store) {
	model := kvModel{}
	for i := range 300 {
		k := fmt.Sprintf("k%03d", i)
		set(r, s, []byte(k), []byte(k))
		model[k] = k
	}
	suite.NotBlocked(r, "Scan after an early break from Scan", func() {
		for range 3 {
			n := 0
			for _, err := range s.Scan(context.Background(), []byte("k")) {
				if err != nil {
					r.Fatalf("Scan: %v", err)
				}
				if n++; n == 2 {
					break
				}
			}
		}
	})
	suite.NotBlocked(r, "Set after an early break from Scan", func() { set(r, s, []byte("k999"), []byte("k999")) })
	model["k999"] = "k999"
	suite.NotBlocked(r, "Delete after an early break from Scan", func() { del(r, s, []byte("k000")) })
	delete(model, "k000")
	suite.NotBlocked(r, "Scan after an early break from Scan", func() { expectScan(r, s, nil, model.scan(nil)) })
}

func checkConcurrentWriters(r reporter, s copytrack.Store) {
	const writers, keys = 8, 40
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := range keys {
				k := fmt.Appendf(nil, "w%d/%02d", w, i)
				if err := s.Set(ctx, k, k); err != nil {
					r.Errorf("Set(%q): %v", k, err)
				}
				if err := s.Set(ctx, []byte("shared"), []byte{byte('0' + w)}); err != nil {
					r.Errorf("Set(shared): %v", err)
				}
				if i%2 == 0 {
					if err := s.Delete(ctx, k); err != nil {
						r.Errorf("Delete(%q): %v", k, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	model := kvModel{}
	for w := range writers {
		for i := 1; i < keys; i += 2 {
			k := fmt.Sprintf("w%d/%02d", w, i)
			model[k] = k
		}
	}
	expectScan(r, s, []byte("w"), model.scan(nil))
	got := scanAll(r, s, []byte("shared"))
	if len(got) != 1 || len(got[0].Value) != 1 || got[0].Value[0] < '0' || got[0].Value[0] >= '0'+writers {
		r.Errorf("after concurrent overwrites, Scan(shared) = %q, want one value written by a writer", got)
	}
}

func checkCancelledContext(r reporter, s copytrack.Store) {
	set(r, s, []byte("present"), []byte("v"))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, ctx := range []context.Context{cancelled, expired} {
		if err := s.Set(ctx, []byte("absent"), []byte("v")); !errors.Is(err, ctx.Err()) {
			r.Errorf("Set with a done context = %v, want an error wrapping %v", err, ctx.Err())
		}
		if err := s.Set(ctx, []byte("present"), []byte("overwritten")); !errors.Is(err, ctx.Err()) {
			r.Errorf("Set (overwrite) with a done context = %v, want an error wrapping %v", err, ctx.Err())
		}
		if err := s.Delete(ctx, []byte("present")); !errors.Is(err, ctx.Err()) {
			r.Errorf("Delete with a done context = %v, want an error wrapping %v", err, ctx.Err())
		}
		var yielded []copytrack.KV
		var scanErr error
		for kv, err := range s.Scan(ctx, nil) {
			if err != nil {
				scanErr = err
				break
			}
			yielded = append(yielded, kv)
		}
		if len(yielded) > 0 || !errors.Is(scanErr, ctx.Err()) {
			r.Errorf("Scan with a done context yielded %q and then %v, want only an error wrapping %v", yielded, scanErr, ctx.Err())
		}
	}
	// The calls above did no work.
	expectScan(r, s, nil, []copytrack.KV{kv("present", "v")})
}

func checkCancelDuringScan(r reporter, s copytrack.Store) {
	for i := range 300 {
		set(r, s, fmt.Appendf(nil, "k%03d", i), []byte("v"))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	for kv, err := range s.Scan(ctx, nil) {
		n++
		if n == 1 {
			if err != nil {
				r.Fatalf("Scan: %v", err)
			}
			cancel()
			continue
		}
		if !errors.Is(err, context.Canceled) {
			r.Errorf("after cancel, Scan yielded %q, %v; want an error wrapping context.Canceled", kv.Key, err)
		}
		break
	}
	if n != 2 {
		r.Errorf("after cancel, Scan ended without an error (%d items yielded)", n)
	}
}

// checkModel runs random operations on keys from a small, tricky alphabet
// and compares scans of random prefixes with a map.
func checkModel(r reporter, s copytrack.Store) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0x00, 0x01, 'a', 0x7f, 0x80, 0xfe, 0xff}
	randBytes := func(minLen, maxLen int) []byte {
		b := make([]byte, minLen+rng.IntN(maxLen-minLen+1))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return b
	}
	model := kvModel{}
	for i := range 200 {
		k := randBytes(1, 3)
		if rng.IntN(3) == 0 {
			del(r, s, k)
			delete(model, string(k))
		} else {
			v := fmt.Appendf(nil, "%d", i)
			set(r, s, k, v)
			model[string(k)] = string(v)
		}
		if i%50 == 49 {
			for range 8 {
				p := randBytes(0, 2)
				expectScan(r, s, p, model.scan(p))
			}
		}
	}
}

// kvModel is the reference Store: a map, sorted on demand.
type kvModel map[string]string

func (m kvModel) scan(prefix []byte) []copytrack.KV {
	var out []copytrack.KV
	for k, v := range m {
		if bytes.HasPrefix([]byte(k), prefix) {
			out = append(out, kv(k, v))
		}
	}
	slices.SortFunc(out, func(a, b copytrack.KV) int { return bytes.Compare(a.Key, b.Key) })
	return out
}

// fill sets keys in a shuffled order (so insertion order is not key order)
// with values derived from the keys and seed.
func fill(r reporter, s copytrack.Store, keys []string, seed uint64) kvModel {
	r.Helper()
	shuffled := slices.Clone(keys)
	rand.New(rand.NewPCG(seed, 0)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	model := kvModel{}
	for i, k := range shuffled {
		v := fmt.Sprintf("v%d:%x", i, k)
		set(r, s, []byte(k), []byte(v))
		model[k] = v
	}
	return model
}

func kv(k, v string) copytrack.KV { return copytrack.KV{Key: []byte(k), Value: []byte(v)} }

func set(r reporter, s copytrack.Store, k, v []byte) {
	r.Helper()
	if err := s.Set(context.Background(), k, v); err != nil {
		r.Fatalf("Set(%q): %v", k, err)
	}
}

func del(r reporter, s copytrack.Store, k []byte) {
	r.Helper()
	if err := s.Delete(context.Background(), k); err != nil {
		r.Fatalf("Delete(%q): %v", k, err)
	}
}

func scanAll(r reporter, s copytrack.Store, prefix []byte) []copytrack.KV {
	r.Helper()
	var out []copytrack.KV
	for kv, err := range s.Scan(context.Background(), prefix) {
		if err != nil {
			r.Fatalf("Scan(%q): %v", prefix, err)
		}
		out = append(out, kv)
	}
	return out
}

func expectScan(r reporter, s copytrack.Store, prefix []byte, want []copytrack.KV) {
	r.Helper()
	got := scanAll(r, s, prefix)
	equal := slices.EqualFunc(got, want, func(a, b copytrack.KV) bool {
		return bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Value, b.Value)
	})
	if !equal {
		r.Errorf("Scan(%q):\n got  %s\n want %s", prefix, formatKVs(got), formatKVs(want))
	}
}

func formatKVs(kvs []copytrack.KV) string {
	var b bytes.Buffer
	for i, kv := range kvs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%q=%q", kv.Key, kv.Value)
	}
	return "[" + b.String() + "]"
}
