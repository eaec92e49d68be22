package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Every decoder of lakeFS's answers: bad bytes are an error, never a panic,
// and a success satisfies what the callers rely on.

func addSeeds(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(``))
	f.Add([]byte(`null`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"message":"x"}{}`))
}

func FuzzDecodeRepository(f *testing.F) {
	addSeeds(f, recordedRepository, `{"id":"r","storage_namespace":"s3://b","default_branch":"main","creation_date":-1}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRepository(b)
		if err == nil && (r.ID == "" || r.StorageNamespace == "" || r.DefaultBranch == "") {
			t.Fatalf("%q decoded to %+v", b, r)
		}
	})
}

func FuzzDecodeGCRules(f *testing.F) {
	addSeeds(f, recordedRules, recordedNoBranches, `{"default_retention_days":0,"branches":[]}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeGCRules(b)
		if err != nil {
			return
		}
		if r.DefaultRetentionDays < 0 {
			t.Fatalf("%q: negative default %d", b, r.DefaultRetentionDays)
		}
		seen := map[string]bool{}
		for i, br := range r.Branches {
			if br.BranchID == "" || br.RetentionDays < 0 || seen[br.BranchID] ||
				i > 0 && r.Branches[i-1].BranchID >= br.BranchID {
				t.Fatalf("%q decoded to %+v", b, r)
			}
			seen[br.BranchID] = true
		}
	})
}

func checkPrepareResult(t *testing.T, b []byte, r *PrepareCommitsResult) {
	if r.RunID == "" || r.CommitsLocation == "" || r.AddressesLocation == "" {
		t.Fatalf("%q decoded to %+v", b, r)
	}
}

func FuzzDecodePrepareCommits(f *testing.F) {
	addSeeds(f, recordedPrepare, recordedQuirk)
	f.Fuzz(func(t *testing.T, b []byte) {
		if r, err := decodePrepareCommits(b); err == nil {
			checkPrepareResult(t, b, r)
		}
	})
}

func FuzzDecodePresignQuirk(f *testing.F) {
	addSeeds(f, recordedQuirk, recordedPrepare, `{"message":""}`+recordedPrepare)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := decodePresignQuirk(b)
		if !ok {
			return
		}
		checkPrepareResult(t, b, r)
		if !utf8.ValidString(r.Warning) || strings.ContainsAny(r.Warning, "\r\n") {
			t.Fatalf("%q: warning %q", b, r.Warning)
		}
	})
}

func FuzzDecodeTaskCreation(f *testing.F) {
	addSeeds(f, recordedTask, `{"id":""}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := decodeTaskCreation(b); err == nil && id == "" {
			t.Fatalf("%q: empty task ID", b)
		}
	})
}

func FuzzDecodeTaskStatus(f *testing.F) {
	addSeeds(f, recordedTaskStatus, recordedTaskRun,
		`{"completed":true,"error":{"message":"boom"},"task_id":"t","update_time":"2025-11-30T14:00:00Z"}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeTaskStatus(b)
		if err != nil {
			return
		}
		if s.TaskID == "" {
			t.Fatalf("%q: empty task ID", b)
		}
		if !s.Completed && (s.Result != nil || s.Error != "") {
			t.Fatalf("%q: a running task with an outcome: %+v", b, s)
		}
		if s.Completed && (s.Result == nil) == (s.Error == "") {
			t.Fatalf("%q: a completed task needs exactly one of result and error: %+v", b, s)
		}
		if s.Result != nil {
			checkPrepareResult(t, b, s.Result)
		}
	})
}

func FuzzDecodeUncommitted(f *testing.F) {
	addSeeds(f, recordedUncomm, `{"run_id":"r","gc_uncommitted_location":"","continuation_token":null}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		if p, err := decodeUncommitted(b); err == nil && p.RunID == "" {
			t.Fatalf("%q: empty run ID", b)
		}
	})
}

