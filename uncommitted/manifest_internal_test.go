package uncommitted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"gocloud.dev/blob/memblob"
)

func validManifestJSON(t testing.TB) []byte {
	t.Helper()
	b, err := json.Marshal(&manifest{Format: manifestFormat, Version: manifestVersion, RunID: "r1", Rows: 7, Files: []manifestFile{
		{Name: "0a1b", Rows: 3, Size: 900}, {Name: "0a1c", Rows: 0, Size: 400}, {Name: "sub/f", Rows: 4, Size: 1000},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeManifestRejects lists manifests a reader must not trust.
func TestDecodeManifestRejects(t *testing.T) {
	head := `{"format":"lakegc uncommitted run","version":1,"run_id":"r1",`
	cases := map[string]string{
		"not JSON":           `{`,
		"not an object":      `[]`,
		"unknown field":      head + `"rows":0,"files":[],"extra":1}`,
		"other format":       `{"format":"x","version":1,"run_id":"r1","rows":0,"files":[]}`,
		"other version":      `{"format":"lakegc uncommitted run","version":2,"run_id":"r1","rows":0,"files":[]}`,
		"other run":          `{"format":"lakegc uncommitted run","version":1,"run_id":"r2","rows":0,"files":[]}`,
		"no run":             `{"format":"lakegc uncommitted run","version":1,"rows":0,"files":[]}`,
		"total differs":      head + `"rows":5,"files":[{"name":"a","rows":4,"size":1}]}`,
		"negative rows":      head + `"rows":-1,"files":[{"name":"a","rows":-1,"size":1}]}`,
		"negative size":      head + `"rows":1,"files":[{"name":"a","rows":1,"size":-1}]}`,
		"rows overflow":      head + `"rows":-2,"files":[{"name":"a","rows":9223372036854775807,"size":1},{"name":"b","rows":9223372036854775807,"size":1}]}`,
		"unsorted":           head + `"rows":2,"files":[{"name":"b","rows":1,"size":1},{"name":"a","rows":1,"size":1}]}`,
		"duplicate":          head + `"rows":2,"files":[{"name":"a","rows":1,"size":1},{"name":"a","rows":1,"size":1}]}`,
		"empty name":         head + `"rows":1,"files":[{"name":"","rows":1,"size":1}]}`,
		"hidden name":        head + `"rows":1,"files":[{"name":"_SUCCESS","rows":1,"size":1}]}`,
		"hidden folder":      head + `"rows":1,"files":[{"name":"a/../b","rows":1,"size":1}]}`,
		"fractional rows":    head + `"rows":1.5,"files":[]}`,
		"data after":         head + `"rows":0,"files":[]} {}`,
		"two objects":        head + `"rows":0,"files":[]}{"x":1}`,
		"over the size cap":  head + `"rows":0,"files":[]}` + strings.Repeat(" ", MaxManifestSize),
		"string for a count": head + `"rows":"0","files":[]}`,
	}
	for name, data := range cases {
		if m, err := decodeManifest([]byte(data), "r1"); !errors.Is(err, ErrIncomplete) {
			t.Errorf("%s: got %+v, %v; want ErrIncomplete", name, m, err)
		}
	}
	if _, err := decodeManifest(validManifestJSON(t), "r1"); err != nil {
		t.Fatalf("valid manifest: %v", err)
	}
}

// FuzzDecodeManifest: the manifest is read from the bucket, outside input.
// Decoding never panics; what it accepts satisfies the invariants ReadRun
// relies on, and encodes back to an equal manifest.
func FuzzDecodeManifest(f *testing.F) {
	valid := validManifestJSON(f)
	f.Add(valid)
	f.Add(bytes.Replace(valid, []byte(`"0a1c"`), []byte(`"0a1a"`), 1))
	f.Add(bytes.Replace(valid, []byte(`"rows":7`), []byte(`"rows":8`), 1))
	f.Add([]byte(`{"format":"lakegc uncommitted run","version":1,"run_id":"r1","rows":0,"files":[]}`))
	f.Add([]byte(`{"format":"lakegc uncommitted run","version":1,"run_id":"r1","rows":0,"files":null}`))
	f.Add([]byte(`{"format":"lakegc uncommitted run","version":1,"run_id":"r1","rows":1,"files":[{"name":"a/_b","rows":1,"size":0}]}`))
	f.Add([]byte(`{"run_id":"r1","run_id":"r1"}`))
	f.Add([]byte(`null`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeManifest(data, "r1")
		if err != nil {
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("error %v does not wrap ErrIncomplete", err)
			}
			return
		}
		var sum int64
		for i, file := range m.Files {
			if file.Name == "" || hidden(file.Name) || i > 0 && file.Name <= m.Files[i-1].Name || file.Rows < 0 || file.Size < 0 {
				t.Fatalf("accepted file %d: %+v", i, file)
			}
			sum += file.Rows
		}
		if sum != m.Rows || m.RunID != "r1" {
			t.Fatalf("accepted %+v", m)
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := decodeManifest(again, "r1")
		if err != nil || !reflect.DeepEqual(m2, m) {
			t.Fatalf("round trip: %+v, %v; want %+v", m2, err, m)
		}
	})
}

func TestHidden(t *testing.T) {
	for name, want := range map[string]bool{
		"part-0": false, "sub/part-0": false, "a//b": false, "a.b_c": false,
		"_SUCCESS": true, ".crc": true, "_temporary/0/part-0": true, ".spark-staging/x": true,
		"sub/_tmp/part-0": true, "a/.b": true, ManifestName: true,
	} {
		if got := hidden(name); got != want {
			t.Errorf("hidden(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestDescribeRunErrorText: a file that is not Parquet, and a cancelled
// listing, are errors that name the package once and say the step.
func TestDescribeRunErrorText(t *testing.T) {
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	const folder = "_lakefs/retention/gc/uncommitted/r1/uncommitted/"
	if err := bucket.WriteAll(ctx, folder+"f.parquet", []byte("not parquet"), nil); err != nil {
		t.Fatal(err)
	}
	_, err := describeRun(ctx, bucket, folder, "r1")
	want := "uncommitted: run r1: read the footer of f.parquet: invalid run file: 11 bytes, too short for Parquet"
	if !errors.Is(err, ErrInvalidFile) || err.Error() != want {
		t.Errorf("describeRun = %v; want %q", err, want)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = describeRun(cancelled, bucket, folder, "r1")
	if want := "uncommitted: list " + folder + ": context canceled"; !errors.Is(err, context.Canceled) || err.Error() != want {
		t.Errorf("describeRun, cancelled = %v; want %q", err, want)
	}
}
