// Package hostkit is the iterator plumbing of a host's adapters: the
// sequences that lakegc.Host's interfaces (uncommitted.Source,
// lakegc.Commits, lakegc.Committed) yield, built from slices, maps, SQL
// rows or pages of a store, with the behaviour the conformance suites
// (uncommitted/sourcetest, retention/sourcetest) check:
//
//   - keys in ascending byte order (strings.Compare), starting at the first
//     key >= from: [Keys], [Map] and [Sorted] sort a snapshot; [Pages]
//     reads a store a page at a time by key, never by offset; [Ordered]
//     turns a store's order that is not byte order (a database collation),
//     as far as the items show it, into an error instead of a skipped item;
//   - never a quiet end: a context that is done, before or during the
//     iteration, ends it with the context's error, as does a store's
//     error ([Slice]'s err, [Query]'s rows, [Fail], the sequences of
//     [Chain]);
//   - an early break stops the work: no call after yield returns false.
//
// A store of maps adapts in a line or two per method:
//
//	func (s *store) Branches(ctx context.Context, from string) iter.Seq2[string, error] {
//		return hostkit.Keys(ctx, s.staging, from)
//	}
//
// The functions that take a map or a slice read it when called, not while
// the iteration runs: a store that guards its maps with a lock holds it
// around the call only. They copy what they yield (a snapshot of the keys
// and values, sorted), which costs memory in proportion to the map; a
// store too large for that pages through [Pages] or [Query]. Every
// function is safe for concurrent use as far as its arguments are.
package hostkit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/lakegc/lakegc/uncommitted"
)

// ErrNotFound is wrapped by the error of [Get] for a key the map does not
// hold.
var ErrNotFound = errors.New("hostkit: not found")

// ErrOutOfOrder is wrapped by the error that ends an [Ordered] or [Pages]
// iteration whose store yields a key below from, or not above the key
// before it: a collation that is not byte order, or a resumption that
// would skip or repeat items.
var ErrOutOfOrder = errors.New("hostkit: keys out of byte order")

// Seq is what the adapters' methods return: an iter.Seq2 of items and
// errors, of which an error is the last.
type Seq[T any] = iter.Seq2[T, error]

// Slice yields items in order, then err if it is not nil. A done ctx ends
// it early, or after the last item, with ctx's error.
func Slice[T any](ctx context.Context, items []T, err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for _, v := range items {
			if ctx.Err() != nil {
				break
			}
			if !yield(v, nil) {
				return
			}
		}
		if err := cmp.Or(err, ctx.Err()); err != nil {
			yield(zero, err)
		}
	}
}

// Fail yields err alone: what a Source yields for a branch that does not
// exist (uncommitted.ErrBranchNotFound), say.
func Fail[T any](err error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		yield(zero, err)
	}
}

