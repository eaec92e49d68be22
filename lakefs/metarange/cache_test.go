package metarange

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"google.golang.org/protobuf/encoding/protowire"

	lakefslayout "github.com/lakegc/lakegc/internal/layout"
)

// statEntry is an entry with its own size and checksum.
type statEntry struct {
	fixtureEntry
	size int64
	etag string
}

// addStatRange writes a range whose entries carry their own sizes and
// checksums (appended fields: the last occurrence wins, as in lakeFS).
func (r *fixtureRepo) addStatRange(entries []statEntry) fixtureRange {
	r.t.Helper()
	records := make([]record, len(entries))
	for i, e := range entries {
		data := encodeEntry(e.address, e.typ)
		data = protowire.AppendTag(data, entrySizeField, protowire.VarintType)
		data = protowire.AppendVarint(data, uint64(e.size))
		data = protowire.AppendTag(data, entryETagField, protowire.BytesType)
		data = protowire.AppendString(data, e.etag)
		identity := sha256.Sum256(data)
		records[i] = record{[]byte(e.path), gravelerValue(identity[:], data)}
	}
	table := writeTable(r.t, typeRanges, records, r.opts)
	rg := fixtureRange{id: r.put(table), count: int64(len(entries)), size: uint64(len(table))}
	if len(entries) > 0 {
		rg.minKey, rg.maxKey = entries[0].path, entries[len(entries)-1].path
	}
	return rg
}

// oddEntries are random entries of every kind of address a range holds:
// relative ones (linked, signed; unclean paths S3's old SDK cleaned),
// full ones inside the namespace in every spelling lakeFS resolves
// (escapes, upper-case scheme and host), imports outside it (with and
// without a tail of lakeFS's shape), old deprecated ones, "full" ones that
// are not URIs.
func oddEntries(rng *rand.Rand, n int, tag string) []statEntry {
	entries := make([]statEntry, n)
	for i := range entries {
		key := fmt.Sprintf("data/g%04d/%s-%06d", rng.IntN(50), tag, i)
		xid := fmt.Sprintf("data/gc5ftg2d4d2gdp2b%04d/cv9hsj2d4d2gdp2b%04d", rng.IntN(9999), rng.IntN(9999))
		e := statEntry{fixtureEntry: fixtureEntry{path: fmt.Sprintf("%s/%06d", tag, i)}, size: rng.Int64N(5)}
		switch rng.IntN(4) {
		case 0:
			e.etag = fmt.Sprintf("%032x", rng.IntN(7))
		case 1:
			e.etag = fmt.Sprintf("%032x-%d", rng.IntN(7), 1+rng.IntN(3))
		case 2:
			e.etag = ""
		default:
			e.etag = fmt.Sprintf("\"W/odd-%d\"", rng.IntN(3))
		}
		a := &e.fixtureEntry
		switch rng.IntN(16) {
		case 0:
			a.address, a.typ = testNamespace+"/"+key, full
		case 1:
			a.address, a.typ = "s3://bucket/repo-other/"+key, full
		case 2:
			a.address, a.typ = testNamespace+"/"+key, byPrefixDeprecated
		case 3:
			a.address, a.typ = key, byPrefixDeprecated
		case 4:
			a.address, a.typ = key+",c2lnbmF0dXJl", relative
		case 5:
			a.address, a.typ = testNamespace+"/"+key+",c2lnbmF0dXJl", full
		case 6:
			a.address, a.typ = strings.Replace(key, "/", "//", 1), relative
		case 7:
			a.address, a.typ = testNamespace+"/data/year%3D2024/"+tag+"%2Fpart", full
		case 8:
			a.address, a.typ = "S3://Bucket/repo/"+key, full
		case 9:
			a.address, a.typ = "s3://imports/"+xid, full
		case 10:
			a.address, a.typ = "gs://elsewhere/"+key, full
		case 11:
			a.address, a.typ = key+"/./x,sig", relative
		case 12:
			a.address, a.typ = "not-a-uri/"+key, full
		case 13:
			a.address, a.typ = "a,b/"+key, relative
		default:
			a.address, a.typ = key, relative
		}
		entries[i] = e
	}
	return entries
}

