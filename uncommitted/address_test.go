package uncommitted_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/lakegc/lakegc/uncommitted"
)

// lakeFS's Entry.AddressType values.
const (
	byPrefixDeprecated = 0
	relative           = 1
	full               = 2
)

// TestAddressTypeFromLakeFS lists lakeFS's types and how lakeFS's block
// adapters resolve an address of the deprecated type.
func TestAddressTypeFromLakeFS(t *testing.T) {
	cases := []struct {
		v       int32
		address string
		want    uncommitted.AddressType // -1: an error
	}{
		{relative, "data/a", uncommitted.Relative},
		{relative, "s3://bucket/repo/data/a", uncommitted.Relative}, // the type decides
		{full, "s3://bucket/repo/data/a", uncommitted.Full},
		{full, "data/a", uncommitted.Full},
		{byPrefixDeprecated, "s3://bucket/repo/data/a", uncommitted.Full},
		{byPrefixDeprecated, "S3://bucket/repo/data/a", uncommitted.Full}, // schemes are case-insensitive
		{byPrefixDeprecated, "gs://bucket/a", uncommitted.Full},
		{byPrefixDeprecated, "https://account.blob.core.windows.net/c/a", uncommitted.Full},
		{byPrefixDeprecated, "http://host/c/a", uncommitted.Full},
		{byPrefixDeprecated, "local://tmp/a", uncommitted.Full},
		{byPrefixDeprecated, "mem://repo/a", uncommitted.Full},
		{byPrefixDeprecated, "memory://repo/a", uncommitted.Full},
		{byPrefixDeprecated, "data/a", uncommitted.Relative},
		{byPrefixDeprecated, "/data/a", uncommitted.Relative},
		{byPrefixDeprecated, "s4://bucket/a", uncommitted.Relative}, // no lakeFS storage
		{byPrefixDeprecated, "://invalid/a", uncommitted.Relative},
		{byPrefixDeprecated, "s3:a", uncommitted.Full}, // an opaque URI is absolute too
		{byPrefixDeprecated, "s3://bucket/a\x7f", uncommitted.Relative},
		{byPrefixDeprecated, "", uncommitted.Relative},
		{3, "data/a", -1},
		{-1, "data/a", -1},
		{math.MaxInt32, "s3://bucket/a", -1},
	}
	for _, c := range cases {
		got, err := uncommitted.AddressTypeFromLakeFS(c.v, c.address)
		if c.want < 0 {
			if !errors.Is(err, uncommitted.ErrUnknownAddressType) {
				t.Errorf("(%d, %q): %v, %v; want ErrUnknownAddressType", c.v, c.address, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("(%d, %q): %v, %v; want %v", c.v, c.address, got, err, c.want)
		}
	}
}

// FuzzAddressTypeFromLakeFS: every value lakeFS defines converts, every
// other is an error, and the deprecated type is Full only for an address
// that starts with one of lakeFS's storage schemes.
func FuzzAddressTypeFromLakeFS(f *testing.F) {
	f.Add(int32(0), "s3://bucket/a")
	f.Add(int32(0), "data/a")
	f.Add(int32(1), "gs://bucket/a")
	f.Add(int32(2), "data/a")
	f.Add(int32(3), "")
	f.Add(int32(0), "HTTPS://host/%zz")
	f.Fuzz(func(t *testing.T, v int32, address string) {
		got, err := uncommitted.AddressTypeFromLakeFS(v, address)
		switch {
		case v < 0 || v > 2:
			if !errors.Is(err, uncommitted.ErrUnknownAddressType) {
				t.Fatalf("value %d: %v, %v; want ErrUnknownAddressType", v, got, err)
			}
			return
		case err != nil:
			t.Fatalf("value %d: %v", v, err)
		case v == relative && got != uncommitted.Relative, v == full && got != uncommitted.Full:
			t.Fatalf("value %d: %v", v, got)
		}
		if v == byPrefixDeprecated && got == uncommitted.Full {
			scheme, _, ok := strings.Cut(address, ":")
			switch strings.ToLower(scheme) {
			case "s3", "gs", "http", "https", "local", "mem", "memory":
			default:
				ok = false
			}
			if !ok {
				t.Fatalf("%q of the deprecated type read as Full", address)
			}
		}
	})
}
