package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/lakegc/lakegc"
	"github.com/lakegc/lakegc/lakefs/api"
	"github.com/lakegc/lakegc/lakefs/host"
	"github.com/lakegc/lakegc/sweep"
)

// TestResolveShard: --shard and the Indexed Job's environment each give the
// shard, agree when both are set, and every malformed or incomplete spec is
// refused with a message naming what is wrong.
func TestResolveShard(t *testing.T) {
	for _, tc := range []struct {
		flag, index, count string
		want               shardSpec
		err                string // in the error; "" for none
	}{
		{"", "", "", shardSpec{}, ""},
		{"0/4", "", "", shardSpec{0, 4}, ""},
		{"3/4", "", "", shardSpec{3, 4}, ""},
		{"0/1", "", "", shardSpec{0, 1}, ""},
		{"", "2", "3", shardSpec{2, 3}, ""},
		{"2/3", "2", "3", shardSpec{2, 3}, ""},
		{"2/3", "2", "", shardSpec{2, 3}, ""},
		{"0/0", "", "", shardSpec{}, "count is 0"},
		{"3/2", "", "", shardSpec{}, "not below the count"},
		{"2/2", "", "", shardSpec{}, "not below the count"},
		{"-1/2", "", "", shardSpec{}, "not a number"},
		{"1/-2", "", "", shardSpec{}, "not a number"},
		{"a/2", "", "", shardSpec{}, "not a number"},
		{"1/b", "", "", shardSpec{}, "not a number"},
		{"+1/2", "", "", shardSpec{}, "not a number"},
		{" 1/2", "", "", shardSpec{}, "not a number"},
		{"1/", "", "", shardSpec{}, "not a number"},
		{"/2", "", "", shardSpec{}, "not a number"},
		{"1", "", "", shardSpec{}, "want INDEX/COUNT"},
		{"1/2/3", "", "", shardSpec{}, "not a number"},
		{"0/100001", "", "", shardSpec{}, "above 100000"},
		{"0/99999999999999999999", "", "", shardSpec{}, "not a number"},
		{"", "1", "", shardSpec{}, "JOB_COMPLETIONS is not set"},
		{"", "", "4", shardSpec{}, "JOB_COMPLETION_INDEX is not set"},
		{"", "4", "4", shardSpec{}, "not below the count"},
		{"", "0", "0", shardSpec{}, "count is 0"},
		{"", "x", "4", shardSpec{}, "not a number"},
		{"", "-1", "4", shardSpec{}, "not a number"},
		{"1/4", "2", "4", shardSpec{}, "conflicts"},
		{"1/4", "1", "5", shardSpec{}, "conflicts"},
		{"1/4", "2", "", shardSpec{}, "conflicts"},
		{"1/4", "x", "", shardSpec{}, "not a number"},
		{"1/4", "", "4", shardSpec{}, "JOB_COMPLETION_INDEX is not set"},
	} {
		env := map[string]string{envCompletionIndex: tc.index, envCompletions: tc.count}
		got, err := resolveShard(tc.flag, envOf(env))
		name := "--shard " + tc.flag + " index " + tc.index + " count " + tc.count
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one with %q", name, err, tc.err)
		case got != tc.want:
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}

// TestParseGCShard: the shard reaches host.Options; a bad spec, and a
// sharded --optimized run, are usage errors naming the problem.
func TestParseGCShard(t *testing.T) {
	creds := map[string]string{api.EnvEndpointURL: "http://127.0.0.1:1", api.EnvAccessKeyID: "AKIA", api.EnvSecretAccessKey: "s"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range creds {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	var stdout, stderr bytes.Buffer
	o, code := parseGC([]string{"--repo", "r", "--shard", "2/5"}, envOf(creds), &stdout, &stderr)
	if h := o.hostOptions(nil, nil); code != -1 || h.Shard != 2 || h.Shards != 5 || h.Lease != nil || h.KeepRuns != 0 {
		t.Fatalf("--shard 2/5: code %d, host options shard %d of %d, lease %+v\n%s", code, h.Shard, h.Shards, h.Lease, stderr.String())
	}
	// Unsharded, the run takes the repository's lease; sharded, none (above).
	if o, code := parseGC([]string{"--repo", "r"}, envOf(creds), &stdout, &stderr); code != -1 || o.hostOptions(nil, nil).Lease == nil || o.hostOptions(nil, nil).KeepRuns == 0 {
		t.Fatalf("unsharded: code %d, no lease or no pruning", code)
	}
	if o, code := parseGC([]string{"--repo", "r", "--shard", "0/2", "--keep-runs", "0"}, envOf(creds), &stdout, &stderr); code != -1 || o.hostOptions(nil, nil).KeepRuns != 0 {
		t.Fatalf("--shard 0/2 --keep-runs 0: code %d\n%s", code, stderr.String())
	}
	o, code = parseGC([]string{"--repo", "r"}, envOf(with(envCompletionIndex, "1", envCompletions, "3")), &stdout, &stderr)
	if h := o.hostOptions(nil, nil); code != -1 || h.Shard != 1 || h.Shards != 3 {
		t.Fatalf("Indexed Job env: code %d, host options shard %d of %d\n%s", code, h.Shard, h.Shards, stderr.String())
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--shard", "3/2"}, creds, "--shard \"3/2\": index 3 is not below the count 2"},
		{[]string{"--shard", "0/0"}, creds, "count is 0"},
		{nil, with(envCompletionIndex, "0"), "JOB_COMPLETIONS is not set"},
		{[]string{"--shard", "0/2"}, with(envCompletionIndex, "1", envCompletions, "2"), "conflicts"},
		{[]string{"--shard", "0/2", "--optimized"}, creds, "a sharded run is always clean"},
		{[]string{"--shard", "0/2", "--lease-wait", "1m"}, creds, "a sharded run takes no lease"},
		{[]string{"--shard", "0/2", "--keep-runs", "3"}, creds, "prunes nothing"},
	} {
		stderr.Reset()
		if _, code := parseGC(append([]string{"--repo", "r"}, tc.args...), envOf(tc.env), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d with %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

// manifestPath is the Indexed Job of the examples.
var manifestPath = filepath.Join("..", "..", "..", "examples", "k8s", "lakegc-indexed-job.yaml")

// indexedJob is the part of a Kubernetes batch/v1 Job the example must
// get right.
type indexedJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode       string `yaml:"completionMode"`
		Completions          *int   `yaml:"completions"`
		Parallelism          *int   `yaml:"parallelism"`
		BackoffLimitPerIndex *int   `yaml:"backoffLimitPerIndex"`
		Template             struct {
			Spec struct {
				RestartPolicy string           `yaml:"restartPolicy"`
				Volumes       []map[string]any `yaml:"volumes"`
				Containers    []struct {
					Name    string   `yaml:"name"`
					Image   string   `yaml:"image"`
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Env     []struct {
						Name      string         `yaml:"name"`
						Value     *string        `yaml:"value"`
						ValueFrom map[string]any `yaml:"valueFrom"`
					} `yaml:"env"`
					Resources    map[string]any   `yaml:"resources"`
					VolumeMounts []map[string]any `yaml:"volumeMounts"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestIndexedJobManifest parses the example Indexed Job (unknown fields
// refused, so a misspelt one fails) and checks that it is an Indexed Job
// whose JOB_COMPLETIONS is its spec.completions, and that each of its pods,
// given the JOB_COMPLETION_INDEX Kubernetes sets, runs "lakegc gc" with
// flags the command accepts as that shard of completions.
func TestIndexedJobManifest(t *testing.T) {
	data, err := os.ReadFile(manifestPath)
	if err != nil {
		t.Fatal(err)
	}
	var job indexedJob
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&job); err != nil {
		t.Fatalf("%s: %v", manifestPath, err)
	}
	checkIndexedJob(t, &job)
}

func checkIndexedJob(t *testing.T, job *indexedJob) {
	t.Helper()
	s := job.Spec
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || s.CompletionMode != "Indexed" || s.Completions == nil || *s.Completions < 2 {
		t.Fatalf("not an Indexed Job of several completions: %s %s, completionMode %q, completions %v", job.APIVersion, job.Kind, s.CompletionMode, s.Completions)
	}
	if s.Parallelism != nil && (*s.Parallelism < 1 || *s.Parallelism > *s.Completions) {
		t.Errorf("parallelism %d, completions %d", *s.Parallelism, *s.Completions)
	}
	if p := s.Template.Spec.RestartPolicy; p != "Never" && p != "OnFailure" {
		t.Errorf("restartPolicy %q: a Job's pods need Never or OnFailure", p)
	}
	if len(s.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(s.Template.Spec.Containers))
	}
	c := s.Template.Spec.Containers[0]
	args := append(c.Command[1:len(c.Command):len(c.Command)], c.Args...)
	if len(c.Command) == 0 || filepath.Base(c.Command[0]) != "lakegc" || len(args) == 0 || args[0] != "gc" {
		t.Fatalf("command %q args %q: want lakegc gc …", c.Command, c.Args)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.Name == envCompletionIndex:
			t.Errorf("the manifest sets %s, which Kubernetes sets for each pod", envCompletionIndex)
		case e.Value != nil && e.ValueFrom == nil:
			env[e.Name] = *e.Value
		case e.Value == nil && e.ValueFrom != nil:
			env[e.Name] = "from-" + e.Name // a secret: any non-empty value
		default:
			t.Errorf("env %s: want exactly one of value and valueFrom", e.Name)
		}
	}
	if got, want := env[envCompletions], strconv.Itoa(*s.Completions); got != want {
		t.Fatalf("%s is %q, spec.completions %s: they must be equal", envCompletions, got, want)
	}
	for i := range *s.Completions {
		env[envCompletionIndex] = strconv.Itoa(i)
		var stdout, stderr bytes.Buffer
		o, code := parseGC(args[1:], envOf(env), &stdout, &stderr)
		if code != -1 {
			t.Fatalf("pod %d: lakegc %q exits %d: %s", i, args, code, stderr.String())
		}
		if h := o.hostOptions(nil, nil); h.Shard != i || h.Shards != *s.Completions || h.Optimized || h.Lease != nil {
			t.Errorf("pod %d: runs shard %d of %d (optimized %v, lease %+v)", i, h.Shard, h.Shards, h.Optimized, h.Lease)
		}
	}
}

// FuzzResolveShard: any flag value and environment gives an error or a
// shard 0 <= index < count <= maxShards (or none), never a panic; a shard
// it accepts reads back the same from its own spelling, flag or env.
func FuzzResolveShard(f *testing.F) {
	for _, s := range [][3]string{{"0/4", "", ""}, {"", "1", "3"}, {"3/2", "", ""}, {"0/0", "", ""}, {"-1/2", "", ""}, {"", "1", ""}, {"1/4", "2", "4"}, {"1/2/3", "0", "x"}, {"00/01", "", ""}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, flag, index, count string) {
		got, err := resolveShard(flag, envOf(map[string]string{envCompletionIndex: index, envCompletions: count}))
		if err != nil {
			if got != (shardSpec{}) {
				t.Fatalf("error %v with shard %+v", err, got)
			}
			return
		}
		if got == (shardSpec{}) {
			if flag != "" || index != "" || count != "" {
				t.Fatalf("%q %q %q: no shard and no error", flag, index, count)
			}
			return
		}
		if got.index < 0 || got.index >= got.count || got.count > maxShards {
			t.Fatalf("%q %q %q: shard %+v", flag, index, count, got)
		}
		again, err := resolveShard(strconv.Itoa(got.index)+"/"+strconv.Itoa(got.count), envOf(map[string]string{envCompletionIndex: strconv.Itoa(got.index), envCompletions: strconv.Itoa(got.count)}))
		if err != nil || again != got {
			t.Fatalf("%+v reads back as %+v, %v", got, again, err)
		}
	})
}

// TestSummarizeShard: a shard's human summary says which shard it was and
// how to combine the shards.
func TestSummarizeShard(t *testing.T) {
	var out bytes.Buffer
	rep := &lakegc.Report{RunID: "run7", Commits: &lakegc.CommitsReport{}, Mark: &lakegc.MarkReport{Report: "_lakefs/retention/gc/unified/run7/",
		Summary: &sweep.Summary{ShardIndex: 2, ShardCount: 3}}}
	summarize(&out, "r", rep, &host.Stats{})
	if want := "shard 2 of 3, run run7: only its slices were listed; combine the shards' runs with lakegc shards --repo r RUN_ID..."; !strings.Contains(out.String(), want) {
		t.Errorf("summary %q lacks %q", out.String(), want)
	}
	out.Reset()
	rep.Mark.Summary = &sweep.Summary{}
	summarize(&out, "r", rep, &host.Stats{})
	if strings.Contains(out.String(), "shard") {
		t.Errorf("an unsharded run's summary speaks of shards: %q", out.String())
	}
}