// Sorted yields the items whose key is >= from, in ascending byte order of
// their keys (a stable sort of a copy of items, made when called).
func Sorted[T any](ctx context.Context, items []T, key func(T) string, from string) iter.Seq2[T, error] {
	out := make([]T, 0, len(items))
	for _, v := range items {
		if key(v) >= from {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	return Slice(ctx, out, nil)
}

// Keys yields the keys of m that are >= from, in ascending byte order.
func Keys[V any](ctx context.Context, m map[string]V, from string) iter.Seq2[string, error] {
	return Map(ctx, m, from, func(k string, _ V) string { return k })
}

// Map yields f(k, v) for each key k of m that is >= from, with its value,
// in ascending byte order of the keys. f runs when called, not during the
// iteration.
func Map[V, T any](ctx context.Context, m map[string]V, from string, f func(k string, v V) T) iter.Seq2[T, error] {
	keys := slices.Sorted(maps.Keys(m))
	keys = keys[lowerBound(keys, from):]
	out := make([]T, len(keys))
	for i, k := range keys {
		out[i] = f(k, m[k])
	}
	return Slice(ctx, out, nil)
}

// Staged yields f(path, v) for each path of branch's staging area in
// staging (branch → path → what the store keeps) that is >= from, in
// ascending byte order: an uncommitted.Source's Uncommitted. A branch
// staging does not hold yields an error wrapping
// uncommitted.ErrBranchNotFound, and the export skips it: its staging
// area is gone, so make sure a branch without staged paths still has its
// (empty) map.
func Staged[V any](ctx context.Context, staging map[string]map[string]V, branch, from string, f func(path string, v V) uncommitted.Entry) Seq[uncommitted.Entry] {
	paths, ok := staging[branch]
	if !ok {
		return Fail[uncommitted.Entry](fmt.Errorf("hostkit: branch %q: %w", branch, uncommitted.ErrBranchNotFound))
	}
	return Map(ctx, paths, from, f)
}

// Values yields f(k, v) for every key k of m, in no particular order: for
// List and CommittedAddresses, which yield in any order.
func Values[K comparable, V, T any](ctx context.Context, m map[K]V, f func(k K, v V) T) iter.Seq2[T, error] {
	out := make([]T, 0, len(m))
	for k, v := range m {
		out = append(out, f(k, v))
	}
	return Slice(ctx, out, nil)
}

// Get returns m[k]; an error wrapping ErrNotFound if m has no key k; ctx's
// error if ctx is done. A Get of retention.CommitSource must fail for a
// commit that does not exist, and honour ctx.
func Get[K comparable, V any](ctx context.Context, m map[K]V, k K) (V, error) {
	v, ok := m[k]
	switch {
	case ctx.Err() != nil:
		var zero V
		return zero, ctx.Err()
	case !ok:
		return v, fmt.Errorf("%w: %v", ErrNotFound, k)
	}
	return v, nil
}

// Concat yields the values of each item's sequence, item after item: for
// CommittedAddresses, the addresses of each kept commit (seq may return
// maps.Values of its tree). An error of seq ends it, as does a done ctx
// with ctx's error. An iter.Seq cannot fail midway: a tree read from a
// store as it is yielded (pages, rows) goes through [Chain], which carries
// its errors — a sequence that ends quietly on one leaves the rest of the
// commit's objects unprotected.
func Concat[A, T any](ctx context.Context, items []A, seq func(A) (iter.Seq[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for _, a := range items {
			if err := ctx.Err(); err != nil {
				yield(zero, err)
				return
			}
			vs, err := seq(a)
			if err != nil {
				yield(zero, err)
				return
			}
			for v := range vs {
				if err := ctx.Err(); err != nil {
					yield(zero, err)
					return
				}
				if !yield(v, nil) {
					return
				}
			}
		}
		if err := ctx.Err(); err != nil {
			yield(zero, err)
		}
	}
}

// Chain yields the values of each item's sequence, item after item, as
// Concat does, for sequences that can fail midway: a commit's tree read
// from a store page by page ([Pages]) or row by row ([Query]). An error of
// a sequence ends it, as does a done ctx with ctx's error; seq is not
// called for the items after an early break.
func Chain[A, T any](ctx context.Context, items []A, seq func(A) iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		for _, a := range items {
			if err := ctx.Err(); err != nil {
				yield(zero, err)
				return
			}
			for v, err := range seq(a) {
				if err == nil {
					err = ctx.Err()
				}
				if err != nil {
					yield(zero, err)
					return
				}
				if !yield(v, nil) {
					return
				}
			}
		}
		if err := ctx.Err(); err != nil {
			yield(zero, err)
		}
	}
}

// Ordered passes on seq's items, checking that their keys are >= from and
// strictly ascending in byte order, as Source's Branches and Uncommitted
// must yield them; an item out of that order ends the iteration with an
// error wrapping ErrOutOfOrder. Give it what a query returns: a database
// whose collation is not byte order (most are not: they skip punctuation
// or fold case, where bytes put "a-b" before "a_b" before "aa" before "b")
// then fails the export, as soon as the rows show two keys in the other
// order, instead of making a resumed one skip branches. It sees only the
// rows, though: a WHERE id >= from compared in such a collation drops keys
// that are >= from in bytes ("_a" from "A", case folded) and shows
// nothing. Sort and compare by bytes in the query: WHERE id COLLATE "C"
// >= $1 ORDER BY id COLLATE "C" in PostgreSQL (BINARY in MySQL and
// SQLite); the suites' checks of from, run on the host's real database,
// catch a query that does not.
func Ordered[T any](seq iter.Seq2[T, error], key func(T) string, from string) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		last, first := from, true
		for v, err := range seq {
			if err == nil {
				k := key(v)
				if k < last || (k == last && !first) {
					var zero T
					yield(zero, fmt.Errorf("%w: %q after %q", ErrOutOfOrder, k, last))
					return
				}
				last, first = k, false
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// Pages yields a store's items with keys >= from, read a page at a time:
// page returns the items whose keys are >= its from, in ascending byte
// order of key, as many as the store likes (a LIMIT), and an empty page at
// the end. Each page starts at the last key of the one before, which it
// yields again unless that item was removed meanwhile: Pages skips that
// one. So items written or removed between pages never make it skip or
// repeat an item that stays, as paging by offset does, and a key the store
// holds twice, or two keys its collation holds equal ("A" and "a"), end
// the iteration with an error wrapping ErrOutOfOrder where a page
// boundary between them would have skipped one — if a page holds two
// items or more: a LIMIT of 1 cannot show the repeat. Keys out of order
// end it so too (see Ordered for what that check cannot see); a done ctx
// with ctx's error. The end costs one more call of page than the pages.
func Pages[T any](ctx context.Context, from string, key func(T) string, page func(ctx context.Context, from string) ([]T, error)) iter.Seq2[T, error] {
	return Ordered(func(yield func(T, error) bool) {
		var zero T
		read := func(from string) ([]T, bool) {
			if err := ctx.Err(); err != nil {
				yield(zero, err)
				return nil, false
			}
			items, err := page(ctx, from)
			if err != nil {
				yield(zero, err)
				return nil, false
			}
			return items, true
		}
		for next, again := from, false; ; {
			items, ok := read(next)
			if !ok {
				return
			}
			if again && len(items) > 0 && key(items[0]) == next {
				// The item yielded last; a second of that key follows it
				// and fails Ordered.
				if items = items[1:]; len(items) == 0 {
					// That item alone: the end, or a page of one item.
					if items, ok = read(next + "\x00"); !ok {
						return
					}
				}
			}
			if len(items) == 0 {
				return
			}
			for _, v := range items {
				if !yield(v, nil) {
					return
				}
			}
			next, again = key(items[len(items)-1]), true
		}
	}, key, from)
}

// Rows is what Query reads: *sql.Rows has these methods.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Query runs query when the iteration starts, yields what scan reads of
// each row, and closes the rows when the iteration ends or is stopped. An
// error of query, scan, the rows (Err, Close) or ctx ends it. The query
// sorts and resumes itself, both in bytes (WHERE id COLLATE "C" >= $1
// ORDER BY id COLLATE "C"); pass the result through Ordered to check it.
func Query[T any](ctx context.Context, query func(ctx context.Context) (Rows, error), scan func(Rows) (T, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		if err := ctx.Err(); err != nil {
			yield(zero, err)
			return
		}
		rows, err := query(ctx)
		if err != nil {
			yield(zero, err)
			return
		}
		stopped := false
		for !stopped && rows.Next() {
			if err = ctx.Err(); err != nil {
				break
			}
			var v T
			if v, err = scan(rows); err != nil {
				break
			}
			stopped = !yield(v, nil)
		}
		err = cmp.Or(err, rows.Err(), rows.Close())
		if !stopped {
			if err = cmp.Or(err, ctx.Err()); err != nil {
				yield(zero, err)
			}
		}
	}
}

// lowerBound is the index of the first of sorted >= from.
func lowerBound(sorted []string, from string) int {
	i, _ := slices.BinarySearch(sorted, from)
	return i
}
