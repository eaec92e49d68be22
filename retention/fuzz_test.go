package retention

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// addGoldenSeeds adds every file of testdata/rules with the given extension,
// decoded by read, to the corpus.
func addGoldenSeeds(f *testing.F, ext string, read func(path string) []byte) {
	files, err := filepath.Glob("testdata/rules/*" + ext)
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	for _, file := range files {
		f.Add(read(file))
	}
}

func FuzzUnmarshalBinary(f *testing.F) {
	addGoldenSeeds(f, ".hex", func(path string) []byte { return readHex(f, path) })
	f.Add([]byte{})
	f.Add([]byte{0x12, 0x02, 0x10, 0x05})
	f.Add([]byte{0x7b, 0x08, 0x01, 0x7c, 0x08, 0x01})
	// A field number of 2^29: past protobuf's maximum, which ConsumeTag does not check.
	f.Add([]byte{0x08, 0x05, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00})
	f.Add([]byte{0x08, 0x00})
	f.Add([]byte{0x0a, 0x01, 0x07, 0x08, 0x07})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkLikeProtobuf(t, b)
		var r Rules
		if err := r.UnmarshalBinary(b); err != nil {
			return
		}
		enc, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("accepted % x but cannot encode %+v: %v", b, r, err)
		}
		var again Rules
		if err := again.UnmarshalBinary(enc); err != nil {
			t.Fatalf("cannot decode own encoding % x: %v", enc, err)
		}
		if !rulesEqual(r, again) {
			t.Fatalf("round trip: %+v became %+v", r, again)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("accepted rules %+v have no JSON form: %v", r, err)
		}
	})
}

func FuzzUnmarshalJSON(f *testing.F) {
	addGoldenSeeds(f, ".json", func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		return b
	})
	f.Add([]byte(`{"default_retention_days":7,"branches":[{"branch_id":"a\u00e9","retention_days":1}],"x":[1]}`))
	f.Add([]byte(`{"default_retention_days":7,"branches":[{"branch_id":"a","retention_days":-1}]}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"default_retention_days":7,"branches":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Rules
		if err := r.UnmarshalJSON(b); err != nil {
			return
		}
		enc, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("accepted %q but cannot encode %+v: %v", b, r, err)
		}
		var again Rules
		if err := again.UnmarshalJSON(enc); err != nil {
			t.Fatalf("cannot decode own encoding %s: %v", enc, err)
		}
		if !rulesEqual(r, again) {
			t.Fatalf("round trip: %+v became %+v", r, again)
		}
		if _, err := r.MarshalBinary(); err != nil {
			t.Fatalf("accepted rules %+v have no protobuf form: %v", r, err)
		}
	})
}