// withUnsignedModel adds each key's unsigned form, as the lakeFS host does
// (package host, withUnsigned): the keys a range's cache must hold.
func withUnsignedModel(keys []string) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k)
		if i := strings.LastIndexByte(k, ','); i > strings.LastIndexByte(k, '/') {
			out = append(out, k[:i])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// statSet collects WithEntryStats' distinct pairs.
type statSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *statSet) add(size int64, sum []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]bool{}
	}
	s.m[fmt.Sprintf("%d/%q", size, sum)] = true
}

func (s *statSet) sorted() []string {
	var out []string
	for k := range s.m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sortedSet sorts and deduplicates.
func sortedSet(keys []string) []string {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// TestRangeCacheProtectsWhatTablesDo is the cache's property: on random
// repositories of random entries, a range served from its cache protects
// exactly what reading its table protects (the table path's keys with
// the host's unsigned forms), gives the same counts and the same sizes
// and checksums to the re-upload check, whether its cache was just
// written (a miss) or read (a hit), through Addresses or Cache.Open.
func TestRangeCacheProtectsWhatTablesDo(t *testing.T) {
	ctx := context.Background()
	for i := range 10 {
		seed := uint64(time.Now().UnixNano()) + uint64(i)
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		opts := tableOptions{compression: snappyCompression}
		if rng.IntN(2) == 0 {
			opts.blockSize = 64 + rng.IntN(512)
		}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			repo := newFixtureRepo(t, opts)
			var ranges []fixtureRange
			for j := range 1 + rng.IntN(12) {
				ranges = append(ranges, repo.addStatRange(oddEntries(rng, 1+rng.IntN(200), fmt.Sprintf("r%03d", j))))
			}
			var ids []string
			for range 1 + rng.IntN(6) {
				var picked []fixtureRange
				for _, r := range ranges {
					if rng.IntN(2) == 0 {
						picked = append(picked, r)
					}
				}
				ids = append(ids, repo.addMetaRange(picked...))
			}
			conc := WithConcurrency(1 + rng.IntN(4))

			var tableStats statSet
			tableKeys, want, err := collect(ctx, repo.bucket, ids, conc, WithEntryStats(tableStats.add))
			if err != nil {
				t.Fatal(err)
			}
			wantKeys := withUnsignedModel(tableKeys)
			for pass, what := range []string{"miss", "hit"} {
				var stats statSet
				got, st, err := collect(ctx, repo.bucket, ids, conc, WithRangeCache(), WithEntryStats(stats.add))
				if err != nil {
					t.Fatal(err)
				}
				if g := sortedSet(got); !slices.Equal(g, wantKeys) {
					t.Fatalf("%s: %d keys, want %d; first difference %q", what, len(g), len(wantKeys), firstDiff(g, wantKeys))
				}
				if !slices.Equal(stats.sorted(), tableStats.sorted()) {
					t.Errorf("%s: entry stats differ", what)
				}
				hits, misses := int64(0), st.Ranges
				if pass == 1 {
					hits, misses = st.Ranges, 0
				}
				if st.Cache.Hits != hits || st.Cache.Misses != misses || st.Cache.Rejected != 0 || st.Cache.WriteErrors != 0 {
					t.Errorf("%s: cache stats %+v", what, st.Cache)
				}
				st.Cache, st.Bytes = CacheStats{}, 0
				w := want
				w.Bytes = 0
				if st != w {
					t.Errorf("%s: stats\n got %+v\nwant %+v", what, st, w)
				}
			}

			rangeIDs, err := RangeIDs(ctx, repo.bucket, ids, conc)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(rangeIDs)) != want.Ranges || !slices.IsSorted(rangeIDs) {
				t.Fatalf("RangeIDs: %d, %d ranges read", len(rangeIDs), want.Ranges)
			}
			// Half the caches gone: Open reads those from their tables.
			for _, id := range rangeIDs {
				if rng.IntN(2) == 0 {
					if err := repo.bucket.Delete(ctx, lakefslayout.RangeCacheKey("_lakefs", id)); err != nil {
						t.Fatal(err)
					}
				}
			}
			c, err := NewCache(repo.bucket, testNamespace, conc)
			if err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, id := range rangeIDs {
				var part []string
				for k, err := range c.Open(ctx, id) {
					if err != nil {
						t.Fatal(err)
					}
					part = append(part, k)
				}
				for i := 1; i < len(part); i++ {
					if part[i-1] >= part[i] {
						t.Fatalf("range %s: %q before %q", id, part[i-1], part[i])
					}
				}
				all = append(all, part...)
			}
			if g := sortedSet(all); !slices.Equal(g, wantKeys) {
				t.Fatalf("Open: %d keys, want %d", len(g), len(wantKeys))
			}
			cs := c.Stats()
			if cs.Entries != want.Entries || cs.Outside != want.Outside || cs.Cache.Hits+cs.Cache.Misses != want.Ranges {
				t.Errorf("Cache.Stats %+v, Addresses' %+v", cs, want)
			}

			// ReadEntryStats gives the re-upload check every range's
			// sizes and checksums, and their entries, with no key:
			// half the caches gone again, read from their tables.
			for _, id := range rangeIDs {
				if rng.IntN(2) == 0 {
					if err := repo.bucket.Delete(ctx, lakefslayout.RangeCacheKey("_lakefs", id)); err != nil {
						t.Fatal(err)
					}
				}
			}
			var stats statSet
			sc, err := NewCache(repo.bucket, testNamespace, conc, WithEntryStats(stats.add))
			if err != nil {
				t.Fatal(err)
			}
			var entries int64
			for _, id := range rangeIDs {
				n, err := sc.ReadEntryStats(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				entries += n
			}
			if !slices.Equal(stats.sorted(), tableStats.sorted()) {
				t.Errorf("ReadEntryStats: %d distinct sizes and checksums, the tables %d", len(stats.m), len(tableStats.m))
			}
			if ss := sc.Stats(); entries != want.Entries || ss.Entries != want.Entries || ss.Cache.Hits+ss.Cache.Misses != want.Ranges {
				t.Errorf("ReadEntryStats: %d entries, Stats %+v; Addresses' %+v", entries, ss, want)
			}
			if _, err := sc.ReadEntryStats(ctx, "not-a-range"); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("ReadEntryStats of a bad ID: %v", err)
			}
		})
	}
}

