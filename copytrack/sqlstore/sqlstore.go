package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"regexp"

	"github.com/lakegc/lakegc/copytrack"
)

// ErrInvalidInput is wrapped by the error of New for a table name it will
// not quote, a nil *sql.DB or a nil option.
var ErrInvalidInput = errors.New("sqlstore: invalid input")

// DefaultPageSize is how many rows one Scan query reads when no WithPageSize
// option is given.
const DefaultPageSize = 500

// maxPagePrealloc bounds the room a page reserves before its rows arrive, so
// that a huge WithPageSize costs only the rows actually read.
const maxPagePrealloc = 1024

// tableName is an identifier, optionally schema-qualified. Only these are
// accepted, so the name can go into SQL text without injection.
var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$`)

// Store is a copytrack.Store in one PostgreSQL table of (key bytea primary
// key, value bytea). It is safe for concurrent use, as *sql.DB is.
type Store struct {
	db       *sql.DB
	table    string
	pageSize int
	create   bool
	optErr   error // the first invalid option, while New runs

	upsert, remove                   string
	first, firstOpen, next, nextOpen string // Scan's page queries
}

// Option configures a Store.
type Option func(*Store)

// WithCreateTable makes New create the table if it does not exist.
func WithCreateTable() Option { return func(s *Store) { s.create = true } }

// WithPageSize sets how many rows one Scan query reads (default
// DefaultPageSize). Scan holds at most one page in memory and no database
// connection while the loop body runs. 0 is the default; a negative n is
// invalid, and New fails with an error wrapping ErrInvalidInput.
func WithPageSize(n int) Option {
	return func(s *Store) {
		switch {
		case n < 0:
			if s.optErr == nil {
				s.optErr = fmt.Errorf("%w: page size %d", ErrInvalidInput, n)
			}
		case n > 0:
			s.pageSize = n
		}
	}
}

// New returns a Store keeping its pairs in table (a name such as
// "copytrack" or "gc.copies") of db, which must be a PostgreSQL database
// opened with the host's driver. With WithCreateTable it creates the table
// when missing; otherwise the table must exist, as created by
//
//	CREATE TABLE <table> (key bytea PRIMARY KEY, value bytea NOT NULL)
//
// A table name that is not an identifier, a nil db, and a nil or invalid
// option are an error wrapping ErrInvalidInput, before db is used.
func New(ctx context.Context, db *sql.DB, table string, opts ...Option) (*Store, error) {
	if !tableName.MatchString(table) {
		return nil, fmt.Errorf("%w: table name %q", ErrInvalidInput, table)
	}
	if db == nil {
		return nil, fmt.Errorf("%w: nil *sql.DB", ErrInvalidInput)
	}
	s := &Store{db: db, table: table, pageSize: DefaultPageSize}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil option", ErrInvalidInput)
		}
		o(s)
	}
	if s.optErr != nil {
		return nil, s.optErr
	}
	s.upsert = "INSERT INTO " + table + " (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
	s.remove = "DELETE FROM " + table + " WHERE key = $1"
	sel := "SELECT key, value FROM " + table + " WHERE "
	order := " ORDER BY key LIMIT $"
	s.first = sel + "key >= $1 AND key < $2" + order + "3"
	s.firstOpen = sel + "key >= $1" + order + "2"
	s.next = sel + "key > $1 AND key < $2" + order + "3"
	s.nextOpen = sel + "key > $1" + order + "2"
	if s.create {
		if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+table+" (key bytea PRIMARY KEY, value bytea NOT NULL)"); err != nil {
			return nil, s.errorf(ctx, "create table", err)
		}
	}
	return s, nil
}

// errorf wraps a database error, and ctx.Err() too when the context is done
// (drivers report a cancelled query in their own words).
func (s *Store) errorf(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("sqlstore: %s %s: %w: %w", op, s.table, ctxErr, err)
	}
	return fmt.Errorf("sqlstore: %s %s: %w", op, s.table, err)
}

// Set stores value under key with an upsert.
func (s *Store) Set(ctx context.Context, key, value []byte) error {
	if err := ctx.Err(); err != nil {
		return s.errorf(ctx, "set", err)
	}
	if value == nil {
		value = []byte{} // nil would be NULL
	}
	if key == nil {
		key = []byte{}
	}
	if _, err := s.db.ExecContext(ctx, s.upsert, key, value); err != nil {
		return s.errorf(ctx, "set", err)
	}
	return nil
}

// Delete removes key; a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key []byte) error {
	if err := ctx.Err(); err != nil {
		return s.errorf(ctx, "delete", err)
	}
	if key == nil {
		key = []byte{}
	}
	if _, err := s.db.ExecContext(ctx, s.remove, key); err != nil {
		return s.errorf(ctx, "delete", err)
	}
	return nil
}

// Scan yields the pairs whose key starts with prefix in ascending byte order
// (PostgreSQL compares bytea bytewise, whatever the collation). It reads one
// page per query, key >= prefix and key < the prefix's successor, resuming
// after the last key read; the scan is not a snapshot across pages.
func (s *Store) Scan(ctx context.Context, prefix []byte) iter.Seq2[copytrack.KV, error] {
	lower := bytes.Clone(prefix)
	if lower == nil {
		lower = []byte{}
	}
	upper := successor(prefix)
	return func(yield func(copytrack.KV, error) bool) {
		var after []byte
		for {
			if err := ctx.Err(); err != nil {
				yield(copytrack.KV{}, s.errorf(ctx, "scan", err))
				return
			}
			page, err := s.page(ctx, lower, upper, after)
			if err != nil {
				yield(copytrack.KV{}, err)
				return
			}
			for _, kv := range page {
				if err := ctx.Err(); err != nil {
					yield(copytrack.KV{}, s.errorf(ctx, "scan", err))
					return
				}
				if !yield(kv, nil) {
					return
				}
			}
			if len(page) < s.pageSize {
				return
			}
			after = page[len(page)-1].Key
		}
	}
}

// page reads up to pageSize pairs in [lower, upper) (no upper bound when
// upper is nil), after the key after when it is not nil. The rows are closed
// before it returns.
func (s *Store) page(ctx context.Context, lower, upper, after []byte) ([]copytrack.KV, error) {
	var rows *sql.Rows
	var err error
	switch {
	case after == nil && upper != nil:
		rows, err = s.db.QueryContext(ctx, s.first, lower, upper, s.pageSize)
	case after == nil:
		rows, err = s.db.QueryContext(ctx, s.firstOpen, lower, s.pageSize)
	case upper != nil:
		rows, err = s.db.QueryContext(ctx, s.next, after, upper, s.pageSize)
	default:
		rows, err = s.db.QueryContext(ctx, s.nextOpen, after, s.pageSize)
	}
	if err != nil {
		return nil, s.errorf(ctx, "scan", err)
	}
	defer rows.Close()
	page := make([]copytrack.KV, 0, min(s.pageSize, maxPagePrealloc))
	for rows.Next() {
		var kv copytrack.KV
		if err := rows.Scan(&kv.Key, &kv.Value); err != nil {
			return nil, s.errorf(ctx, "scan", err)
		}
		page = append(page, kv)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errorf(ctx, "scan", err)
	}
	return page, nil
}

// successor returns the smallest key greater than every key starting with
// prefix, or nil when there is none (an empty prefix, or one of only \xff).
func successor(prefix []byte) []byte {
	n := len(prefix)
	for n > 0 && prefix[n-1] == 0xff {
		n--
	}
	if n == 0 {
		return nil
	}
	s := bytes.Clone(prefix[:n])
	s[n-1]++
	return s
}
