package main

import (
	"bytes"
	"strings"
	"testing"
)

// --inventory reaches the host's options; with --optimized, which it
// cannot serve (a mark from an inventory is clean), it is a usage error.
func TestGCInventoryFlag(t *testing.T) {
	creds := map[string]string{"LAKECTL_CREDENTIALS_ACCESS_KEY_ID": "k", "LAKECTL_CREDENTIALS_SECRET_ACCESS_KEY": "s", "LAKECTL_SERVER_ENDPOINT_URL": "http://lakefs"}
	var stdout, stderr bytes.Buffer
	const uri = "s3://inv/lake/cfg/2026-11-20T00-00Z/manifest.json"
	o, code := parseGC([]string{"--repo", "r", "--inventory", uri, "--shard", "1/2"}, envOf(creds), &stdout, &stderr)
	if h := o.hostOptions(nil, nil); code != -1 || h.Inventory != uri || h.Shards != 2 {
		t.Fatalf("code %d, host inventory %q, shards %d\n%s", code, h.Inventory, h.Shards, stderr.String())
	}
	stderr.Reset()
	if _, code := parseGC([]string{"--repo", "r", "--inventory", uri, "--optimized"}, envOf(creds), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "--inventory with --optimized") {
		t.Fatalf("--inventory --optimized: exit %d, %q", code, stderr.String())
	}
}