// recrc reseals a cache object after a change.
func recrc(b []byte) []byte {
	body := b[:len(b)-cacheCRCLen]
	return binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.Checksum(body, castagnoli))
}

// TestRangeCacheIgnoresBadCaches: a cache that is damaged, truncated,
// empty, of another range, of other settings or of another version is
// ignored: the range is read from its table, with the same keys, and its
// cache written again, which the next run reads.
func TestRangeCacheIgnoresBadCaches(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	repo := newFixtureRepo(t, lakeFSOptions)
	r1 := repo.addStatRange(oddEntries(rng, 100, "a"))
	r2 := repo.addStatRange(oddEntries(rng, 100, "b"))
	m := repo.addMetaRange(r1)
	tableKeys, _, err := collect(ctx, repo.bucket, []string{m})
	if err != nil {
		t.Fatal(err)
	}
	want := withUnsignedModel(tableKeys)
	key := lakefslayout.RangeCacheKey("_lakefs", r1.id)
	if _, _, err := collect(ctx, repo.bucket, []string{repo.addMetaRange(r2), m}, WithRangeCache()); err != nil {
		t.Fatal(err)
	}
	good, err := repo.bucket.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	other, err := repo.bucket.ReadAll(ctx, lakefslayout.RangeCacheKey("_lakefs", r2.id))
	if err != nil {
		t.Fatal(err)
	}
	version := len(cacheMagic)
	for name, bad := range map[string][]byte{
		"a flipped bit": func() []byte { b := slices.Clone(good); b[len(b)/2] ^= 4; return b }(),
		"truncated":     good[:len(good)-1],
		"cut short":     good[:len(good)/2],
		"empty":         {},
		"another range": other,
		"version 2":     func() []byte { b := slices.Clone(good); b[version] = 2; return recrc(b) }(),
		"garbage":       []byte("lakegcRC not a cache at all"),
		"another prefix": func() []byte {
			b := slices.Clone(good)
			i := bytes.Index(b, []byte("_lakefs"))
			b[i+1] = 'L'
			return recrc(b)
		}(),
		"another namespace": func() []byte {
			b := slices.Clone(good)
			i := bytes.Index(b, []byte(testNamespace))
			b[i+len(testNamespace)-1] = 'x'
			return recrc(b)
		}(),
	} {
		if err := repo.bucket.WriteAll(ctx, key, bad, nil); err != nil {
			t.Fatal(err)
		}
		got, st, err := collect(ctx, repo.bucket, []string{m}, WithRangeCache())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(sortedSet(got), want) {
			t.Errorf("%s: keys differ", name)
		}
		if st.Cache.Hits != 0 || st.Cache.Misses != 1 || st.Cache.Rejected != 1 {
			t.Errorf("%s: cache stats %+v", name, st.Cache)
		}
		again, err := repo.bucket.ReadAll(ctx, key)
		if err != nil || !bytes.Equal(again, good) {
			t.Errorf("%s: the cache was not written again (%v)", name, err)
		}
	}
	// Another namespace's run neither uses nor keeps this one's cache
	// usable... but it is never trusted: it rewrites it, and this one's
	// next run rewrites it back.
	if _, err := parseCache(good, cacheSettings{namespace: "s3://bucket/other", storagePrefix: "_lakefs", rangeID: mustID(r1.id)}); !errors.Is(err, errCacheStale) {
		t.Errorf("another namespace: %v, want errCacheStale", err)
	}
}

