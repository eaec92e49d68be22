// Package sqlstore is a copytrack.Store over database/sql for PostgreSQL:
// one table of (key bytea PRIMARY KEY, value bytea NOT NULL), upserts with
// ON CONFLICT, and prefix scans as key ranges read a page at a time.
//
// The package depends on database/sql only; the host opens the *sql.DB with
// the PostgreSQL driver it already uses (github.com/lib/pq, pgx's stdlib,
// ...). Queries use $n placeholders. The store passes copytrack/storetest
// against a real server: see examples/copytrackpg in this repository.
package sqlstore
