package sweep

import (
	"testing"
	"time"

	"github.com/lakegc/lakegc/internal/layout"
)

// TestIdentifyAllocatesNothing: what the listing and the join do per key —
// recognize it, find its wall, count it for the canary — allocates nothing
// once a folder's first key is seen. (A slice's name is decoded once per
// folder of keep keys.)
func TestIdentifyAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	cfg := newMarkConfig([]MarkOption{WithInclude("data/imports/")})
	rec := cfg.recognizer()
	slice := descendingName(t0.Add(-100 * time.Hour))
	keys := []string{"data/" + slice + "/" + objID(1), "data/" + slice + "/" + objID(2) + "," + sig43, flatName(1),
		"data/" + earlyName(1), "data/imports/x", "README.txt", "data/a/b/c/d"}
	if n := testing.AllocsPerRun(100, func() {
		for i, k := range keys {
			rec.OK(k)
			if i < 2 {
				rec.OKInSlice(k, len("data/")+len(slice)+1)
			}
		}
	}); n != 0 {
		t.Errorf("recognizer: %v allocations", n)
	}
	walls := newWallSet(cfg)
	if n := testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			walls.Of(k)
		}
	}); n != 0 {
		t.Errorf("walls: %v allocations", n)
	}
	c0 := *layout.NewWallCursor([]string{"data/a/", "data/inner/"})
	bkeys := [][]byte{[]byte("data/" + slice + "/" + objID(1)), []byte("data/a/b"), []byte("data/b"), []byte("data/inner/x")}
	if n := testing.AllocsPerRun(1, func() {
		c := c0
		for _, k := range bkeys {
			c.Walled(k)
		}
	}); n != 0 {
		t.Errorf("wall cursor: %v allocations", n)
	}
	can := newCanaryCount(cfg, t0)
	inSlice := [][]byte{[]byte("data/" + slice + "/" + objID(1)), []byte("data/" + slice + "/" + objID(2))}
	can.keepKey(inSlice[0], false)
	if n := testing.AllocsPerRun(100, func() {
		for _, k := range inSlice {
			can.keepKey(k, false)
		}
	}); n != 0 {
		t.Errorf("canary: %v allocations", n)
	}
}