func mustID(s string) id {
	v, ok := parseID([]byte(s))
	if !ok {
		panic(s)
	}
	return v
}

// TestRangeCacheProbesOutsideTails: a range served from its cache still has
// the tails of its imports probed: a tail that appears in the bucket after
// the cache was written fails the run as it fails a run reading the table.
func TestRangeCacheProbesOutsideTails(t *testing.T) {
	ctx := context.Background()
	const tail = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	repo := newFixtureRepo(t, lakeFSOptions)
	m := repo.addMetaRange(repo.addRange([]fixtureEntry{{"a", "file:///srv/lake/repo/" + tail, full}, {"b", "data/x", relative}}))
	if _, st, err := collect(ctx, repo.bucket, []string{m}, WithRangeCache()); err != nil || st.Cache.Misses != 1 {
		t.Fatalf("%+v, %v", st.Cache, err)
	}
	if err := repo.bucket.WriteAll(ctx, tail, []byte("live"), nil); err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]Option{nil, {WithRangeCache()}} {
		if _, _, err := collect(ctx, repo.bucket, []string{m}, opts...); !errors.Is(err, ErrNamespaceMismatch) {
			t.Errorf("options %d: %v, want ErrNamespaceMismatch", len(opts), err)
		}
	}
	c, err := NewCache(repo.bucket, testNamespace)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := RangeIDs(ctx, repo.bucket, []string{m})
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for _, err := range c.Open(ctx, ids[0]) {
		last = err
	}
	if !errors.Is(last, ErrNamespaceMismatch) {
		t.Errorf("Open: %v, want ErrNamespaceMismatch", last)
	}
	// The lakeFS host reads every kept range this way each run, those an
	// optimized mark does not open included: the probe runs for them too.
	if hit, err := repo.bucket.Exists(ctx, lakefslayout.RangeCacheKey("_lakefs", ids[0])); err != nil || !hit {
		t.Fatalf("the range's cache: %v, %v", hit, err)
	}
	sc, err := NewCache(repo.bucket, testNamespace)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.ReadEntryStats(ctx, ids[0]); !errors.Is(err, ErrNamespaceMismatch) {
		t.Errorf("ReadEntryStats: %v, want ErrNamespaceMismatch", err)
	}
	if st := sc.Stats(); st.Cache.Hits != 0 || st.Ranges != 0 {
		t.Errorf("a refused range counted: %+v", st)
	}
}

