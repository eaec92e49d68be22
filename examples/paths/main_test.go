package main

import (
	"strings"
	"testing"
)

// TestDemo runs the demo and checks the outcomes it prints.
func TestDemo(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"same repository, branch and path       accepted: data/",
		"another path                           refused: linkaddr: verify: link address invalid",
		"tampered address                       refused: linkaddr: verify: link address invalid",
		"first link (VerifyOnce)                accepted: data/",
		"second link of the same address        refused: linkaddr: redeem: link address invalid: address already linked",
		"25 hours later                         refused: linkaddr: verify: link address expired",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
}
