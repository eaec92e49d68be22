package main

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain runs the test binary as a child cycle when childEnv is set, as
// main does: Options.OwnMemory starts the program itself again.
func TestMain(m *testing.M) {
	if arg, ok := os.LookupEnv(childEnv); ok {
		os.Exit(runChild(arg))
	}
	os.Exit(m.Run())
}

// TestAttributeProfile sums a heap profile in pprof's legacy text form by
// the innermost frame of this module, scaled up from the samples as pprof
// scales them.
func TestAttributeProfile(t *testing.T) {
	const text = `heap profile: 4: 4194304 [9: 9437184] @ heap/524288
1: 2097152 [1: 2097152] @ 0x1 0x2 0x3
#	0x1	github.com/aws/aws-sdk-go-v2/service/s3.foo+0x10	/x/s3.go:1
#	0x2	github.com/lakegc/lakegc/sweep/s3list.(*Decoder).Decode+0x20	/x/decode.go:2
#	0x3	main.(*child).run+0x30	/x/child.go:3

1: 1048576 [2: 2097152] @ 0x4 0x5
#	0x4	runtime.malg+0x1	/x/proc.go:4
#	0x5	github.com/lakegc/lakegc/tests/internal/s3sim.(*Store).Clone+0x2	/x/s3sim.go:5

2: 1024 [5: 2560] @ 0x6 0x7
#	0x6	bytes.growSlice+0x1	/x/buffer.go:6
#	0x7	github.com/lakegc/lakegc.(*cycle).mark+0x2	/x/collect.go:7

0: 0 [1: 4096] @ 0x8
#	0x8	github.com/lakegc/lakegc/sweep.Mark+0x1	/x/mark.go:8

1: 4096 [1: 4096] @ 0x9
#	0x9	net/http.(*persistConn).readLoop+0x1	/x/transport.go:9

`
	const rate = 512 << 10
	scale := func(bytes, objects float64) int64 {
		return int64(bytes / (1 - math.Exp(-bytes/objects/rate)))
	}
	got := attributeProfile(text, rate)
	want := map[string]int64{
		attrLakegc:  scale(2097152, 1) + scale(1024, 2),
		attrHarness: scale(1048576, 1),
		attrOther:   scale(4096, 1),
	}
	if len(got) != len(want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d bytes, want %d (all: %v)", k, got[k], v, got)
		}
	}
	// The sampled bytes are scaled up: a small allocation stands for many.
	if got[attrLakegc] < 2097152+1024*100 {
		t.Errorf("lakegc %d bytes: the small sample not scaled up", got[attrLakegc])
	}
}

// TestChildWithoutMessages: the program started as a child without file
// descriptor 3 (its messages' pipe) says so and exits 2 at once, rather
// than running a cycle whose messages nobody reads.
func TestChildWithoutMessages(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"={}")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "no file descriptor 3") {
		t.Errorf("a child without file descriptor 3: %v, %q; want exit status 2 and its reason", err, out)
	}
}