func FuzzErrorMessage(f *testing.F) {
	addSeeds(f, recordedNotFound, recordedQuirk, "<html>\n<body>502</body>", "\xff\xfe"+strings.Repeat("é", 400))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := errorMessage(b)
		if !utf8.ValidString(m) || strings.ContainsAny(m, "\r\n\t") || len(m) > maxMessageBytes+len("…") {
			t.Fatalf("%q: message %q", b, m)
		}
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", "-1", "Sun, 30 Nov 2025 12:00:30 GMT", "99999999999999999999", "Mon, 01 Jan 10000 00:00:00 GMT"} {
		f.Add(s)
	}
	now := time.Date(2025, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := parseRetryAfter(s, now); d < 0 || !ok && d != 0 {
			t.Fatalf("parseRetryAfter(%q) = %v, %v", s, d, ok)
		}
	})
}

func FuzzRelativeKey(f *testing.F) {
	f.Add("s3://bucket/repo1", "s3://bucket/repo1/data/x")
	f.Add("local://api-it", "local://api-it/_lakefs/retention/gc/uncommitted/u9/uncommitted/")
	f.Add("s3://bucket/repo1", "s3://bucket/repo1/data/../x")
	f.Fuzz(func(t *testing.T, ns, loc string) {
		key, err := RelativeKey(ns, loc)
		if err != nil {
			return
		}
		if strings.TrimRight(ns, "/")+"/"+key != loc {
			t.Fatalf("RelativeKey(%q, %q) = %q: not the location's tail", ns, loc, key)
		}
		for _, seg := range strings.Split(strings.TrimSuffix(key, "/"), "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("RelativeKey(%q, %q) = %q: bad segment", ns, loc, key)
			}
		}
	})
}

func FuzzResolveNamespace(f *testing.F) {
	f.Add("local://rec", "local:///tmp/lfx/bs/rec/_lakefs/retention/gc/commits/run_id=r/commits.csv", "r")
	f.Add("s3://b/r", "s3://b/r/_lakefs/retention/gc/commits/run_id=r/commits.csv", "r")
	f.Fuzz(func(t *testing.T, ns, loc, run string) {
		root, err := ResolveNamespace(ns, &PrepareCommitsResult{RunID: run, CommitsLocation: loc})
		if err != nil {
			return
		}
		// The report is under the root, one storage-prefix folder down.
		key, err := RelativeKey(root, loc)
		if err != nil || strings.Count(key, "/") < 5 || !strings.HasSuffix(key, "/retention/gc/commits/run_id="+run+"/commits.csv") {
			t.Fatalf("ResolveNamespace(%q, %q, %q) = %q: report key %q, %v", ns, loc, run, root, key, err)
		}
	})
}

func FuzzDecodePage(f *testing.F) {
	for _, s := range []string{
		`{"pagination":{"has_more":true,"next_offset":"b","results":2,"max_per_page":2},"results":[{"id":"a"},{"id":"b"}]}`,
		`{"pagination":{"has_more":false,"next_offset":""},"results":[]}`,
		`{"pagination":{"has_more":true,"next_offset":""},"results":[]}`,
		`{"pagination":{"has_more":false},"results":{}}`,
	} {
		f.Add([]byte(s), "")
		f.Add([]byte(s), "b")
	}
	f.Fuzz(func(t *testing.T, b []byte, after string) {
		results, next, err := decodePage(b, after)
		if err != nil {
			return
		}
		// A next page is one past after; the results are JSON values.
		if next != "" && next == after || !json.Valid(b) {
			t.Fatalf("%q after %q: next %q", b, after, next)
		}
		for _, r := range results {
			if !json.Valid(r) {
				t.Fatalf("%q: result %q", b, r)
			}
		}
	})
}

func FuzzDecodeListingEntries(f *testing.F) {
	addSeeds(f, `{"id":"main","commit_id":"c1"}`, `{"type":"added","path":"a","path_type":"object","size_bytes":3}`,
		`{"path":"a","path_type":"object","physical_address":"local:///bs/r/data/g1/x,sig","checksum":"c","mtime":1}`)
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := decodeBranch(b); err == nil && id == "" {
			t.Fatalf("%q: branch without a name", b)
		}
		if ch, err := decodeChange(b); err == nil && (ch.Type == "" || ch.Path == "") {
			t.Fatalf("%q: change %+v", b, ch)
		}
		if st, err := decodeObjectStats(b); err == nil && st.PhysicalAddress == "" {
			t.Fatalf("%q: stats %+v", b, st)
		}
	})
}
