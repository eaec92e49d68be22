package inventory

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/namespace"
)

func azureRows() []s3Row {
	mod := testNow.Add(-50 * time.Hour).Truncate(time.Second)
	return []s3Row{
		{Key: "src/ns/data/a/b", Size: 3, Mod: mod},
		{Key: "src/ns/x, \"y\"+z%", Size: 4, Mod: mod},
		{Key: "src/ns/old", Size: 1, Mod: mod, Noncurr: true},
		{Key: "src/ns/gone", Size: 1, Mod: mod, DelMarker: true},
		{Key: "src/other/k", Size: 5, Mod: mod},
		{Key: "other/ns/k", Size: 5, Mod: mod},
	}
}

const azureNS = "https://acct.blob.core.windows.net/src/ns"

func TestOpenAzureReads(t *testing.T) {
	ctx := context.Background()
	for _, format := range []string{"csv", "parquet"} {
		t.Run(format, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			mkey := writeAzure(t, b, azReport{Account: "acct", Time: testNow.Add(-time.Hour), Format: format, Files: 2, Rows: azureRows(), Count: -1})
			r, err := OpenAzure(ctx, b, mkey, azureNS, WithClock(func() time.Time { return testNow }))
			if err != nil {
				t.Fatal(err)
			}
			got, err := collect(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			mod := testNow.Add(-50 * time.Hour).Truncate(time.Second)
			want := []Object{{Key: "data/a/b", Size: 3, ModTime: mod}, {Key: "x, \"y\"+z%", Size: 4, ModTime: mod}}
			if !slices.Equal(got, want) {
				t.Fatalf("objects %+v, want %+v", got, want)
			}
			if !r.Time().Equal(testNow.Add(-time.Hour)) || !strings.HasPrefix(r.Source(), "https://acct.blob.core.windows.net/inventory/") {
				t.Fatalf("time %v, source %q", r.Time(), r.Source())
			}
		})
	}
}

func TestOpenAzureRefuses(t *testing.T) {
	ctx := context.Background()
	clock := WithClock(func() time.Time { return testNow })
	firstFile := func(t *testing.T, b *blob.Bucket) string {
		for k, err := range listAll(ctx, b, "") {
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(k, ".csv") || strings.HasSuffix(k, ".parquet") {
				return k
			}
		}
		t.Fatal("no data file")
		return ""
	}
	cases := []struct {
		name   string
		rep    azReport
		ns     string
		setup  func(t *testing.T, b *blob.Bucket, mkey string)
		want   error
		atOpen bool
	}{
		{name: "count", rep: azReport{Count: 5}, want: ErrChecksum},
		{name: "size", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			k := firstFile(t, b)
			if err := b.WriteAll(ctx, k, append(mustRead(t, b, k), '\n'), nil); err != nil {
				t.Fatal(err)
			}
		}, want: ErrChecksum},
		{name: "missing file", setup: func(t *testing.T, b *blob.Bucket, _ string) {
			if err := b.Delete(ctx, firstFile(t, b)); err != nil {
				t.Fatal(err)
			}
		}, want: ErrMissingFile},
		{name: "manifest checksum", setup: func(t *testing.T, b *blob.Bucket, mkey string) {
			if err := b.WriteAll(ctx, mkey, bytes.Replace(mustRead(t, b, mkey), []byte(`"rule1"`), []byte(`"rule2"`), 1), nil); err != nil {
				t.Fatal(err)
			}
		}, want: ErrChecksum, atOpen: true},
		{name: "pending", rep: azReport{Status: "Pending"}, want: ErrInvalidInput, atOpen: true},
		{name: "other account", ns: "https://other.blob.core.windows.net/src/ns", want: ErrNotCovered, atOpen: true},
		{name: "prefix elsewhere", rep: azReport{Prefix: []string{"src/nsx", "logs"}}, want: ErrNotCovered, atOpen: true},
		{name: "exclude inside", rep: azReport{Exclude: []string{"src/ns/data"}}, want: ErrNotCovered, atOpen: true},
		{name: "exclude above", rep: azReport{Exclude: []string{"sr"}}, want: ErrNotCovered, atOpen: true},
		{name: "too old", rep: azReport{Time: testNow.Add(-9 * 24 * time.Hour)}, want: ErrTooOld, atOpen: true},
		{name: "empty", ns: "https://acct.blob.core.windows.net/nothing", want: ErrEmpty},
		{name: "S3 namespace", ns: "s3://src/ns", want: ErrInvalidInput, atOpen: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := memblob.OpenBucket(nil)
			defer b.Close()
			rep := c.rep
			rep.Account, rep.Format, rep.Rows = "acct", "csv", azureRows()
			if rep.Time.IsZero() {
				rep.Time = testNow.Add(-time.Hour)
			}
			if rep.Count == 0 {
				rep.Count = -1
			}
			mkey := writeAzure(t, b, rep)
			if c.setup != nil {
				c.setup(t, b, mkey)
			}
			ns := c.ns
			if ns == "" {
				ns = azureNS
			}
			r, err := OpenAzure(ctx, b, mkey, ns, clock)
			if err == nil {
				if c.atOpen {
					t.Fatalf("opened; want %v at open", c.want)
				}
				_, err = collect(ctx, r)
			} else if !c.atOpen {
				t.Fatalf("open: %v; want %v while reading", err, c.want)
			}
			if !errors.Is(err, c.want) || !errors.Is(err, ErrInvalidInput) || !strings.HasPrefix(err.Error(), "inventory: ") {
				t.Fatalf("error %v, want %v", err, c.want)
			}
		})
	}
	// Azure's dates in HTTP's format are read too.
	if got, err := parseModTime([]byte("Tue, 26 May 2021 13:25:36 GMT")); err != nil || !got.Equal(time.Date(2021, 5, 26, 13, 25, 36, 0, time.UTC)) {
		t.Fatalf("HTTP date: %v, %v", got, err)
	}
}

// The Azure manifest: any bytes give a checked manifest or an error, never
// a panic.
func FuzzAzureManifest(f *testing.F) {
	f.Add([]byte(`{"destinationContainer":"inv","endpoint":"https://a.blob.core.windows.net","files":[{"blob":"x.csv","size":1}],"inventoryStartTime":"2026-11-20T00:00:00Z","ruleDefinition":{"filters":{"blobTypes":["blockBlob"],"prefixMatch":["src"]},"format":"csv","objectType":"blob","schemaFields":["Name","Content-Length","Last-Modified"]},"ruleName":"r","status":"Succeeded","summary":{"objectCount":1},"version":"1.0"}`))
	f.Add([]byte(`{"files":[{"blob":""}]}`))
	f.Add([]byte(`{"ruleDefinition":{"filters":{"creationTime":{"lastNDays":3}}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := parseAzureManifest(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if m.Summary.ObjectCount == nil || *m.Summary.ObjectCount < 0 || m.Status != "Succeeded" {
			t.Fatalf("accepted %+v", m)
		}
		n, err := namespace.Parse(azureNS)
		if err != nil {
			t.Fatal(err)
		}
		_ = azureCovers(m, n, "src/ns/")
	})
}
