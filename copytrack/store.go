package copytrack

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"sort"
	"sync"
)

// Store is the host's key-value store, ordered by key bytes. The Tracker keeps
// its records in it; copytrack/storetest is the conformance suite an adapter
// must pass.
//
// Implementations must be safe for concurrent use, must copy the slices they
// are given and the slices they return (a caller may reuse or change them),
// and must return an error wrapping ctx.Err() without doing the work when the
// context is done. Scan need not be a snapshot; it should not hold a lock
// while the loop body runs, and must release what it holds when the loop
// stops early.
type Store interface {
	// Set stores value under key, replacing any previous value.
	Set(ctx context.Context, key, value []byte) error
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key []byte) error
	// Scan yields every pair whose key starts with prefix, in ascending
	// order of key bytes. An empty prefix scans the whole store.
	Scan(ctx context.Context, prefix []byte) iter.Seq2[KV, error]
}

// KV is one key-value pair yielded by Store.Scan.
type KV struct{ Key, Value []byte }

// memPageSize is how many pairs memStore.Scan copies per lock acquisition.
const memPageSize = 128

// memStore is a sorted slice of entries. Deleted entries stay in place as
// tombstones until they are more than half of the slice, so that the
// Tracker's pattern (append at the end, delete from the front) costs
// amortised O(log n) per operation instead of a memmove of the whole slice.
type memStore struct {
	mu      sync.RWMutex
	entries []memEntry // sorted by key, unique keys
	dead    int        // tombstones in entries
}

type memEntry struct {
	key, value []byte
	deleted    bool
}

// NewMemStore returns an in-memory Store, safe for concurrent use. It is
// meant for tests and single-process hosts: nothing survives the process.
func NewMemStore() Store { return &memStore{} }

func (m *memStore) search(key []byte) (int, bool) {
	if n := len(m.entries); n > 0 && bytes.Compare(m.entries[n-1].key, key) < 0 {
		return n, false // the Tracker's usual case: a key after every other
	}
	i := sort.Search(len(m.entries), func(i int) bool { return bytes.Compare(m.entries[i].key, key) >= 0 })
	return i, i < len(m.entries) && bytes.Equal(m.entries[i].key, key)
}

func (m *memStore) Set(ctx context.Context, key, value []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore set: %w", err)
	}
	value = bytes.Clone(value)
	if value == nil {
		value = []byte{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i, found := m.search(key)
	if found {
		if m.entries[i].deleted {
			m.dead--
		}
		m.entries[i] = memEntry{key: m.entries[i].key, value: value}
		return nil
	}
	m.entries = append(m.entries, memEntry{})
	copy(m.entries[i+1:], m.entries[i:])
	m.entries[i] = memEntry{key: bytes.Clone(key), value: value}
	return nil
}

func (m *memStore) Delete(ctx context.Context, key []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore delete: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i, found := m.search(key)
	if !found || m.entries[i].deleted {
		return nil
	}
	m.entries[i] = memEntry{key: m.entries[i].key, deleted: true}
	m.dead++
	if m.dead > len(m.entries)/2 {
		m.compact()
	}
	return nil
}

func (m *memStore) compact() {
	live := m.entries[:0]
	for _, e := range m.entries {
		if !e.deleted {
			live = append(live, e)
		}
	}
	clear(m.entries[len(live):])
	m.entries, m.dead = live, 0
}

// Scan copies the matching pairs a page at a time under the read lock and
// yields them with the lock released, so the loop body may write to the store.
func (m *memStore) Scan(ctx context.Context, prefix []byte) iter.Seq2[KV, error] {
	prefix = bytes.Clone(prefix)
	return func(yield func(KV, error) bool) {
		var after []byte // last key yielded; nil before the first page
		for {
			page := m.page(prefix, after)
			for _, kv := range page {
				if err := ctx.Err(); err != nil {
					yield(KV{}, fmt.Errorf("memstore scan: %w", err))
					return
				}
				if !yield(kv, nil) {
					return
				}
			}
			if len(page) < memPageSize {
				if err := ctx.Err(); err != nil {
					yield(KV{}, fmt.Errorf("memstore scan: %w", err))
				}
				return
			}
			after = page[len(page)-1].Key
		}
	}
}

// page returns copies of up to memPageSize live pairs with the prefix and a
// key greater than after (or from the prefix on, when after is nil).
func (m *memStore) page(prefix, after []byte) []KV {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var i int
	if after == nil {
		i, _ = m.search(prefix)
	} else {
		var found bool
		if i, found = m.search(after); found {
			i++
		}
	}
	var page []KV
	for ; i < len(m.entries) && len(page) < memPageSize; i++ {
		e := m.entries[i]
		if !bytes.HasPrefix(e.key, prefix) {
			break
		}
		if !e.deleted {
			page = append(page, KV{Key: bytes.Clone(e.key), Value: bytes.Clone(e.value)})
		}
	}
	return page
}
