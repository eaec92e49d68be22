package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver

	"github.com/lakegc/lakegc/sweep"
)

// cutoff is the age limit both sides apply: Mark's, with its default
// minimum age (24 h), clock skew (5 min) and staging margin (15 min) from t0.
var cutoff = t0.Add(-sweep.DefaultMinAge - sweep.DefaultClockSkew - sweep.StagingMargin)

// sqlString quotes s as an SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// duckQuery is the statement DuckDB runs: the listed objects older than the
// cutoff whose address no keep file holds, written to out as Parquet.
func duckQuery(dir, out string, filter bool) string {
	listing := filepath.Join(dir, listingDir, "*.parquet")
	keep := fmt.Sprintf("[%s, %s]", sqlString(filepath.Join(dir, uncommittedFile)), sqlString(filepath.Join(dir, committedFile)))
	where := ""
	if filter {
		where = "\n\tWHERE l.last_modified < TIMESTAMPTZ " + sqlString(cutoff.Format("2006-01-02 15:04:05+00"))
	}
	return fmt.Sprintf(`COPY (
	SELECT l.address
	FROM read_parquet(%s) AS l
	ANTI JOIN read_parquet(%s) AS k ON l.address = k.address%s
) TO %s (FORMAT parquet, COMPRESSION snappy)`,
		sqlString(listing), keep, where, sqlString(out))
}

// duckOptions are DuckDB's settings and the form of its query.
type duckOptions struct {
	memory  int64    // bytes
	threads int      //
	set     []string // further settings, "name=value"
	filter  bool     // apply the cutoff to last_modified, as Mark does
}

// setupDuck opens an in-memory DuckDB with the settings of o, its spill
// folder in tmp, and returns the timed work: the anti-join of the inputs
// under dir, written to out. Opening and configuring the database is not
// timed.
func setupDuck(ctx context.Context, dir, out, tmp string, o duckOptions) (run func() (int64, error), closeFn func() error, err error) {
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
	stmts := []string{
		fmt.Sprintf("SET memory_limit = '%dKiB'", o.memory>>10),
		fmt.Sprintf("SET threads = %d", o.threads),
		"SET temp_directory = " + sqlString(tmp),
	}
	for _, kv := range o.set {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			closeFn()
			return nil, nil, fmt.Errorf("duckbench: setting %q is not name=value", kv)
		}
		stmts = append(stmts, fmt.Sprintf("SET %s = %s", name, value))
	}
	for _, stmt := range stmts {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			closeFn()
			return nil, nil, fmt.Errorf("duckbench: %s: %w", stmt, err)
		}
	}
	query := duckQuery(dir, out, o.filter)
	run = func() (int64, error) {
		res, err := conn.ExecContext(ctx, query)
		if err != nil {
			return 0, fmt.Errorf("duckbench: duckdb: %w", err)
		}
		return res.RowsAffected()
	}
	return run, closeFn, nil
}

// duckVersion returns the version of the linked DuckDB library.
func duckVersion(ctx context.Context) (string, error) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return "", err
	}
	defer db.Close()
	var v string
	err = db.QueryRowContext(ctx, "SELECT version()").Scan(&v)
	return v, err
}