// TestRangeCacheTooLarge: a range whose keys take more than
// WithCacheMaxBytes is not cached; Addresses reads it from its table with
// the same keys, Open and ReadEntryStats refuse it with ErrLimit.
func TestRangeCacheTooLarge(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	repo := newFixtureRepo(t, lakeFSOptions)
	rg := repo.addStatRange(oddEntries(rng, 300, "a"))
	m := repo.addMetaRange(rg)
	tableKeys, _, err := collect(ctx, repo.bucket, []string{m})
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := collect(ctx, repo.bucket, []string{m}, WithRangeCache(), WithCacheMaxBytes(1000))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sortedSet(got), withUnsignedModel(tableKeys)) {
		t.Error("keys differ")
	}
	if st.Cache.Misses != 1 {
		t.Errorf("cache stats %+v", st.Cache)
	}
	if ok, _ := repo.bucket.Exists(ctx, lakefslayout.RangeCacheKey("_lakefs", rg.id)); ok {
		t.Error("a cache over the bound was written")
	}
	c, err := NewCache(repo.bucket, testNamespace, WithCacheMaxBytes(1000))
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for _, err := range c.Open(ctx, rg.id) {
		last = err
	}
	if !errors.Is(last, ErrLimit) {
		t.Errorf("Open: %v, want ErrLimit", last)
	}
	// The lakeFS host's read for the re-upload check refuses it too, so
	// its run fails before the mark (never a range left out of the check).
	if _, err := c.ReadEntryStats(ctx, rg.id); !errors.Is(err, ErrLimit) {
		t.Errorf("ReadEntryStats: %v, want ErrLimit", err)
	}
}

// TestRangeCacheMissingTable: a cache does not stand for a missing table
// when it is not there itself, and Open of a bad ID is refused.
func TestRangeCacheInvalid(t *testing.T) {
	ctx := context.Background()
	repo := newFixtureRepo(t, lakeFSOptions)
	c, err := NewCache(repo.bucket, testNamespace)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]error{
		"../x":                   ErrInvalidInput,
		strings.Repeat("ab", 32): ErrMissing,
	} {
		var last error
		for _, err := range c.Open(ctx, id) {
			last = err
		}
		if !errors.Is(last, want) {
			t.Errorf("Open(%q): %v, want %v", id, last, want)
		}
	}
	if _, err := NewCache(nil, testNamespace); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("nil bucket: %v", err)
	}
	if _, err := NewCache(repo.bucket, "nope"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("bad namespace: %v", err)
	}
	if _, err := RangeIDs(ctx, repo.bucket, []string{strings.Repeat("cd", 32)}); !errors.Is(err, ErrMissing) {
		t.Errorf("RangeIDs of a missing metarange: %v", err)
	}
	var _ *blob.Bucket = repo.bucket
}

// firstDiff is the first key in one of a and b (sorted) and not the other.
func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return min(a[i], b[i])
		}
	}
	if len(a) > len(b) {
		return a[len(b)]
	}
	if len(b) > len(a) {
		return b[len(a)]
	}
	return ""
}

var fuzzSettings = cacheSettings{namespace: testNamespace, storagePrefix: "_lakefs", rangeID: id{1, 2, 3}}

