package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseAge(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{{"7d", 7 * 24 * time.Hour, true}, {"0d", 0, true}, {"36h", 36 * time.Hour, true}, {"90m", 90 * time.Minute, true},
		{"", 0, false}, {"d", 0, false}, {"-1d", 0, false}, {"-3h", 0, false}, {"1.5d", 0, false}, {"99999999d", 0, false}, {"7", 0, false}} {
		got, err := parseAge(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseAge(%q) = %v, %v", c.in, got, err)
		}
	}
}

func TestRestorePurgeUsage(t *testing.T) {
	env := map[string]string{"LAKECTL_SERVER_ENDPOINT_URL": "http://127.0.0.1:1", "LAKECTL_CREDENTIALS_ACCESS_KEY_ID": "a", "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "b"}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"restore", "--repo", "r"}, exitUsage, "--run is required"},
		{[]string{"restore", "--run", "x"}, exitUsage, "--repo is required"},
		{[]string{"restore", "--repo", "r", "--run", "x", "extra"}, exitUsage, "unexpected argument"},
		{[]string{"purge", "--repo", "r"}, exitUsage, "--older-than is required"},
		{[]string{"purge", "--repo", "r", "--older-than", "soon"}, exitUsage, "not an age"},
		{[]string{"restore", "--help"}, exitOK, ""},
		{[]string{"purge", "--nope"}, exitUsage, "not defined"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), c.args, func(k string) string { return env[k] }, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", c.args, code, stderr.String(), c.code, c.msg)
		}
	}
}

func TestQuarantineOptions(t *testing.T) {
	if len(quarantineOptions(false)) != 0 || len(quarantineOptions(true)) != 1 {
		t.Error("quarantineOptions")
	}
}
