package metarange

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
)

const testNamespace = "s3://bucket/repo"

// collect drains an iteration: its addresses, its error, its last stats.
func collect(ctx context.Context, bucket *blob.Bucket, ids []string, opts ...Option) ([]string, Stats, error) {
	var (
		addrs []string
		stats Stats
		calls int
	)
	opts = append(opts, WithStats(func(s Stats) {
		if stats.Done {
			panic("stats called after Done")
		}
		stats = s
		calls++
	}))
	for a, err := range Addresses(ctx, bucket, testNamespace, ids, opts...) {
		if err != nil {
			if !stats.Done {
				return addrs, stats, fmt.Errorf("error before the final stats: %v", err)
			}
			return addrs, stats, err
		}
		addrs = append(addrs, a)
	}
	if !stats.Done {
		return addrs, stats, errors.New("no final stats")
	}
	return addrs, stats, nil
}

func TestAddressesOfARepository(t *testing.T) {
	repo := newFixtureRepo(t, lakeFSOptions)
	shared := repo.addRange([]fixtureEntry{
		{"a/1", "data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tu0", relative},
		{"a/2", "data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tug,c2lnbmF0dXJl", relative},
	})
	imports := repo.addRange([]fixtureEntry{
		{"b/in", "s3://bucket/repo/imported/in", full},
		{"b/out", "s3://bucket/repo2/imported/out", full},
		{"b/p-other", "gs://elsewhere/x", full},
	})
	old := repo.addRange([]fixtureEntry{
		{"c/full", "s3://bucket/repo/4d2f1b0c", byPrefixDeprecated},
		{"c/rel", "4d2f1b0d", byPrefixDeprecated},
	})
	latest := repo.addRange([]fixtureEntry{{"d/new", "data/gc5ftg2d4d2gdp2b5tt1/cv9hsj2d4d2gdp2b5tv0", relative}})
	m1 := repo.addMetaRange(shared, imports)
	m2 := repo.addMetaRange(shared, old, latest)
	empty := repo.addMetaRange()

	addrs, stats, err := collect(context.Background(), repo.bucket, []string{m1, m2, m1, empty, ""})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(addrs)
	want := []string{
		"4d2f1b0c",
		"4d2f1b0d",
		"data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tu0",
		"data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tug,c2lnbmF0dXJl",
		"data/gc5ftg2d4d2gdp2b5tt1/cv9hsj2d4d2gdp2b5tv0",
		"imported/in",
	}
	if !slices.Equal(addrs, want) {
		t.Errorf("addresses\n got %q\nwant %q", addrs, want)
	}
	wantStats := Stats{
		MetaRanges: 3, EmptyMetaRanges: 1, Ranges: 4, SharedRanges: 1,
		Entries: 8, AsStored: 4, MadeRelative: 2, Outside: 2, Done: true,
	}
	stats.Bytes = 0
	if stats != wantStats {
		t.Errorf("stats\n got %+v\nwant %+v", stats, wantStats)
	}
}

// modelKeys is the model of the address rules, as lakeFS's Spark GC applies
// them to the addresses this test generates (no escapes, no upper case).
func modelKeys(e fixtureEntry) []string {
	const prefix = testNamespace + "/"
	switch {
	case e.typ == relative:
		return []string{e.address}
	case strings.HasPrefix(e.address, prefix):
		return []string{strings.TrimPrefix(e.address, prefix)}
	case e.typ == byPrefixDeprecated && !strings.Contains(e.address, "://"):
		return []string{e.address}
	}
	return nil
}

func randomEntries(rng *rand.Rand, n int, tag string) []fixtureEntry {
	entries := make([]fixtureEntry, n)
	for i := range entries {
		key := fmt.Sprintf("data/g%04d/%s-%06d", rng.IntN(50), tag, i)
		e := fixtureEntry{path: fmt.Sprintf("%s/%06d", tag, i)}
		switch rng.IntN(8) {
		case 0:
			e.address, e.typ = testNamespace+"/"+key, full
		case 1:
			e.address, e.typ = "s3://bucket/repo-other/"+key, full
		case 2:
			e.address, e.typ = testNamespace+"/"+key, byPrefixDeprecated
		case 3:
			e.address, e.typ = key, byPrefixDeprecated
		case 4:
			e.address, e.typ = key+",c2lnbmF0dXJl", relative
		default:
			e.address, e.typ = key, relative
		}
		entries[i] = e
	}
	return entries
}

