package lakegc_test

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/retention"
)

// taggedCommits is a host's Commits that knows its tags.
type taggedCommits struct {
	lakegc.Commits
	tags []retention.Tag
}

func (c taggedCommits) Tags(ctx context.Context) iter.Seq2[retention.Tag, error] {
	return func(yield func(retention.Tag, error) bool) {
		for _, t := range c.tags {
			if !yield(t, nil) {
				return
			}
		}
	}
}

// The world's c1 (60 days old) expires under lakeFS's rules; a tag on it
// keeps it, with its object, once the extended rules keep tags — read from
// the namespace's file, or given in Config.
func TestCollectKeepsTaggedCommits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    string // the extended rules file; "" none
		config  bool   // Config.Rules with KeepTags instead of the files
		tagged  bool   // c1 is tagged
		keepsA1 bool
	}{
		{"no extended rules", "", false, true, false},
		{"file keeps tags", `{"version":1}`, false, true, true},
		{"file keeps tags, no tag", `{"version":1}`, false, false, false},
		{"file says keep_tags false", `{"version":1,"keep_tags":false}`, false, true, false},
		{"config keeps tags", "", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			if tc.file != "" {
				if err := w.bucket.WriteAll(ctx, "_lakefs/retention/gc/rules/lakegc.json", []byte(tc.file), nil); err != nil {
					t.Fatal(err)
				}
			}
			cfg := w.config()
			if tc.config {
				cfg.Rules = &retention.Rules{DefaultRetentionDays: 7, BranchRetentionDays: map[string]int32{"main": 30}}
				cfg.ExtendedRules = &retention.Extended{KeepTags: true}
			}
			host := w.host.host()
			if tc.tagged {
				host.Commits = taggedCommits{Commits: host.Commits, tags: []retention.Tag{{ID: "v1.0", CommitID: "c1"}}}
			}
			if tc.keepsA1 {
				w.live["data/old/a1"] = "only in c1, which a tag keeps"
				delete(w.garbage, "data/old/a1")
			}
			rep, err := lakegc.Collect(ctx, host, cfg)
			if err != nil {
				t.Fatal(err)
			}
			w.expectMarked(rep.RunID)
			if got := rep.Rules.Extended != nil && rep.Rules.Extended.KeepTags; got != (tc.file == `{"version":1}` || tc.config) {
				t.Errorf("report's extended rules %v", rep.Rules.Extended)
			}
			if tc.keepsA1 && !strings.Contains(rep.Rules.Applied, "tagged commits kept") {
				t.Errorf("applied %q does not say tags are kept", rep.Rules.Applied)
			}
			// Rules that keep tags, and a host that gives none, are said.
			keepTags := tc.file == `{"version":1}` || tc.config
			if noTags := strings.Contains(rep.Rules.Applied, "no tag known"); noTags != (keepTags && !tc.tagged) {
				t.Errorf("applied %q: says no tags known %v, want %v", rep.Rules.Applied, noTags, keepTags && !tc.tagged)
			}
		})
	}
}

// Config.Rules win over the namespace's files, which are then not read: a
// malformed extended file does not matter, and main keeps 90 days.
func TestCollectConfigRulesWin(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	if err := w.bucket.WriteAll(ctx, "_lakefs/retention/gc/rules/lakegc.json", []byte(`{"version":1,"unknown":1}`), nil); err != nil {
		t.Fatal(err)
	}
	cfg := w.config()
	cfg.Rules = &retention.Rules{DefaultRetentionDays: 7, BranchRetentionDays: map[string]int32{"main": 90}}
	w.live["data/old/a1"] = "only in c1, which main's 90 days keep"
	delete(w.garbage, "data/old/a1")
	rep, err := lakegc.Collect(ctx, w.host.host(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.expectMarked(rep.RunID)
	if r := rep.Rules; r.Source != lakegc.RulesFromConfig || r.Key != "" || !r.Found || r.Rules.BranchRetentionDays["main"] != 90 {
		t.Errorf("rules report %+v", *r)
	}

	// The same malformed file, read: the cycle fails before the mark.
	rep, err = lakegc.Collect(ctx, w.host.host(), w.config())
	if !errors.Is(err, retention.ErrInvalidRules) || !strings.Contains(err.Error(), "unknown") || rep.Mark != nil {
		t.Errorf("malformed extended rules file: %v (mark %v)", err, rep.Mark)
	}
}

// A cycle without rules keeps everything, and says so in its report and at
// WARN — from the files, or from zero Config.Rules.
func TestCollectWithoutRulesWarns(t *testing.T) {
	for _, fromConfig := range []bool{false, true} {
		w := newWorld(t)
		ctx := context.Background()
		if err := retention.NewRulesStore(w.bucket).Delete(ctx); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		cfg := w.config()
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		if fromConfig {
			cfg.Rules = &retention.Rules{}
			cfg.ExtendedRules = &retention.Extended{StaleBranchDays: 1}
		}
		rep, err := lakegc.Collect(ctx, w.host.host(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r := rep.Rules; r.Found || r.Extended != nil || !strings.Contains(r.Warning, "every commit is kept") || rep.Commits.Active != 4 {
			t.Errorf("config %v: rules report %+v, %d active", fromConfig, *r, rep.Commits.Active)
		}
		if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "every commit is kept") {
			t.Errorf("config %v: no WARN log:\n%s", fromConfig, logs.String())
		}
	}
}

func TestCollectRefusesInvalidRules(t *testing.T) {
	w := newWorld(t)
	for name, cfg := range map[string]func(*lakegc.Config){
		"extended without rules": func(c *lakegc.Config) { c.ExtendedRules = &retention.Extended{KeepTags: true} },
		"negative days":          func(c *lakegc.Config) { c.Rules = &retention.Rules{DefaultRetentionDays: -1} },
		"bad pattern": func(c *lakegc.Config) {
			c.Rules = &retention.Rules{DefaultRetentionDays: 1}
			c.ExtendedRules = &retention.Extended{Branches: []retention.BranchRule{{Pattern: "(", KeepLast: 1}}}
		},
	} {
		c := w.config()
		cfg(&c)
		if _, err := lakegc.Collect(context.Background(), w.host.host(), c); !errors.Is(err, lakegc.ErrInvalidInput) {
			t.Errorf("%s: %v, want ErrInvalidInput", name, err)
		}
	}
	// A host that applies its own rules is given none.
	c := w.config()
	c.Rules = &retention.Rules{DefaultRetentionDays: 1}
	h := w.host.host()
	h.Commits, h.Active = nil, activeHost{}
	if _, err := lakegc.Collect(context.Background(), h, c); !errors.Is(err, lakegc.ErrInvalidInput) || !strings.Contains(err.Error(), "Active") {
		t.Errorf("Rules with Host.Active: %v, want ErrInvalidInput", err)
	}
}

// activeHost decides the kept commits itself.
type activeHost struct{}

func (activeHost) ActiveCommits(ctx context.Context, now time.Time) (*lakegc.HostCommits, error) {
	return nil, errors.New("not called")
}