// FuzzRangeCache: the cache decoder reads outside input. Whatever the
// bytes, it returns an error or a cache whose keys ascend strictly and
// whose every part, encoded again, gives the same bytes: the format has
// one encoding of a cache, so an accepted cache is exactly what the
// encoder writes.
func FuzzRangeCache(f *testing.F) {
	enc := func(keys []string, stats []entryStat, probes [][2]string) []byte {
		k := make([][]byte, len(keys))
		for i, s := range keys {
			k[i] = []byte(s)
		}
		return encodeCache(fuzzSettings, rangeCounts{entries: 5, asStored: 2, madeRelative: 1, outside: 1}, probes, sortedKeys(k), sortedStats(stats))
	}
	f.Add(enc(nil, nil, nil))
	f.Add(enc([]string{"data/a/b", "data/a/b,sig", "data/a/c", "x"}, []entryStat{{1, []byte("abc")}, {2, []byte("abc")}, {-1, nil}}, [][2]string{{"s3://imports/data/a/b", "data/a/b"}}))
	f.Add(enc([]string{"", "a", "ab", "b"}, []entryStat{{0, []byte("")}}, nil))
	f.Add([]byte(cacheMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCache(t, data)
		if len(data) >= cacheCRCLen {
			checkCache(t, recrc(data)) // past the checksum, to the fields
		}
	})
}

func checkCache(t *testing.T, data []byte) {
	v, err := parseCache(data, fuzzSettings)
	if err != nil {
		return
	}
	var keys [][]byte
	if _, err := walkKeys(v.keys, v.nKeys, func(k []byte) error { keys = append(keys, slices.Clone(k)); return nil }); err != nil {
		t.Fatalf("keys of a checked cache: %v", err)
	}
	for i := 1; i < len(keys); i++ {
		if bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Fatalf("key %q before %q", keys[i-1], keys[i])
		}
	}
	var stats []entryStat
	if _, err := walkStats(v.stats, v.nStats, func(size int64, sum []byte) { stats = append(stats, entryStat{size, slices.Clone(sum)}) }); err != nil {
		t.Fatalf("stats of a checked cache: %v", err)
	}
	if again := encodeCache(fuzzSettings, v.counts, v.probes, keys, stats); !bytes.Equal(again, data) {
		t.Fatalf("encoded again: %x\nwas %x", again, data)
	}
}

// TestCacheOpenManyAtOnce: a merge holds every part open at once, more
// than WithConcurrency: Open holds its token while it reads, not while it
// yields, so the merge goes through, and gives the keys of Addresses.
func TestCacheOpenManyAtOnce(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	repo := newFixtureRepo(t, lakeFSOptions)
	var ranges []fixtureRange
	for j := range 6 {
		ranges = append(ranges, repo.addStatRange(oddEntries(rng, 50, fmt.Sprintf("m%d", j))))
	}
	m := repo.addMetaRange(ranges...)
	tableKeys, _, err := collect(ctx, repo.bucket, []string{m})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := RangeIDs(ctx, repo.bucket, []string{m})
	if err != nil {
		t.Fatal(err)
	}
	for pass := range 2 { // misses, then hits
		c, err := NewCache(repo.bucket, testNamespace, WithConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan []string)
		go func() {
			type head struct {
				key  string
				next func() (string, error, bool)
				stop func()
			}
			var heads []*head
			for _, id := range ids {
				next, stop := iter.Pull2(c.Open(ctx, id))
				k, err, ok := next()
				if err != nil {
					panic(err)
				}
				if ok {
					heads = append(heads, &head{k, next, stop})
				}
			}
			var merged []string
			for len(heads) > 0 {
				i := 0
				for j, h := range heads {
					if h.key < heads[i].key {
						i = j
					}
				}
				h := heads[i]
				if len(merged) == 0 || merged[len(merged)-1] != h.key {
					merged = append(merged, h.key)
				}
				k, err, ok := h.next()
				if err != nil {
					panic(err)
				}
				if ok {
					h.key = k
				} else {
					h.stop()
					heads = slices.Delete(heads, i, i+1)
				}
			}
			done <- merged
		}()
		select {
		case merged := <-done:
			if !slices.Equal(merged, withUnsignedModel(tableKeys)) {
				t.Errorf("pass %d: the merge of the parts is not Addresses' keys", pass)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("pass %d: a merge of %d parts at concurrency 1 is stuck", pass, len(ids))
		}
	}
}
