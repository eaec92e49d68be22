package storetest_test

import (
	"context"
	"iter"
	"testing"

	"github.com/lakegc/lakegc/copytrack"
	"github.com/lakegc/lakegc/copytrack/storetest"
)

// prefixed is how a host whose one key-value store holds other data too can
// give the Tracker a key space of its own: every key is stored under a fixed
// prefix. The test below is all it takes to prove such an adapter.
type prefixed struct {
	prefix []byte
	store  copytrack.Store
}

func (p prefixed) key(k []byte) []byte {
	return append(append(make([]byte, 0, len(p.prefix)+len(k)), p.prefix...), k...)
}

func (p prefixed) Set(ctx context.Context, key, value []byte) error {
	return p.store.Set(ctx, p.key(key), value)
}

func (p prefixed) Delete(ctx context.Context, key []byte) error {
	return p.store.Delete(ctx, p.key(key))
}

func (p prefixed) Scan(ctx context.Context, prefix []byte) iter.Seq2[copytrack.KV, error] {
	return func(yield func(copytrack.KV, error) bool) {
		for kv, err := range p.store.Scan(ctx, p.key(prefix)) {
			if err == nil {
				kv.Key = kv.Key[len(p.prefix):]
			}
			if !yield(kv, err) || err != nil {
				return
			}
		}
	}
}

func TestPrefixedStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) copytrack.Store {
		shared := copytrack.NewMemStore()
		// Other data of the host, around the copy table's keys.
		for _, k := range []string{"copytrack", "copytrack.", "copytrack0", "other"} {
			if err := shared.Set(context.Background(), []byte(k), []byte("host data")); err != nil {
				t.Fatal(err)
			}
		}
		return prefixed{prefix: []byte("copytrack/"), store: shared}
	})
}
