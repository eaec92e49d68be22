package api

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestGCRules(t *testing.T) {
	const path = "/api/v1/repositories/r/settings/gc_rules"
	s, srv := newScript(t, map[string][]answer{
		"GET " + path: {
			{status: http.StatusOK, body: `{"branches":[{"branch_id":"main","retention_days":21},{"branch_id":"feature","retention_days":3}],"default_retention_days":7}`},
			{status: http.StatusOK, body: recordedNoBranches},
			{status: http.StatusNotFound, body: recordedNotFound},
		},
		"PUT " + path:    {{status: http.StatusNoContent}},
		"DELETE " + path: {{status: http.StatusNoContent}},
	})
	c, _ := testClient(t, srv)
	ctx := t.Context()

	rules, err := c.GetGCRules(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	want := &GCRules{DefaultRetentionDays: 7, Branches: []BranchRule{{"feature", 3}, {"main", 21}}}
	if !reflect.DeepEqual(rules, want) {
		t.Errorf("GetGCRules = %+v, want %+v (sorted)", rules, want)
	}
	rules, err = c.GetGCRules(ctx, "r")
	if err != nil || !reflect.DeepEqual(rules, &GCRules{DefaultRetentionDays: 7}) {
		t.Errorf(`"branches": null: %+v, %v; want no branch rules`, rules, err)
	}
	if _, err := c.GetGCRules(ctx, "r"); !errors.Is(err, ErrNotFound) {
		t.Errorf("no rules: %v, want ErrNotFound", err)
	}

	if err := c.SetGCRules(ctx, "r", GCRules{DefaultRetentionDays: 0}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteGCRules(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	var put string
	for _, r := range s.requests() {
		if r.method == http.MethodPut {
			put = r.body
		}
	}
	// lakeFS validates the body against its schema: both fields are required.
	if put != `{"default_retention_days":0,"branches":[]}` {
		t.Errorf("PUT body %s", put)
	}
}

// TestSetGCRulesRoundTrip: what SetGCRules sends, lakeFS's decoder reads back
// unchanged (the server echoes the body it got).
func TestSetGCRulesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		rules := GCRules{DefaultRetentionDays: r.IntN(1000)}
		for i := range r.IntN(5) {
			rules.Branches = append(rules.Branches, BranchRule{BranchID: string(rune('a'+i)) + "-branch", RetentionDays: r.IntN(100)})
		}
		body, err := json.Marshal(gcRulesJSON{DefaultRetentionDays: &rules.DefaultRetentionDays, Branches: toJSON(rules.Branches)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeGCRules(body)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !reflect.DeepEqual(*got, rules) {
			t.Fatalf("round trip %+v -> %s -> %+v", rules, body, *got)
		}
	}
}

func toJSON(bs []BranchRule) []branchRuleJSON {
	var out []branchRuleJSON
	for _, b := range bs {
		out = append(out, branchRuleJSON{BranchID: b.BranchID, RetentionDays: &b.RetentionDays})
	}
	return out
}

func TestDecodeGCRulesRefuses(t *testing.T) {
	for _, body := range []string{
		`{}`,
		`{"branches":null}`,
		`{"default_retention_days":-1,"branches":null}`,
		`{"default_retention_days":3000000000,"branches":null}`,
		`{"default_retention_days":1.5,"branches":null}`,
		`{"default_retention_days":"7","branches":null}`,
		`{"default_retention_days":7,"branches":[{"branch_id":"a"}]}`,
		`{"default_retention_days":7,"branches":[{"branch_id":"","retention_days":1}]}`,
		`{"default_retention_days":7,"branches":[{"branch_id":"a","retention_days":1},{"branch_id":"a","retention_days":2}]}`,
		`{"default_retention_days":7,"branches":[{"branch_id":"a","retention_days":-3}]}`,
		`{"default_retention_days":7,"branches":null}{"default_retention_days":1}`,
		`[]`, `null`, ``,
	} {
		if r, err := decodeGCRules([]byte(body)); err == nil {
			t.Errorf("decodeGCRules(%s) = %+v, want an error", body, r)
		}
	}
}

func TestPrepareCommits(t *testing.T) {
	const path = "POST /api/v1/repositories/rec/gc/prepare_commits"
	want := PrepareCommitsResult{
		RunID:             "ft0o431ksdud2e090i80",
		CommitsLocation:   "local:///tmp/lfx/bs/rec/_lakefs/retention/gc/commits/run_id=ft0o431ksdud2e090i80/commits.csv",
		AddressesLocation: "local:///tmp/lfx/bs/rec/_lakefs/retention/gc/addresses",
	}
	t.Run("created", func(t *testing.T) {
		_, srv := newScript(t, map[string][]answer{path: {{status: http.StatusCreated, body: recordedPrepare}}})
		c, _ := testClient(t, srv)
		got, err := c.PrepareCommits(t.Context(), "rec")
		if err != nil || *got != want {
			t.Errorf("PrepareCommits = %+v, %v; want %+v", got, err, want)
		}
	})
	t.Run("presign quirk", func(t *testing.T) {
		_, srv := newScript(t, map[string][]answer{path: {{status: http.StatusBadRequest, body: recordedQuirk}}})
		c, _ := testClient(t, srv)
		got, err := c.PrepareCommits(t.Context(), "rec")
		if err != nil {
			t.Fatal(err)
		}
		w := want
		w.Warning = "local adapter presigned URL: operation not supported"
		if *got != w {
			t.Errorf("PrepareCommits = %+v, want %+v", *got, w)
		}
	})
	// Any other 400 is an error: only the exact shape of the quirk shows the
	// report was written.
	for name, body := range map[string]string{
		"error only":        `{"message":"local adapter presigned URL: operation not supported"}`,
		"result only":       recordedPrepare,
		"result then error": recordedPrepare + `{"message":"x"}`,
		"incomplete result": `{"message":"x"}` + "\n" + `{"run_id":"ft0o431ksdud2e090i80","gc_commits_location":"local:///tmp/lfx/bs/rec/c.csv"}`,
		"three values":      recordedQuirk + `{"message":"x"}`,
		"trailing garbage":  recordedQuirk + `}`,
		"no message":        `{"msg":"x"}` + "\n" + recordedPrepare,
	} {
		t.Run("400 "+name, func(t *testing.T) {
			_, srv := newScript(t, map[string][]answer{path: {{status: http.StatusBadRequest, body: body}}})
			c, _ := testClient(t, srv)
			if got, err := c.PrepareCommits(t.Context(), "rec"); !errors.Is(err, ErrRequest) {
				t.Errorf("PrepareCommits = %+v, %v; want ErrRequest", got, err)
			}
		})
	}
	// The quirk's shape under another status is not accepted either.
	_, srv := newScript(t, map[string][]answer{path: {{status: http.StatusInternalServerError, body: recordedQuirk}}})
	c, _ := testClient(t, srv)
	if _, err := c.PrepareCommits(t.Context(), "rec"); !errors.Is(err, ErrServer) {
		t.Errorf("quirk body with 500: %v, want ErrServer", err)
	}
	// A 201 must carry exactly one complete result.
	for _, body := range []string{`{"run_id":"x"}`, recordedQuirk, `not json`} {
		_, srv := newScript(t, map[string][]answer{path: {{status: http.StatusCreated, body: body}}})
		c, _ := testClient(t, srv)
		if _, err := c.PrepareCommits(t.Context(), "rec"); !errors.Is(err, ErrMalformed) {
			t.Errorf("201 %q: %v, want ErrMalformed", body, err)
		}
	}
}

func TestPrepareCommitsAsync(t *testing.T) {
	const (
		start  = "POST /api/v1/repositories/rec/gc/prepare_commits/async"
		status = "GET /api/v1/repositories/rec/gc/prepare_commits/status"
	)
	s, srv := newScript(t, map[string][]answer{
		start:  {{status: http.StatusAccepted, body: recordedTask}},
		status: {{status: http.StatusOK, body: recordedTaskRun}, {status: http.StatusOK, body: recordedTaskRun}, {status: http.StatusOK, body: recordedTaskStatus}},
	})
	c, waits := testClient(t, srv, WithPollInterval(80*time.Millisecond))
	got, err := c.PrepareCommitsAsync(t.Context(), "rec")
	if err != nil {
		t.Fatal(err)
	}
	if got.RunID != "ft0o40hksdud2e090i90" || got.Warning != "" || !strings.HasSuffix(got.CommitsLocation, "/commits.csv") {
		t.Errorf("result %+v", got)
	}
	if !reflect.DeepEqual(*waits, []time.Duration{DefaultFirstPoll, 80 * time.Millisecond}) {
		t.Errorf("waits %v, want the first poll's, then twice it capped at the poll interval", *waits)
	}
	reqs := s.requests()
	if len(reqs) != 4 || reqs[1].query != "id=GCPCCRCHBegrQM34YeRp6HNA" {
		t.Errorf("requests %+v: want start then three polls with id=<task>", reqs)
	}
	if c.Requests() != 4 {
		t.Errorf("the client counts %d requests, sent 4", c.Requests())
	}

	for name, tc := range map[string]struct {
		body string
		want error
	}{
		"failed":         {`{"completed":true,"error":{"message":"find expired commits: boom"},"task_id":"GCPCCRCHBegrQM34YeRp6HNA","update_time":"2025-11-30T14:00:00Z"}`, ErrTaskFailed},
		"no result":      {`{"completed":true,"task_id":"GCPCCRCHBegrQM34YeRp6HNA","update_time":"2025-11-30T14:00:00Z"}`, ErrMalformed},
		"partial result": {`{"completed":true,"result":{"run_id":"x"},"task_id":"GCPCCRCHBegrQM34YeRp6HNA","update_time":"2025-11-30T14:00:00Z"}`, ErrMalformed},
		"other task":     {strings.Replace(recordedTaskStatus, "GCPCCRCH", "GCPCxxxx", 1), ErrMalformed},
		"no completed":   {`{"task_id":"GCPCCRCHBegrQM34YeRp6HNA"}`, ErrMalformed},
		"unknown task":   {"", ErrNotFound},
		"no rules":       {"no rules", ErrNotFound},
	} {
		first := []answer{{status: http.StatusAccepted, body: recordedTask}}
		a := answer{status: http.StatusOK, body: tc.body}
		switch tc.body {
		case "":
			a = answer{status: http.StatusNotFound, body: recordedNotFound}
		case "no rules":
			first = []answer{{status: http.StatusNotFound, body: recordedNoRules}}
		}
		_, srv := newScript(t, map[string][]answer{start: first, status: {a}})
		c, _ := testClient(t, srv)
		if r, err := c.PrepareCommitsAsync(t.Context(), "rec"); !errors.Is(err, tc.want) {
			t.Errorf("%s: %+v, %v; want %v", name, r, err, tc.want)
		}
	}
}

func TestPrepareAllUncommitted(t *testing.T) {
	const path = "POST /api/v1/repositories/r/gc/prepare_uncommited"
	const loc = "s3://b/r/_lakefs/retention/gc/uncommitted/u9/uncommitted/"
	page := func(run, location, token string) answer {
		j := map[string]string{"run_id": run, "gc_uncommitted_location": location}
		if token != "" {
			j["continuation_token"] = token
		}
		b, _ := json.Marshal(j)
		return answer{status: http.StatusCreated, body: string(b)}
	}
	s, srv := newScript(t, map[string][]answer{path: {page("u9", "", "dDE="), page("u9", loc, "dDI="), page("u9", loc, "")}})
	c, _ := testClient(t, srv)
	exp, err := c.PrepareAllUncommitted(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	if want := (UncommittedExport{RunID: "u9", Location: loc, Calls: 3, Files: 2}); *exp != want {
		t.Errorf("export %+v, want %+v", *exp, want)
	}
	var bodies []string
	for _, r := range s.requests() {
		bodies = append(bodies, r.body)
	}
	if want := []string{`{}`, `{"continuation_token":"dDE="}`, `{"continuation_token":"dDI="}`}; !reflect.DeepEqual(bodies, want) {
		t.Errorf("request bodies %q, want %q", bodies, want)
	}

	for name, pages := range map[string][]answer{
		"run changes":      {page("u9", loc, "dDE="), page("u10", loc, "")},
		"location changes": {page("u9", loc, "dDE="), page("u9", loc+"x/", "")},
		// The error after the repeat ends the loop should the check be missing.
		"same token": {page("u9", loc, "dDE="), page("u9", loc, "dDE="), errAnswer(http.StatusBadRequest, "invalid continuation token")},
		"no run":     {page("", loc, "")},
		// A token seen before would loop for ever; the error ends it should
		// the check be missing.
		"token cycle": {page("u9", loc, "dDE="), page("u9", loc, "dDI="), page("u9", loc, "dDE="), page("u9", loc, "dDI="),
			errAnswer(http.StatusBadRequest, "end of script")},
	} {
		_, srv := newScript(t, map[string][]answer{path: pages})
		c, _ := testClient(t, srv)
		if exp, err := c.PrepareAllUncommitted(t.Context(), "r"); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %+v, %v; want ErrMalformed", name, exp, err)
		}
	}
}

func TestRelativeKey(t *testing.T) {
	for _, tc := range []struct{ ns, loc, want string }{
		{"s3://bucket/repo1", "s3://bucket/repo1/_lakefs/retention/gc/commits/run_id=x/commits.csv", "_lakefs/retention/gc/commits/run_id=x/commits.csv"},
		{"s3://bucket/repo1/", "s3://bucket/repo1/data/gab/cd", "data/gab/cd"},
		{"local://api-it", "local://api-it/_lakefs/retention/gc/uncommitted/u9/uncommitted/", "_lakefs/retention/gc/uncommitted/u9/uncommitted/"},
		{"gs://b", "gs://b/data/x,sig", "data/x,sig"},
	} {
		got, err := RelativeKey(tc.ns, tc.loc)
		if err != nil || got != tc.want {
			t.Errorf("RelativeKey(%q, %q) = %q, %v; want %q", tc.ns, tc.loc, got, err, tc.want)
		}
	}
	for _, tc := range [][2]string{
		{"s3://bucket/repo1", "s3://bucket/repo10/data/x"},
		{"s3://bucket/repo1", "s3://bucket/repo1"},
		{"s3://bucket/repo1", "s3://bucket/repo1/"},
		{"s3://bucket/repo1", "gs://bucket/repo1/data/x"},
		{"s3://bucket/repo1", "s3://other/data/x"},
		{"s3://bucket/repo1", "s3://bucket/repo1/data/../../repo2/x"},
		{"s3://bucket/repo1", "s3://bucket/repo1//x"},
		{"s3://bucket/repo1", "s3://bucket/repo1/./x"},
		{"s3://bucket/repo1", "data/x"},
		{"", "data/x"},
		{"s3://", "s3://x"},
		{"bucket", "bucket/x"},
	} {
		if got, err := RelativeKey(tc[0], tc[1]); !errors.Is(err, ErrOutsideNamespace) {
			t.Errorf("RelativeKey(%q, %q) = %q, %v; want ErrOutsideNamespace", tc[0], tc[1], got, err)
		}
	}
}

// TestRelativeKeyProperty: for any namespace and clean key, the key comes
// back; the same key under a sibling namespace does not.
func TestRelativeKeyProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seg := func() string {
		const chars = "abc019_-=,.~"
		b := make([]byte, 1+r.IntN(6))
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		if s := string(b); s != "." && s != ".." {
			return s
		}
		return "x"
	}
	for range 2000 {
		ns := "s3://" + seg()
		for range r.IntN(3) {
			ns += "/" + seg()
		}
		var parts []string
		for range 1 + r.IntN(4) {
			parts = append(parts, seg())
		}
		key := strings.Join(parts, "/")
		if r.IntN(4) == 0 {
			key += "/"
		}
		got, err := RelativeKey(ns, ns+"/"+key)
		if err != nil || got != key {
			t.Fatalf("RelativeKey(%q, %q) = %q, %v; want %q", ns, ns+"/"+key, got, err, key)
		}
		if got, err := RelativeKey(ns, ns+seg()+"/"+key); err == nil {
			t.Fatalf("sibling of %q: RelativeKey = %q, want an error", ns, got)
		}
	}
}

// TestPrepareAllUncommittedRecorded: lakeFS's real answers — one call that
// wrote a file, and one over branches with nothing staged.
func TestPrepareAllUncommittedRecorded(t *testing.T) {
	const path = "POST /api/v1/repositories/rec/gc/prepare_uncommited"
	for body, want := range map[string]UncommittedExport{
		recordedUncomm: {RunID: "ft0o3uhksdud2e090ibg", Calls: 1, Files: 1,
			Location: "local:///tmp/lfx/bs/rec/_lakefs/retention/gc/uncommitted/ft0o3uhksdud2e090ibg/uncommitted"},
		recordedUncommEmpty: {RunID: "ft0o3upksdud2e090ia0", Calls: 1},
	} {
		_, srv := newScript(t, map[string][]answer{path: {{status: http.StatusCreated, body: body}}})
		c, _ := testClient(t, srv)
		exp, err := c.PrepareAllUncommitted(t.Context(), "rec")
		if err != nil || *exp != want {
			t.Errorf("%s: %+v, %v; want %+v", body, exp, err, want)
		}
	}
	_, srv := newScript(t, map[string][]answer{path: {{status: http.StatusBadRequest, body: recordedBadToken}}})
	c, _ := testClient(t, srv)
	if _, err := c.PrepareUncommitted(t.Context(), "rec", "!!"); !errors.Is(err, ErrRequest) || !strings.Contains(err.Error(), "invalid continuation token") {
		t.Errorf("bad token: %v", err)
	}
}

func TestResolveNamespace(t *testing.T) {
	result := func(loc, run string) *PrepareCommitsResult {
		return &PrepareCommitsResult{RunID: run, CommitsLocation: loc}
	}
	const run = "ft0o431ksdud2e090i80"
	for _, tc := range []struct {
		ns, loc, want string
	}{
		{"local://rec", "local:///tmp/lfx/bs/rec/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", "local:///tmp/lfx/bs/rec"},
		{"local://a/rec", "local:///bs/a/rec/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", "local:///bs/a/rec"},
		{"local:///abs/rec", "local:///bs/abs/rec/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", "local:///bs/abs/rec"},
		{"s3://bucket/repo1", "s3://bucket/repo1/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", "s3://bucket/repo1"},
		{"s3://bucket/repo1/", "s3://bucket/repo1/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", "s3://bucket/repo1"},
		{"gs://b/r", "gs://b/r/_custom/retention/gc/commits/run_id=" + run + "/commits.csv", "gs://b/r"},
	} {
		got, err := ResolveNamespace(tc.ns, result(tc.loc, run))
		if err != nil || got != tc.want {
			t.Errorf("ResolveNamespace(%q, %q) = %q, %v; want %q", tc.ns, tc.loc, got, err, tc.want)
		}
	}
	for _, tc := range [][3]string{
		{"local://rec", "local:///tmp/lfx/bs/rec/_lakefs/retention/gc/commits/run_id=other/commits.csv", run},
		{"local://rec", "local:///tmp/lfx/bs/rec/_lakefs/retention/gc/commits/run_id=/commits.csv", ""},
		{"local://rec", "local:///tmp/lfx/bs/rec2/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", run},
		{"local://rec", "local:///tmp/lfx/bs/xrec/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", run},
		{"local://rec", "s3://b/rec/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", run},
		{"local://", "local:///bs/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", run},
		{"s3://bucket/repo1", "s3://bucket/repo10/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", run},
		{"s3://bucket/repo1", "s3://bucket/repo1/retention/gc/commits/run_id=" + run + "/commits.csv", run},
		{"s3://bucket/repo1", "s3://bucket/repo1/_lakefs/x/retention/gc/commits/run_id=" + run + "/commits.csv", run},
		{"s3://bucket/repo1", "s3://bucket/repo1//retention/gc/commits/run_id=" + run + "/commits.csv", run},
		{"repo1", "repo1/_lakefs/retention/gc/commits/run_id=" + run + "/commits.csv", run},
	} {
		if got, err := ResolveNamespace(tc[0], result(tc[1], tc[2])); !errors.Is(err, ErrOutsideNamespace) {
			t.Errorf("ResolveNamespace(%q, %q, run %q) = %q, %v; want ErrOutsideNamespace", tc[0], tc[1], tc[2], got, err)
		}
	}
}
