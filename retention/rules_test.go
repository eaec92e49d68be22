package retention

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		rules *Rules
		ok    bool
	}{
		{"zero rules", &Rules{}, true},
		{"branch rules of 0 days", &Rules{DefaultRetentionDays: 1, BranchRetentionDays: map[string]int32{"main": 0}}, true},
		{"nil rules", nil, false},
		{"negative default", &Rules{DefaultRetentionDays: -1}, false},
		{"negative branch days", &Rules{BranchRetentionDays: map[string]int32{"main": 3, "dev": -2}}, false},
		{"empty branch ID", &Rules{BranchRetentionDays: map[string]int32{"": 3}}, false},
		{"branch ID not UTF-8", &Rules{BranchRetentionDays: map[string]int32{"ma\xffin": 3}}, false},
	}
	for _, tc := range cases {
		err := tc.rules.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidRules) {
			t.Errorf("%s: %v does not wrap ErrInvalidRules", tc.name, err)
		}
	}
}

func TestRetentionDays(t *testing.T) {
	r := &Rules{DefaultRetentionDays: 21, BranchRetentionDays: map[string]int32{"main": 90, "tmp": 0}}
	for branch, want := range map[string]int32{"main": 90, "tmp": 0, "dev": 21, "": 21} {
		if got := r.RetentionDays(branch); got != want {
			t.Errorf("RetentionDays(%q) = %d, want %d", branch, got, want)
		}
	}
	if got := (&Rules{DefaultRetentionDays: 5}).RetentionDays("main"); got != 5 {
		t.Errorf("nil map: RetentionDays = %d, want 5", got)
	}
}

