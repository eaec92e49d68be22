// Package sqlstore is a copytrack.Store over database/sql for PostgreSQL:
// one table of (key bytea PRIMARY KEY, value bytea NOT NULL), upserts with
// ON CONFLICT, and prefix scans as key ranges read a page at a time.
//
// The package depends on database/sql only; the host opens the *sql.DB with
// the PostgreSQL driver it already uses (github.com/lib/pq, pgx's stdlib,
// ...). Queries use $n placeholders. Set and Delete are one statement
// each, so each record written or dropped costs a round trip (figures in the
// module's BENCHMARKS.md).
//
// The store passes copytrack/storetest against a real server in
// tests/copytrackpg in this repository. Those tests use the server at
// LAKEGC_POSTGRES_URL if it is set; otherwise they start a private one from
// the installed binaries (/usr/lib/postgresql/*/bin) on 127.0.0.1, in a
// temporary directory, as the postgres user when run as root; without either
// they skip, unless LAKEGC_REQUIRE_POSTGRES=1 (as in CI), when they fail.
package sqlstore
