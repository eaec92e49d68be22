package uncommitted_test

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/lakegc/lakegc/uncommitted"
)

// lakeFSToken builds a token the way lakeFS's controller does: the JSON of
// its GCUncommittedMark, standard base64. Written by hand here, so the test
// does not depend on this package's encoder.
func lakeFSToken(json string) string {
	return base64.StdEncoding.EncodeToString([]byte(json))
}

func TestDecodeLakeFSToken(t *testing.T) {
	cases := []struct {
		name string
		json string
		want uncommitted.Checkpoint
	}{
		{"mid-branch", `{"branch":"main","path":"tables/t1/part-0001.parquet","run_id":"ft0vql1ksdua2g49g7c0","key":""}`,
			uncommitted.Checkpoint{BranchID: "main", Path: "tables/t1/part-0001.parquet", RunID: "ft0vql1ksdua2g49g7c0"}},
		{"branch start", `{"branch":"feature/x","path":"","run_id":"r1","key":""}`,
			uncommitted.Checkpoint{BranchID: "feature/x", RunID: "r1"}},
		{"older lakeFS, tracked mark", `{"branch":"","path":"","run_id":"r1","key":"data/a/b","tracked":true}`,
			uncommitted.Checkpoint{RunID: "r1", Key: "data/a/b"}},
		{"unicode and escapes", `{"branch":"dev","path":"日本/\u00e9\"q\"","run_id":"r1","key":""}`,
			uncommitted.Checkpoint{BranchID: "dev", Path: "日本/é\"q\"", RunID: "r1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := uncommitted.DecodeToken(lakeFSToken(c.json))
			if err != nil {
				t.Fatal(err)
			}
			if *got != c.want {
				t.Fatalf("got %+v, want %+v", *got, c.want)
			}
		})
	}
}

func TestEncodeTokenLakeFSShape(t *testing.T) {
	m := &uncommitted.Checkpoint{BranchID: "main", Path: "a/b<c>&", RunID: "ft0vql1ksdua2g49g7c0", Key: "k"}
	tok := uncommitted.EncodeToken(m)
	raw, err := base64.StdEncoding.DecodeString(tok)
	if err != nil {
		t.Fatalf("not standard base64: %v", err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"branch": "main", "path": "a/b<c>&", "run_id": "ft0vql1ksdua2g49g7c0", "key": "k"}
	if !reflect.DeepEqual(fields, want) {
		t.Fatalf("token JSON %s, want the fields %v", raw, want)
	}
	if uncommitted.EncodeToken(nil) != "" {
		t.Fatal("a nil mark must encode as the empty token")
	}
	if m, err := uncommitted.DecodeToken(""); m != nil || err != nil {
		t.Fatalf("empty token: %v, %v", m, err)
	}
}

func TestDecodeTokenRejects(t *testing.T) {
	for name, tok := range map[string]string{
		"not base64":        "%%%",
		"url base64":        base64.URLEncoding.EncodeToString([]byte(`{"run_id":"r1","path":"??>"}`)),
		"not json":          lakeFSToken("hello"),
		"json null":         lakeFSToken("null"),
		"json array":        lakeFSToken(`["r1"]`),
		"wrong type":        lakeFSToken(`{"branch":1,"run_id":"r1"}`),
		"no run id":         lakeFSToken(`{"branch":"main","path":"","key":""}`),
		"run id with slash": lakeFSToken(`{"run_id":"../../x"}`),
		"run id dot dot":    lakeFSToken(`{"run_id":".."}`),
		"run id control":    lakeFSToken(`{"run_id":"a\nb"}`),
		"run id backslash":  lakeFSToken(`{"run_id":"a\\b"}`),
		"run id space":      lakeFSToken(`{"run_id":"a b"}`),
		"trailing garbage":  lakeFSToken(`{"run_id":"r1"}x`),
	} {
		t.Run(name, func(t *testing.T) {
			m, err := uncommitted.DecodeToken(tok)
			if !errors.Is(err, uncommitted.ErrInvalidToken) || m != nil {
				t.Fatalf("DecodeToken(%q) = %v, %v; want ErrInvalidToken", tok, m, err)
			}
		})
	}
}

func FuzzDecodeToken(f *testing.F) {
	f.Add("")
	f.Add(lakeFSToken(`{"branch":"main","path":"a/b","run_id":"ft0vql1ksdua2g49g7c0","key":""}`))
	f.Add(lakeFSToken(`{"branch":"\ud800","path":"\u0000","run_id":"r","key":"x","tracked":true}`))
	f.Add(lakeFSToken(`{"run_id":"/"}`))
	f.Add(lakeFSToken(`null`))
	f.Add("e30=")
	f.Add("!!!")
	f.Fuzz(func(t *testing.T, tok string) {
		m, err := uncommitted.DecodeToken(tok)
		if err != nil {
			if !errors.Is(err, uncommitted.ErrInvalidToken) {
				t.Fatalf("error %v does not wrap ErrInvalidToken", err)
			}
			return
		}
		if m == nil {
			if tok != "" {
				t.Fatalf("nil mark for non-empty token %q", tok)
			}
			return
		}
		again, err := uncommitted.DecodeToken(uncommitted.EncodeToken(m))
		if err != nil || *again != *m {
			t.Fatalf("round trip of %+v: %+v, %v", *m, again, err)
		}
	})
}