// TestAddressesModel compares Addresses with a model on random
// repositories: the output is, as a multiset, the model's keys of every
// entry of every distinct range the metaranges list, each range once.
func TestAddressesModel(t *testing.T) {
	for i := range 12 {
		seed := uint64(time.Now().UnixNano()) + uint64(i)
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		opts := tableOptions{compression: snappyCompression}
		if rng.IntN(2) == 0 {
			opts.blockSize = 64 + rng.IntN(512) // many blocks, a two-level index
		}
		if rng.IntN(3) == 0 {
			opts.compression = noCompression
		}
		concurrency := 1 + rng.IntN(8)
		t.Run(fmt.Sprintf("seed=%d/block=%d/concurrency=%d", seed, opts.blockSize, concurrency), func(t *testing.T) {
			repo := newFixtureRepo(t, opts)
			var ranges []fixtureRange
			entriesOf := map[string][]fixtureEntry{}
			for j := range 1 + rng.IntN(30) {
				entries := randomEntries(rng, 1+rng.IntN(300), fmt.Sprintf("r%03d", j))
				r := repo.addRange(entries)
				ranges = append(ranges, r)
				entriesOf[r.id] = entries
			}
			var ids []string
			listed := map[string]bool{}
			for range 1 + rng.IntN(20) {
				var picked []fixtureRange
				for _, r := range ranges {
					if rng.IntN(3) == 0 {
						picked = append(picked, r)
						listed[r.id] = true
					}
				}
				ids = append(ids, repo.addMetaRange(picked...))
			}
			var want []string
			for id := range listed {
				for _, e := range entriesOf[id] {
					want = append(want, modelKeys(e)...)
				}
			}
			got, stats, err := collect(context.Background(), repo.bucket, ids, WithConcurrency(concurrency))
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("got %d addresses, want %d", len(got), len(want))
			}
			if int(stats.Ranges) != len(listed) {
				t.Errorf("%d ranges read, %d listed", stats.Ranges, len(listed))
			}
		})
	}
}

func TestAddressesMissingRange(t *testing.T) {
	repo := newFixtureRepo(t, lakeFSOptions)
	r1 := repo.addRange([]fixtureEntry{{"a", "data/a", relative}})
	r2 := repo.addRange([]fixtureEntry{{"b", "data/b", relative}})
	m := repo.addMetaRange(r1, r2)
	if err := repo.bucket.Delete(context.Background(), "_lakefs/"+r2.id); err != nil {
		t.Fatal(err)
	}
	_, _, err := collect(context.Background(), repo.bucket, []string{m})
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), r2.id) {
		t.Fatalf("err = %v, want ErrMissing naming %s", err, r2.id)
	}
	_, _, err = collect(context.Background(), repo.bucket, []string{strings.Repeat("0", 64)})
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("missing metarange: err = %v, want ErrMissing", err)
	}
}

func TestAddressesRefusesWhatLakeFSDoesNotWrite(t *testing.T) {
	ctx := context.Background()
	repo := newFixtureRepo(t, lakeFSOptions)
	r := repo.addRange([]fixtureEntry{{"a", "data/a", relative}, {"b", "data/b", relative}})
	m := repo.addMetaRange(r)
	rangeData, err := repo.bucket.ReadAll(ctx, "_lakefs/"+r.id)
	if err != nil {
		t.Fatal(err)
	}
	flipped := slices.Clone(rangeData)
	flipped[len(flipped)/3] ^= 0x40
	badEntry := writeTable(t, typeRanges, []record{{[]byte("a"), gravelerValue(nil, []byte{0x0a, 0x05, 'd'})}}, lakeFSOptions)
	badType := writeTable(t, typeRanges, []record{{[]byte("a"), gravelerValue(nil, encodeEntry("data/a", 3))}}, lakeFSOptions)
	notHex := writeTable(t, typeMetaRanges, metaRangeRecords([]fixtureRange{{id: "../../etc/passwd", minKey: "a", maxKey: "a"}}), lakeFSOptions)
	dump := []fixtureEntry{{"a", "data/a", relative}}

	cases := []struct {
		name      string
		metaRange string // the metarange to read, after the file was put
		put       []byte // a range table put under the ID listed by the metarange
	}{
		{name: "a range read as a metarange", metaRange: r.id},
		{name: "a metarange read as a range", put: mustRead(t, repo.bucket, m)},
		{name: "a flipped bit", put: flipped},
		{name: "a truncated table", put: rangeData[:len(rangeData)-10]},
		{name: "an empty file", put: []byte{}},
		{name: "an entry cut short", put: badEntry},
		{name: "an unknown address type", put: badType},
		{name: "a range ID that is not a hash", metaRange: repo.put(notHex)},
		{name: "a repository dump's range", put: withProperty(t, dump, "entity", "branch")},
		{name: "lakeFS's count differs", put: withProperty(t, dump, "count", "2")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := c.metaRange
			if c.put != nil {
				fresh := newFixtureRepo(t, lakeFSOptions)
				rangeID := strings.Repeat("ab", 32)
				if err := fresh.bucket.WriteAll(ctx, "_lakefs/"+rangeID, c.put, nil); err != nil {
					t.Fatal(err)
				}
				id = fresh.addMetaRange(fixtureRange{id: rangeID, minKey: "a", maxKey: "z"})
				_, _, err := collect(ctx, fresh.bucket, []string{id})
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("err = %v, want ErrCorrupt", err)
				}
				return
			}
			_, _, err := collect(ctx, repo.bucket, []string{id})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
		})
	}
}

