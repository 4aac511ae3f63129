package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/streamsql/streamsql/sqlerr"
)

// connectionFailed is SQLSTATE 08001, sqlclient_unable_to_establish_sqlconnection.
const connectionFailed = "08001"

// connect opens a connection to the sink's server. A failure is 08001
// naming the address, or the server's own error (a bad password, a
// missing database).
func (c *Config) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, c.connString())
	if err != nil {
		return nil, c.serverError(err)
	}
	return conn, nil
}

// serverError gives err a SQLSTATE: the server's, else 08001.
func (c *Config) serverError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return sqlerr.New(pe.Code, "postgres sink %s at %s: %s", c.Name, c.addr(), pe.Message)
	}
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return err
	}
	return sqlerr.New(connectionFailed, "postgres sink %s: could not connect to PostgreSQL at %s: %v", c.Name, c.addr(), err)
}

// CheckTarget checks the sink's target table at CREATE SINK: it exists
// (else 42P01), has a column of a fitting type for each of the sink's
// columns, by name (42703, 42804), needs no value for a column the sink
// lacks (23502), and for an upsert sink has a primary key or unique index
// on the key columns (42P10). It creates the progress table if missing
// and the sink's progress row. An unreachable server is 08001.
func CheckTarget(ctx context.Context, cfg *Config) error {
	conn, err := cfg.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := describe(ctx, conn, cfg); err != nil {
		return cfg.serverError(err)
	}
	if err := ensureProgress(ctx, conn, cfg); err != nil {
		return cfg.serverError(err)
	}
	return nil
}

// table is what delivery needs of the target table: the PostgreSQL type
// of each sink column (format_type's spelling, for casts), by index in
// Config.Columns.
type table struct {
	types []string
}

// describe reads and checks the target table (see CheckTarget).
func describe(ctx context.Context, conn *pgx.Conn, cfg *Config) (*table, error) {
	var oid uint32
	err := conn.QueryRow(ctx, `SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p')`, cfg.Schema, cfg.Table).Scan(&oid)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "target table %s.%s of postgres sink %s does not exist in database %s at %s",
			cfg.Schema, cfg.Table, cfg.Name, cfg.Database, cfg.addr())
	}
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, `SELECT a.attname, a.atttypid, a.atttypmod, t.typelem, format_type(a.atttypid, a.atttypmod),
			a.attnotnull AND NOT a.atthasdef AND a.attidentity = '', a.attgenerated <> ''
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return nil, err
	}
	type targetColumn struct {
		name, typeName      string
		oid, elem           uint32
		typmod              int32
		required, generated bool
	}
	var cols []targetColumn
	for rows.Next() {
		var c targetColumn
		if err := rows.Scan(&c.name, &c.oid, &c.typmod, &c.elem, &c.typeName, &c.required, &c.generated); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	tbl := &table{types: make([]string, len(cfg.Columns))}
	name := cfg.Schema + "." + cfg.Table
	for i, sc := range cfg.Columns {
		j := slices.IndexFunc(cols, func(c targetColumn) bool { return c.name == sc.Name })
		if j < 0 {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of sink %s is not a column of target table %s", sc.Name, cfg.Name, name)
		}
		tc := cols[j]
		to, ok := TypeOf(tc.oid, tc.typmod, tc.elem)
		if tc.generated || !ok || !Fits(sc.Type, to) {
			why := ""
			if tc.generated {
				why = " (a generated column)"
			}
			return nil, sqlerr.New(sqlerr.DatatypeMismatch, "column \"%s\" of sink %s is %s, which does not fit column \"%s\" of target table %s: %s%s",
				sc.Name, cfg.Name, sc.Type, tc.name, name, tc.typeName, why).
				WithHint("The target column needs the same type or a wider one (a longer varchar, a wider integer or numeric).")
		}
		tbl.types[i] = tc.typeName
	}
	for _, tc := range cols {
		if tc.required && cfg.column(tc.name) < 0 {
			return nil, sqlerr.New(sqlerr.NotNullViolation, "column \"%s\" of target table %s is NOT NULL without a default, and sink %s has no such column", tc.name, name, cfg.Name)
		}
	}
	if cfg.Upsert {
		if err := checkUniqueKey(ctx, conn, cfg, oid); err != nil {
			return nil, err
		}
	}
	return tbl, nil
}

// checkUniqueKey checks that the target table has a primary key or a
// unique index on exactly the upsert key's columns, which INSERT ... ON
// CONFLICT needs.
func checkUniqueKey(ctx context.Context, conn *pgx.Conn, cfg *Config, oid uint32) error {
	rows, err := conn.Query(ctx, `SELECT array_agg(a.attname::text ORDER BY a.attname) FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
		WHERE i.indrelid = $1 AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
		GROUP BY i.indexrelid`, oid)
	if err != nil {
		return err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[[]string])
	if err != nil {
		return err
	}
	var want []string
	for _, k := range cfg.Key {
		want = append(want, cfg.Columns[k].Name)
	}
	slices.Sort(want)
	for _, k := range keys {
		if slices.Equal(k, want) {
			return nil
		}
	}
	return sqlerr.New(sqlerr.InvalidColumnReference, "target table %s.%s has no primary key or unique index on (%s), the key of upsert sink %s",
		cfg.Schema, cfg.Table, strings.Join(want, ", "), cfg.Name).
		WithHint("Give the target table that primary key, or name its primary key in the option primary_key.")
}

// ensureProgress creates the progress table if missing, and the sink's row
// in it at epoch 0.
func ensureProgress(ctx context.Context, conn *pgx.Conn, cfg *Config) error {
	tbl := pgx.Identifier{cfg.Schema, ProgressTable}.Sanitize()
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", tbl).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+tbl+" (sink_id text PRIMARY KEY, epoch bigint NOT NULL)"); err != nil {
			return err
		}
	}
	_, err := conn.Exec(ctx, "INSERT INTO "+tbl+" VALUES ($1, 0) ON CONFLICT (sink_id) DO NOTHING", cfg.ProgressID)
	return err
}

// readProgress returns the last epoch the sink applied.
func readProgress(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, cfg *Config, forUpdate bool) (uint64, error) {
	sql := "SELECT epoch FROM " + pgx.Identifier{cfg.Schema, ProgressTable}.Sanitize() + " WHERE sink_id = $1"
	if forUpdate {
		sql += " FOR UPDATE"
	}
	var epoch int64
	err := q.QueryRow(ctx, sql, cfg.ProgressID).Scan(&epoch)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("the progress row %q of sink %s is missing from %s.%s", cfg.ProgressID, cfg.Name, cfg.Schema, ProgressTable)
	}
	return uint64(epoch), err
}
