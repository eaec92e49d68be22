package metarange

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// WithEntryStats sees every entry of every range once, shared ranges
// read once, with the size and checksum lakeFS wrote.
func TestWithEntryStats(t *testing.T) {
	repo := newFixtureRepo(t, lakeFSOptions)
	shared := repo.addRange([]fixtureEntry{
		{"a/1", "data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tu0", relative},
		{"a/2", "data/gc5ftg2d4d2gdp2b5tt0/cv9hsj2d4d2gdp2b5tug", relative},
	})
	other := repo.addRange([]fixtureEntry{{"b/out", "s3://bucket/repo2/imported/out", full}})
	m1 := repo.addMetaRange(shared, other)
	m2 := repo.addMetaRange(shared)
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		n    int
	)
	fn := func(size int64, sum []byte) {
		mu.Lock()
		defer mu.Unlock()
		seen[string(sum)] += int(size)
		n++
	}
	for _, err := range Addresses(context.Background(), repo.bucket, "s3://bucket/repo", []string{m1, m2}, WithEntryStats(fn)) {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Three entries (the shared range once, the one outside the
	// namespace too), each of size 42 and checksum "etag" (encodeEntry).
	if n != 3 || len(seen) != 1 || seen["etag"] != 3*42 {
		t.Errorf("entry stats: %d calls, %v; want 3 calls of 42, \"etag\"", n, seen)
	}
}

// FuzzEntryStats compares entryStats with the protobuf runtime: what it
// accepts, the runtime accepts and reads alike.
func FuzzEntryStats(f *testing.F) {
	f.Add(encodeEntry("data/gx/cy", relative))
	f.Add(append(encodeEntry("data/a", relative), 0x22, 0x01, 0xff))
	f.Add([]byte{0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}) // size -1
	f.Add([]byte{0x20, 0x01})                                                       // e_tag as a varint
	rng := rand.New(rand.NewPCG(7, 8))
	for range 5 {
		f.Add(randomEntry(rng))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		size, sum, err := entryStats(b)
		if err != nil {
			return
		}
		m := dynamicpb.NewMessage(lenientEntryDescriptor)
		if err := proto.Unmarshal(b, m); err != nil {
			// entryStats reads two fields and skips the rest as
			// lakeFS's runtime would, but it does not check that
			// every other field is well-formed: only a message the
			// runtime reads is compared.
			return
		}
		fields := lenientEntryDescriptor.Fields()
		if want := m.Get(fields.ByNumber(entrySizeField)).Int(); size != want {
			t.Fatalf("entryStats(%x): size %d, the runtime reads %d", b, size, want)
		}
		if want := m.Get(fields.ByNumber(entryETagField)).Bytes(); string(sum) != string(want) {
			t.Fatalf("entryStats(%x): checksum %q, the runtime reads %q", b, sum, want)
		}
	})
}