// readHex reads a golden .hex file: hex byte pairs, '#' comments.
func readHex(t testing.TB, path string) []byte {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var digits strings.Builder
	for line := range strings.Lines(string(text)) {
		line, _, _ = strings.Cut(line, "#")
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// TestGoldenBinary checks the protobuf form against bytes written out by hand
// in testdata/rules: every file decodes to the rules of its JSON twin, and the
// ones we write the same way as lakeFS encode to exactly those bytes.
func TestGoldenBinary(t *testing.T) {
	files, err := filepath.Glob("testdata/rules/*.hex")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(file, ".hex")
		t.Run(filepath.Base(name), func(t *testing.T) {
			golden := readHex(t, file)
			jsonText, err := os.ReadFile(name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var want Rules
			if err := json.Unmarshal(jsonText, &want); err != nil {
				t.Fatal(err)
			}
			var got Rules
			if err := got.UnmarshalBinary(golden); err != nil {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			if !rulesEqual(got, want) {
				t.Errorf("UnmarshalBinary = %+v, want %+v", got, want)
			}
			if strings.HasSuffix(name, ".lakefs") {
				return
			}
			b, err := want.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, golden) {
				t.Errorf("MarshalBinary = % x\nwant            % x", b, golden)
			}
			j, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if string(j) != strings.TrimSpace(string(jsonText)) {
				t.Errorf("MarshalJSON = %s\nwant          %s", j, jsonText)
			}
		})
	}
}

// rulesEqual compares rules, a nil map being equal to an empty one.
func rulesEqual(a, b Rules) bool {
	return a.DefaultRetentionDays == b.DefaultRetentionDays && maps.Equal(a.BranchRetentionDays, b.BranchRetentionDays)
}

func TestUnmarshalBinaryRejects(t *testing.T) {
	cases := map[string]struct{ hex, why string }{
		"truncated varint":              {"08 ac", "unexpected EOF"},
		"truncated entry":               {"12 08 0a 04 6d 61", "unexpected EOF"},
		"entry length past the end":     {"12 09 0a 04 6d 61 69 6e 10 5a", "unexpected EOF"},
		"truncated key":                 {"12 04 0a 05 6d 61 69 6e", "unexpected EOF"},
		"field number 0":                {"00 01", "invalid field number"},
		"default as bytes":              {"0a 01 07", "field 1 has wire type 2"},
		"map as varint":                 {"10 05", "field 2 has wire type 0"},
		"key as varint":                 {"12 02 08 01", "map entry field 1 has wire type 0"},
		"value as bytes":                {"12 03 12 01 05", "map entry field 2 has wire type 2"},
		"negative default":              {"08 ff ff ff ff ff ff ff ff ff 01", "negative default"},
		"negative branch days":          {"12 11 0a 04 6d 61 69 6e 10 ff ff ff ff ff ff ff ff ff 01", "negative retention days -1"},
		"entry without key":             {"12 02 10 05", "empty branch ID"},
		"key not UTF-8":                 {"12 05 0a 03 61 ff 62", "not valid UTF-8"},
		"unknown field truncated":       {"78", "unexpected EOF"},
		"unknown group not closed":      {"7b 08 01", "unexpected EOF"},
		"unknown end group":             {"7c", "mismatching end group"},
		"reserved wire type":            {"7e 00", "reserved wire type"},
		"varint longer than 10 bytes":   {"08 80 80 80 80 80 80 80 80 80 80 01", "variable length integer overflow"},
		"unknown bytes past the end":    {"7a 05 01", "unexpected EOF"},
		"unknown field in entry broken": {"12 03 0a 00 78", "unexpected EOF"},
	}
	for name, tc := range cases {
		b, err := hex.DecodeString(strings.ReplaceAll(tc.hex, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		before := Rules{DefaultRetentionDays: 9}
		r := before
		err = r.UnmarshalBinary(b)
		if !errors.Is(err, ErrInvalidRules) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: UnmarshalBinary(% x) = %v, want ErrInvalidRules: ...%s...", name, b, err, tc.why)
		}
		if !reflect.DeepEqual(r, before) {
			t.Errorf("%s: rules changed on error: %+v", name, r)
		}
	}
}

func TestUnmarshalBinaryProto3(t *testing.T) {
	cases := []struct {
		name, hex string
		want      Rules
	}{
		{"entry without value", "12 06 0a 04 6d 61 69 6e", Rules{BranchRetentionDays: map[string]int32{"main": 0}}},
		{"last default wins", "08 01 08 02", Rules{DefaultRetentionDays: 2}},
		{"last entry for a key wins", "12 05 0a 01 61 10 01 12 05 0a 01 61 10 02", Rules{BranchRetentionDays: map[string]int32{"a": 2}}},
		{"unknown fields of every wire type", "19 01 02 03 04 05 06 07 08 25 01 02 03 04 2b 08 01 2c 32 01 00 08 04",
			Rules{DefaultRetentionDays: 4}},
		{"unknown field inside an entry", "12 07 18 07 0a 01 62 10 02", Rules{BranchRetentionDays: map[string]int32{"b": 2}}},
		{"int32 keeps the low 32 bits", "08 85 80 80 80 10", Rules{DefaultRetentionDays: 5}},
	}
	for _, tc := range cases {
		b, err := hex.DecodeString(strings.ReplaceAll(tc.hex, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		var r Rules
		if err := r.UnmarshalBinary(b); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !rulesEqual(r, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, r, tc.want)
		}
	}
}

// TestZeroRulesAreNoRules checks that the zero rules, in every protobuf
// spelling, read as no rules (ErrNotFound) and encode as no bytes, as lakeFS
// writes them; and that ActiveCommits refuses them.
func TestZeroRulesAreNoRules(t *testing.T) {
	for _, r := range []Rules{{}, {BranchRetentionDays: map[string]int32{}}} {
		b, err := r.MarshalBinary()
		if err != nil || len(b) != 0 {
			t.Errorf("MarshalBinary(%+v) = % x, %v; want no bytes", r, b, err)
		}
	}
	for _, h := range []string{
		"",                  // lakeFS's spelling
		"08 00",             // spelt out
		"08 80 80 80 80 10", // 2^32: int32 keeps the low 32 bits, 0
		"78 01",             // an unknown field only
		"08 05 08 00",       // the last default wins
	} {
		b, err := hex.DecodeString(strings.ReplaceAll(h, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		before := Rules{DefaultRetentionDays: 9}
		r := before
		if err := r.UnmarshalBinary(b); !errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalidRules) {
			t.Errorf("UnmarshalBinary(% x) = %v; want ErrNotFound", b, err)
		}
		if !reflect.DeepEqual(r, before) {
			t.Errorf("UnmarshalBinary(% x) changed the rules: %+v", b, r)
		}
	}
	src := newFakeSource([]Commit{commit("a", testNow)})
	if got, err := ActiveCommits(t.Context(), branchSeq(Branch{"main", "a"}), src, &Rules{}, testNow); !errors.Is(err, ErrNotFound) || got != nil {
		t.Errorf("ActiveCommits with the zero rules = %v, %v; want ErrNotFound", got, err)
	}
}

func TestMarshalRejectsInvalidRules(t *testing.T) {
	bad := Rules{DefaultRetentionDays: -3}
	if _, err := bad.MarshalBinary(); !errors.Is(err, ErrInvalidRules) {
		t.Errorf("MarshalBinary: %v, want ErrInvalidRules", err)
	}
	if _, err := json.Marshal(bad); !errors.Is(err, ErrInvalidRules) {
		t.Errorf("MarshalJSON: %v, want ErrInvalidRules", err)
	}
}

func TestMarshalJSONSortsBranches(t *testing.T) {
	r := Rules{DefaultRetentionDays: 1, BranchRetentionDays: map[string]int32{"zeta": 1, "alpha": 2, "mid": 3}}
	want := `{"default_retention_days":1,"branches":[{"branch_id":"alpha","retention_days":2},` +
		`{"branch_id":"mid","retention_days":3},{"branch_id":"zeta","retention_days":1}]}`
	for range 5 { // map order varies between iterations
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Fatalf("got  %s\nwant %s", b, want)
		}
	}
}

func TestUnmarshalJSON(t *testing.T) {
	ok := map[string]Rules{
		`{"default_retention_days":7,"branches":[]}`: {DefaultRetentionDays: 7},
		`{"branches":[{"retention_days":1,"branch_id":"a"}],"default_retention_days":0}`: {
			BranchRetentionDays: map[string]int32{"a": 1}},
		`{"default_retention_days":7,"branches":[],"extra":true}`: {DefaultRetentionDays: 7},
		// lakeFS's GET /settings/gc_rules when no branch has a rule.
		`{"default_retention_days":7,"branches":null}`: {DefaultRetentionDays: 7},
		`{"branches":null,"default_retention_days":0}`: {},
	}
	for in, want := range ok {
		var r Rules
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Errorf("%s: %v", in, err)
		} else if !rulesEqual(r, want) {
			t.Errorf("%s: got %+v, want %+v", in, r, want)
		}
	}
	bad := []string{
		`{}`,
		`null`,
		`[]`,
		`{"default_retention_days":7}`,
		`{"branches":[]}`,
		`{"default_retention_days":null,"branches":[]}`,
		`{"default_retention_days":7,"branches":[{"branch_id":"a"}]}`,
		`{"default_retention_days":7,"branches":[null]}`,
		`{"default_retention_days":7,"branches":"main"}`,
		`{"default_retention_days":7,"branches":[{"retention_days":1}]}`,
		`{"default_retention_days":7,"branches":[{"branch_id":"","retention_days":1}]}`,
		`{"default_retention_days":7,"branches":[{"branch_id":"a","retention_days":1},{"branch_id":"a","retention_days":2}]}`,
		`{"default_retention_days":-1,"branches":[]}`,
		`{"default_retention_days":7,"branches":[{"branch_id":"a","retention_days":-1}]}`,
		`{"default_retention_days":2147483648,"branches":[]}`,
		`{"default_retention_days":1.5,"branches":[]}`,
		`{"default_retention_days":"7","branches":[]}`,
		`{"default_retention_days":7,"branches":{}}`,
		`{"default_retention_days":7,"branches":[]}x`,
		// Not UTF-8: encoding/json would read the branch as "ma\ufffdin", a
		// rule for another branch than the one the writer meant.
		"{\"default_retention_days\":7,\"branches\":[{\"branch_id\":\"ma\xffin\",\"retention_days\":1}]}",
		"{\"default_retention_days\":7,\"branches\":[],\"note\":\"\xfe\"}",
	}
	for _, in := range bad {
		r := Rules{DefaultRetentionDays: 9}
		err := r.UnmarshalJSON([]byte(in))
		if !errors.Is(err, ErrInvalidRules) {
			t.Errorf("%s: %v, want ErrInvalidRules", in, err)
		}
		if r.DefaultRetentionDays != 9 || r.BranchRetentionDays != nil {
			t.Errorf("%s: rules changed on error: %+v", in, r)
		}
	}
}
