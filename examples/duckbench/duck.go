package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver
)

// cutoff is the age limit both sides apply: Mark's, with its default
// minimum age (24 h) and clock skew (5 min) from t0.
var cutoff = t0.Add(-24*time.Hour - 5*time.Minute)

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// duckQuery is the statement DuckDB runs: the listed objects older than the
// cutoff whose address no keep file holds, written to out as Parquet.
func duckQuery(dir, out string) string {
	listing := filepath.Join(dir, listingDir, "*.parquet")
	keep := fmt.Sprintf("[%s, %s]", sqlString(filepath.Join(dir, uncommittedFile)), sqlString(filepath.Join(dir, committedFile)))
	return fmt.Sprintf(`COPY (
	SELECT l.address
	FROM read_parquet(%s) AS l
	ANTI JOIN read_parquet(%s) AS k ON l.address = k.address
	WHERE l.last_modified < TIMESTAMPTZ %s
) TO %s (FORMAT parquet, COMPRESSION snappy)`,
		sqlString(listing), keep, sqlString(cutoff.Format("2006-01-02 15:04:05+00")), sqlString(out))
}

// setupDuck opens an in-memory DuckDB limited to memBytes and threads, with
// its spill folder in tmp, and returns the timed work: the anti-join of the
// inputs under dir, written to out. Opening and configuring the database is
// not timed.
func setupDuck(ctx context.Context, dir, out, tmp string, memBytes int64, threads int) (run func() (int64, error), closeFn func() error, err error) {
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, nil, err
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return nil, nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	closeFn = func() error { return errors.Join(conn.Close(), db.Close()) }
	for _, stmt := range []string{
		fmt.Sprintf("SET memory_limit = '%dKiB'", memBytes>>10),
		fmt.Sprintf("SET threads = %d", threads),
		"SET temp_directory = " + sqlString(tmp),
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			closeFn()
			return nil, nil, fmt.Errorf("duckbench: %s: %w", stmt, err)
		}
	}
	query := duckQuery(dir, out)
	run = func() (int64, error) {
		res, err := conn.ExecContext(ctx, query)
		if err != nil {
			return 0, fmt.Errorf("duckbench: duckdb: %w", err)
		}
		return res.RowsAffected()
	}
	return run, closeFn, nil
}