func mustRead(t *testing.T, b *blob.Bucket, id string) []byte {
	t.Helper()
	data, err := b.ReadAll(context.Background(), "_lakefs/"+id)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// withProperty writes a range of entries with one more user property.
func withProperty(t *testing.T, entries []fixtureEntry, key, value string) []byte {
	t.Helper()
	o := lakeFSOptions
	o.props = map[string]string{key: value}
	return writeTable(t, typeRanges, rangeRecords(entries), o)
}

func TestAddressesInvalidInput(t *testing.T) {
	repo := newFixtureRepo(t, lakeFSOptions)
	id := repo.addMetaRange()
	cases := []struct {
		name      string
		bucket    *blob.Bucket
		namespace string
		ids       []string
		opts      []Option
	}{
		{name: "nil bucket", namespace: testNamespace, ids: []string{id}},
		{name: "empty namespace", bucket: repo.bucket, ids: []string{id}},
		{name: "relative namespace", bucket: repo.bucket, namespace: "bucket/repo", ids: []string{id}},
		{name: "unknown scheme", bucket: repo.bucket, namespace: "ftp://bucket/repo", ids: []string{id}},
		{name: "short ID", bucket: repo.bucket, namespace: testNamespace, ids: []string{"abc"}},
		{name: "upper-case ID", bucket: repo.bucket, namespace: testNamespace, ids: []string{strings.ToUpper(id)}},
		{name: "path in ID", bucket: repo.bucket, namespace: testNamespace, ids: []string{"../" + id[3:]}},
		{name: "negative concurrency", bucket: repo.bucket, namespace: testNamespace, ids: []string{id}, opts: []Option{WithConcurrency(-1)}},
		{name: "negative max file size", bucket: repo.bucket, namespace: testNamespace, ids: []string{id}, opts: []Option{WithMaxFileSize(-1)}},
		{name: "negative max ranges", bucket: repo.bucket, namespace: testNamespace, ids: []string{id}, opts: []Option{WithMaxRanges(-1)}},
		{name: "empty prefix", bucket: repo.bucket, namespace: testNamespace, ids: []string{id}, opts: []Option{WithStoragePrefix("")}},
		{name: "prefix with a slash", bucket: repo.bucket, namespace: testNamespace, ids: []string{id}, opts: []Option{WithStoragePrefix("_lakefs/")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var errs []error
			for a, err := range Addresses(context.Background(), c.bucket, c.namespace, c.ids, c.opts...) {
				if err == nil {
					t.Fatalf("address %q", a)
				}
				errs = append(errs, err)
			}
			if len(errs) != 1 || !errors.Is(errs[0], ErrInvalidInput) {
				t.Fatalf("errors %v, want one ErrInvalidInput", errs)
			}
		})
	}
}

func TestAddressesLimits(t *testing.T) {
	repo := newFixtureRepo(t, lakeFSOptions)
	r1 := repo.addRange([]fixtureEntry{{"a", "data/a", relative}})
	r2 := repo.addRange([]fixtureEntry{{"b", "data/b", relative}})
	m := repo.addMetaRange(r1, r2)
	ctx := context.Background()
	if _, _, err := collect(ctx, repo.bucket, []string{m}, WithMaxRanges(1)); !errors.Is(err, ErrLimit) {
		t.Errorf("2 ranges, at most 1: err = %v, want ErrLimit", err)
	}
	if _, _, err := collect(ctx, repo.bucket, []string{m}, WithMaxRanges(2)); err != nil {
		t.Errorf("2 ranges, at most 2: %v", err)
	}
	size := int64(len(mustRead(t, repo.bucket, m)))
	if _, _, err := collect(ctx, repo.bucket, []string{m}, WithMaxFileSize(size-1)); !errors.Is(err, ErrLimit) {
		t.Errorf("file larger than the maximum: err = %v, want ErrLimit", err)
	}
}

func TestAddressesStopsEarlyAndCleansUp(t *testing.T) {
	repo := newFixtureRepo(t, lakeFSOptions)
	var ids []string
	for i := range 20 {
		r := repo.addRange(randomEntries(rand.New(rand.NewPCG(1, uint64(i))), 3000, fmt.Sprint(i)))
		ids = append(ids, repo.addMetaRange(r))
	}
	before := runtime.NumGoroutine()
	var final Stats
	n := 0
	for _, err := range Addresses(context.Background(), repo.bucket, testNamespace, ids,
		WithStats(func(s Stats) { final = s })) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 10 {
			break
		}
	}
	if !final.Done {
		t.Error("no final stats after an early stop")
	}
	waitGoroutines(t, before)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n = 0
	var last error
	for _, err := range Addresses(ctx, repo.bucket, testNamespace, ids) {
		if err != nil {
			last = err
			continue
		}
		if n++; n == 10 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("canceled context: last error %v", last)
	}
	waitGoroutines(t, before)
}

