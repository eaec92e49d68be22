package layout

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWallCursor checks the merge of sorted keys with sorted, prefix-free
// walls against a plain scan.
func TestWallCursor(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		ws := NewWalls("d", StoragePrefix)
		for range r.IntN(6) {
			ws.Add("d/"+randFrom(r, "ab_/", 1+r.IntN(4))+"/", "")
		}
		walls := ws.Sorted()
		var all []string
		for k := range ws.set {
			all = append(all, k)
		}
		var keys []string
		for range 50 {
			keys = append(keys, "d/"+randFrom(r, "ab_/0", 1+r.IntN(7)))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		c := NewWallCursor(walls)
		for _, k := range keys {
			want := slices.ContainsFunc(all, func(p string) bool { return strings.HasPrefix(k, p) })
			require.Equal(t, want, c.Walled([]byte(k)), "%q under %q", k, all)
		}
	}
}

// randFrom is n random bytes of alphabet.
func randFrom(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}
