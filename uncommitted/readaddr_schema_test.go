package uncommitted_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"gocloud.dev/blob/memblob"

	"github.com/lakegc/lakegc/internal/parquetguard/guardtest"
	"github.com/lakegc/lakegc/uncommitted"
)

// readBoth is what Addresses (got, err) and ReadRun (want, werr) read of
// a run.
type readBoth struct {
	got, want []string
	err, werr error
}

// schemaFile writes rows as a run's only file, and returns what Addresses
// and ReadRun read of it.
func schemaFile[T any](t *testing.T, rows []T) (r readBoth) {
	t.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	return schemaBytes(t, buf.Bytes())
}

// schemaBytes stores data as a run's only file, and returns what
// Addresses and ReadRun read of it.
func schemaBytes(t *testing.T, data []byte) (r readBoth) {
	t.Helper()
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	if err := bucket.WriteAll(ctx, "_lakefs/retention/gc/uncommitted/r/uncommitted/f", data, nil); err != nil {
		t.Fatal(err)
	}
	r.got, r.err = readAddresses(ctx, bucket, "r")
	r.want, r.werr = readRunAddresses(ctx, bucket, "r")
	return r
}

// TestAddressesSchemas: a file whose physical_address column is missing,
// or not a flat column of strings (INT64, FIXED_LEN_BYTE_ARRAY, a group,
// repeated), or is there twice, is refused with ErrInvalidFile by Addresses as by ReadRun,
// having yielded nothing; a file with the column in another place, with
// a column more, or without creation_date, yields its addresses, as
// ReadRun's rows have them; a null of an optional column is the empty
// address, as in ReadRun's Row.
func TestAddressesSchemas(t *testing.T) {
	refused := func(t *testing.T, r readBoth) {
		t.Helper()
		got, want, err, werr := r.got, r.want, r.err, r.werr
		if !errors.Is(err, uncommitted.ErrInvalidFile) || len(got) != 0 {
			t.Errorf("Addresses: %q, %v; want nothing and ErrInvalidFile", got, err)
		}
		if !errors.Is(werr, uncommitted.ErrInvalidFile) || len(want) != 0 {
			t.Errorf("ReadRun: %q, %v; want nothing and ErrInvalidFile", want, werr)
		}
	}
	read := func(addresses ...string) func(t *testing.T, r readBoth) {
		return func(t *testing.T, r readBoth) {
			t.Helper()
			got, want, err, werr := r.got, r.want, r.err, r.werr
			if err != nil || !slices.Equal(got, addresses) {
				t.Errorf("Addresses: %q, %v; want %q", got, err, addresses)
			}
			if werr != nil || !slices.Equal(want, addresses) {
				t.Errorf("ReadRun: %q, %v; want %q", want, werr, addresses)
			}
		}
	}
	type group struct {
		X string `parquet:"x"`
	}
	a := "data/a"
	cases := map[string]func(*testing.T){
		"missing": func(t *testing.T) {
			refused(t, schemaFile(t, []struct {
				Other        string `parquet:"other"`
				CreationDate int64  `parquet:"creation_date"`
			}{{"data/a", 1}}))
		},
		"int64": func(t *testing.T) {
			refused(t, schemaFile(t, []struct {
				PhysicalAddress int64 `parquet:"physical_address"`
				CreationDate    int64 `parquet:"creation_date"`
			}{{5, 1}}))
		},
		"fixed": func(t *testing.T) {
			refused(t, schemaFile(t, []struct {
				PhysicalAddress [6]byte `parquet:"physical_address"`
				CreationDate    int64   `parquet:"creation_date"`
			}{{[6]byte([]byte("data/a")), 1}}))
		},
		"group": func(t *testing.T) {
			refused(t, schemaFile(t, []struct {
				PhysicalAddress group `parquet:"physical_address"`
				CreationDate    int64 `parquet:"creation_date"`
			}{{group{"data/a"}, 1}}))
		},
		"repeated": func(t *testing.T) {
			refused(t, schemaFile(t, []struct {
				PhysicalAddress []string `parquet:"physical_address"`
				CreationDate    int64    `parquet:"creation_date"`
			}{{[]string{"data/a", "data/b"}, 1}}))
		},
		"twice": func(t *testing.T) {
			column := func(a, b string) guardtest.Column {
				return guardtest.Column{Name: "physical_address", Type: format.ByteArray, String: true,
					Pages: []guardtest.Page{guardtest.DataPage(format.Uncompressed, format.Plain, 2, guardtest.Plain([]byte(a), []byte(b)))}}
			}
			refused(t, schemaBytes(t, guardtest.File(2, column("data/a", "data/b"), column("data/c", "data/d"))))
		},
		"reordered": func(t *testing.T) {
			read("data/a", "data/b")(t, schemaFile(t, []struct {
				CreationDate    int64  `parquet:"creation_date"`
				PhysicalAddress string `parquet:"physical_address"`
			}{{1, "data/a"}, {2, "data/b"}}))
		},
		"extra": func(t *testing.T) {
			read("data/a")(t, schemaFile(t, []struct {
				PhysicalAddress string `parquet:"physical_address"`
				CreationDate    int64  `parquet:"creation_date"`
				Extra           string `parquet:"extra"`
			}{{"data/a", 1, "x"}}))
		},
		"no creation_date": func(t *testing.T) {
			read("data/a")(t, schemaFile(t, []struct {
				PhysicalAddress string `parquet:"physical_address"`
			}{{"data/a"}}))
		},
		"optional": func(t *testing.T) {
			read("data/a", "")(t, schemaFile(t, []optionalRow{{&a, 1}, {nil, 2}}))
		},
	}
	for name, c := range cases {
		t.Run(name, c)
	}
}