func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before", runtime.NumGoroutine(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A full address that names the namespace in another spelling fails the
// iteration (ErrNamespaceMismatch), and so does one outside it whose tail,
// a key of lakeFS's shape, is an object of the bucket; a tail the bucket
// does not hold is kept, a leak at worst.
func TestAddressesNamespaceMismatch(t *testing.T) {
	ctx := context.Background()
	const tail = "data/h6ce3g624eave3ils1cg/c2r2is7s9gbrjaemnik0"
	for _, c := range []struct {
		address string
		put     bool // the bucket holds the tail
		want    error
	}{
		{"s3a://bucket/repo/" + tail, false, ErrNamespaceMismatch},
		{"s3://bucket//repo/" + tail, false, ErrNamespaceMismatch},
		{"file:///srv/lake/repo/" + tail, true, ErrNamespaceMismatch},
		{"file:///srv/lake/repo/" + tail, false, nil},
	} {
		repo := newFixtureRepo(t, lakeFSOptions)
		if c.put {
			if err := repo.bucket.WriteAll(ctx, tail, []byte("live"), nil); err != nil {
				t.Fatal(err)
			}
		}
		m := repo.addMetaRange(repo.addRange([]fixtureEntry{{"a", c.address, full}}))
		addrs, _, err := collect(ctx, repo.bucket, []string{m})
		if !errors.Is(err, c.want) || (c.want != nil) != (err != nil) {
			t.Errorf("%s (tail held %v): %v, want %v", c.address, c.put, err, c.want)
		}
		if err == nil && !slices.Equal(addrs, []string{tail}) {
			t.Errorf("%s: addresses %q, want its tail", c.address, addrs)
		}
	}
}

// lakeFS before v0.110 read and wrote S3 through aws-sdk-go v1, which
// cleaned each request's path: a relative address data//x named the object
// data/x. Both keys are kept, from the ranges' fast path for relative
// entries as from the full ones'.
func TestAddressesKeepSDKv1CleanedKeys(t *testing.T) {
	ctx := context.Background()
	repo := newFixtureRepo(t, lakeFSOptions)
	m := repo.addMetaRange(repo.addRange([]fixtureEntry{
		{"a", "data//x", relative},
		{"b", "data/y", relative},
		{"c", testNamespace + "/data/./z", full},
	}))
	addrs, _, err := collect(ctx, repo.bucket, []string{m})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(addrs)
	want := []string{"data/./z", "data//x", "data/x", "data/y", "data/z"}
	if !slices.Equal(addrs, want) {
		t.Errorf("addresses %q, want %q", addrs, want)
	}
}
