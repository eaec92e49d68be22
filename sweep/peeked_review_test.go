package sweep

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPeekedHeldKeys drives a peeked stream with small bounds, so that its
// queue fills, empties and is compacted many times, as the join's walk
// does: it holds the key Next returned and every key at returned since,
// reads ahead between (at), and appends to each key it holds, as a caller
// that builds on a key might. Every key held is checked just before the
// next call of Next: none may have changed, whether its bytes are in the
// queue (read ahead) or copied (not read ahead), and an append to one key
// must not reach another's bytes.
func TestPeekedHeldKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 7))
	for trial := range 40 {
		n := r.IntN(600)
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%06d%s", i, strings.Repeat("x", r.IntN(24)))
		}
		var buf []byte
		i := 0
		maxKeys := 8 + r.IntN(200)
		p := &peeked{next: func() ([]byte, int64, bool, bool, error) {
			if i == len(keys) {
				return nil, 0, false, false, nil
			}
			buf = append(buf[:0], keys[i]...) // one buffer, as a stream's
			i++
			return buf, int64(i), false, true, nil
		}, maxKeys: maxKeys, maxBytes: 40 * maxKeys}
		type held struct {
			k    []byte
			want string
		}
		var hs []held
		check := func(pos int, what string) {
			t.Helper()
			for _, h := range hs {
				if string(h.k) != h.want {
					t.Fatalf("trial %d, after %d entries, %s: a held key is %q, was %q", trial, pos, what, h.k, h.want)
				}
			}
		}
		for pos := 0; ; pos++ {
			check(pos, "before Next")
			hs = hs[:0]
			k, c, _, ok, err := p.Next()
			require.NoError(t, err)
			if pos == n {
				require.False(t, ok, "trial %d", trial)
				break
			}
			require.True(t, ok, "trial %d: entry %d", trial, pos)
			require.Equal(t, keys[pos], string(k), "trial %d: entry %d", trial, pos)
			require.Equal(t, int64(pos+1), c)
			hs = append(hs, held{k, keys[pos]})
			// Mostly deep reads ahead, as copyBlock's of a whole block, so
			// that the queue fills and Next takes many keys from it.
			for range r.IntN(4) {
				j := r.IntN(maxKeys + 8)
				ak, aok, err := p.at(j)
				if errors.Is(err, errPeekFull) {
					continue
				}
				require.NoError(t, err)
				require.Equal(t, pos+1+j < n, aok, "trial %d: at(%d) after %d", trial, j, pos)
				if aok {
					require.Equal(t, keys[pos+1+j], string(ak), "trial %d: at(%d) after %d", trial, j, pos)
					hs = append(hs, held{ak, keys[pos+1+j]})
				}
				check(pos, "after a read ahead")
			}
			// A caller appending to a key it holds writes into its own
			// array, never into the queue's next key.
			for _, h := range hs {
				grown := append(h.k, "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"...)
				require.Equal(t, h.want+"!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!", string(grown))
			}
			check(pos, "after appends to the keys")
		}
	}
}
