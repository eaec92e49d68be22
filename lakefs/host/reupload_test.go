package host

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob/memblob"
)

func TestComparableChecksum(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef"
	for in, want := range map[string]string{
		h:                                  h,
		"0123456789ABCDEF0123456789ABCDEF": h,
		`"` + h + `"`:                      h,
		`W/"` + h + `"`:                    h,
		h + "-12":                          h + "-12",
		h + "-":                            "",
		h + "-x":                           "",
		h[:31]:                             "",
		h + "0":                            "",
		"sha256:" + h:                      "",
		"":                                 "",
		"1700000000000-2a":                 "", // fileblob's ETag
		"zz23456789abcdef0123456789abcdef": "",
	} {
		got, ok := comparableChecksum(in)
		if ok != (want != "") || got != want {
			t.Errorf("comparableChecksum(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// Every key added is found, concurrently added or not; keys never added
// are found about as rarely as the filter's size says.
func TestBloom(t *testing.T) {
	b := newBloom(64 << 10) // 524,288 bits
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10_000 {
				b.add(keySum, int64(w), fmt.Appendf(nil, "%d", i))
			}
		}()
	}
	wg.Wait()
	for w := range 4 {
		for i := range 10_000 {
			if !b.has(keySum, int64(w), fmt.Appendf(nil, "%d", i)) {
				t.Fatalf("key %d/%d added, not found", w, i)
			}
		}
	}
	// 40,000 keys in 524,288 bits, 4 hashes: about 0.6% false positives.
	fp := 0
	for i := range 10_000 {
		if b.has(keySum, 9, fmt.Appendf(nil, "%d", i)) || b.has(keyAnySum, 0, fmt.Appendf(nil, "%d", i)) {
			fp++
		}
	}
	if fp > 300 {
		t.Errorf("%d false positives in 10,000 lookups", fp)
	}
}

// The check against a model: a candidate is kept exactly when a committed
// entry has its size and the MD5 of its bytes, or its size and a checksum
// the store cannot be compared with; on a store that reports MD5s and on
// one that does not (the check then reads the bytes). Sizes and bytes are
// drawn from small sets, so that most candidates share a size with a
// committed entry and many share their bytes.
func TestReuploadCheckModel(t *testing.T) {
	for _, noMD5 := range []bool{false, true} {
		for seed := range uint64(20) {
			t.Run(fmt.Sprintf("noMD5=%v/seed%d", noMD5, seed), func(t *testing.T) {
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(seed, 3))
				content := func() []byte {
					b := make([]byte, 1+rng.IntN(3))
					for i := range b {
						b[i] = "ab"[rng.IntN(2)]
					}
					return b
				}
				bucket := memblob.OpenBucket(&memblob.Options{NoMD5: noMD5})
				defer bucket.Close()
				r := newReuploads(bucket, 0, 3)
				type ident struct {
					size int64
					sum  string
				}
				committed, anySize := map[ident]bool{}, map[int64]bool{}
				for range rng.IntN(6) {
					c := content()
					sum := md5.Sum(c)
					if rng.IntN(5) == 0 {
						// A linked object whose client sent a checksum of its own.
						r.entry(int64(len(c)), []byte("sha256-of-"+string(c)))
						anySize[int64(len(c))] = true
						continue
					}
					r.entry(int64(len(c)), []byte(hex.EncodeToString(sum[:])))
					committed[ident{int64(len(c)), hex.EncodeToString(sum[:])}] = true
				}
				var keys []string
				want := map[string]bool{}
				for i := range 1 + rng.IntN(30) {
					key := fmt.Sprintf("data/s/%03d", i)
					keys = append(keys, key)
					if rng.IntN(10) == 0 {
						continue // listed, gone before the check
					}
					c := content()
					if err := bucket.WriteAll(ctx, key, c, nil); err != nil {
						t.Fatal(err)
					}
					sum := md5.Sum(c)
					want[key] = anySize[int64(len(c))] || committed[ident{int64(len(c)), hex.EncodeToString(sum[:])}]
				}
				keep := make([]bool, len(keys))
				if err := r.check(ctx, keys, keep); err == nil {
					t.Fatal("a check before the committed entries were all read passed")
				}
				r.ready.Store(true)
				if err := r.check(ctx, keys, keep); err != nil {
					t.Fatal(err)
				}
				var kept int64
				for i, k := range keys {
					// The filter errs only towards keeping; at this size
					// (64 KiB for a few keys) it does not err at all.
					if keep[i] != want[k] {
						t.Errorf("%s: kept %v, the model says %v", k, keep[i], want[k])
					}
					if keep[i] {
						kept++
					}
				}
				// A store that reports MD5s is never read.
				if st := r.stats(); st.Kept != kept || st.Checked != int64(len(keys)) || !noMD5 && st.Hashed != 0 {
					t.Errorf("stats %+v: %d kept of %d", st, kept, len(keys))
				}
			})
		}
	}
}

// A store that fails a read fails the check, rather than keep or drop the
// candidate silently.
func TestReuploadCheckFails(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	if err := bucket.WriteAll(ctx, "data/s/a", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	r := newReuploads(bucket, 0, 2)
	r.entry(1, []byte("0123456789abcdef0123456789abcdef"))
	r.ready.Store(true)
	cancel()
	if err := r.check(ctx, []string{"data/s/a"}, make([]bool, 1)); err == nil {
		t.Error("a check with a cancelled context passed")
	}
	// A read that fails under a live context: the store's own error.
	closed := memblob.OpenBucket(nil)
	if err := closed.WriteAll(context.Background(), "data/s/a", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	_ = closed.Close()
	r = newReuploads(closed, 0, 2)
	r.entry(1, []byte("0123456789abcdef0123456789abcdef"))
	r.ready.Store(true)
	if err := r.check(context.Background(), []string{"data/s/a"}, make([]bool, 1)); err == nil {
		t.Error("a check whose read failed passed")
	}
}

// FuzzComparableChecksum checks the reading of a checksum or an ETag: what
// it accepts comes out as lower-case hex MD5, with an optional "-<parts>",
// reads back as itself, and equals the input but for case, quotes and a
// weak "W/".
func FuzzComparableChecksum(f *testing.F) {
	for _, s := range []string{"0123456789abcdef0123456789abcdef", `"0123456789ABCDEF0123456789ABCDEF-3"`, `W/"x"`, "", "-", "1a-2b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := comparableChecksum(s)
		if !ok {
			if got != "" {
				t.Fatalf("%q refused as %q", s, got)
			}
			return
		}
		hexPart, parts, multi := strings.Cut(got, "-")
		if len(hexPart) != 32 || strings.Trim(hexPart, "0123456789abcdef") != "" || multi && (parts == "" || strings.Trim(parts, "0123456789") != "") {
			t.Fatalf("%q read as %q", s, got)
		}
		if again, ok := comparableChecksum(got); !ok || again != got {
			t.Fatalf("%q read as %q, which reads as %q, %v", s, got, again, ok)
		}
		if !strings.Contains(strings.ToLower(s), got) {
			t.Fatalf("%q read as %q, not a part of it", s, got)
		}
	})
}
