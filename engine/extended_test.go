package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/streamsql/streamsql/internal/testserver"
)

var queryModes = []pgx.QueryExecMode{
	pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec,
	pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol,
}

func connectMode(t *testing.T, ctx context.Context, url string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// allTypesRow is a row of a table with a column of every type.
type allTypesRow struct {
	k    int32
	b    *bool
	i2   *int16
	i8   *int64
	f4   *float32
	f8   *float64
	n    pgtype.Numeric
	n2   pgtype.Numeric
	s    *string
	vc   *string
	d    pgtype.Date
	ts   pgtype.Timestamp
	tstz pgtype.Timestamptz
	iv   pgtype.Interval
}

const allTypesColumns = "k int PRIMARY KEY, b boolean, i2 smallint, i8 bigint, f4 real, f8 double precision, " +
	"n numeric, n2 numeric(10,2), s text, vc varchar(5), d date, ts timestamp, tstz timestamptz, iv interval"

func ptr[T any](v T) *T { return &v }

func numeric(t *testing.T, s string) pgtype.Numeric {
	t.Helper()
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		t.Fatal(err)
	}
	return n
}

func (r *allTypesRow) args() []any {
	return []any{r.k, r.b, r.i2, r.i8, r.f4, r.f8, r.n, r.n2, r.s, r.vc, r.d, r.ts, r.tstz, r.iv}
}

func (r *allTypesRow) dest() []any {
	return []any{&r.k, &r.b, &r.i2, &r.i8, &r.f4, &r.f8, &r.n, &r.n2, &r.s, &r.vc, &r.d, &r.ts, &r.tstz, &r.iv}
}

// String renders the row canonically, for comparisons.
func (r *allTypesRow) String() string {
	var parts []string
	add := func(v any) { parts = append(parts, v.(string)) }
	opt := func(ok bool, f func() string) {
		if !ok {
			add("NULL")
			return
		}
		add(f())
	}
	add(fmt.Sprint(r.k))
	opt(r.b != nil, func() string { return fmt.Sprint(*r.b) })
	opt(r.i2 != nil, func() string { return fmt.Sprint(*r.i2) })
	opt(r.i8 != nil, func() string { return fmt.Sprint(*r.i8) })
	opt(r.f4 != nil, func() string { return fmt.Sprint(*r.f4) })
	opt(r.f8 != nil, func() string { return fmt.Sprint(*r.f8) })
	opt(r.n.Valid, func() string { return numericText(r.n) })
	opt(r.n2.Valid, func() string { return numericText(r.n2) })
	opt(r.s != nil, func() string { return *r.s })
	opt(r.vc != nil, func() string { return *r.vc })
	opt(r.d.Valid, func() string { return r.d.Time.Format("2006-01-02") })
	opt(r.ts.Valid, func() string { return r.ts.Time.Format("2006-01-02 15:04:05.999999") })
	opt(r.tstz.Valid, func() string { return r.tstz.Time.UTC().Format("2006-01-02 15:04:05.999999Z07") })
	opt(r.iv.Valid, func() string { return fmt.Sprintf("%dmon %dd %dus", r.iv.Months, r.iv.Days, r.iv.Microseconds) })
	return strings.Join(parts, "|")
}

// numericText renders a numeric's value without trailing zeros.
func numericText(n pgtype.Numeric) string {
	r := new(big.Rat).SetInt(n.Int)
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(n.Exp, -n.Exp))), nil)
	if n.Exp >= 0 {
		r.Mul(r, new(big.Rat).SetInt(scale))
	} else {
		r.Quo(r, new(big.Rat).SetInt(scale))
	}
	s := r.FloatString(20)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// TestExtendedProtocol runs pgx in every query mode against the engine: DDL,
// DML with parameters of every type, reads of every type in binary and in
// text, a view following its table, a named prepared statement and errors.
func TestExtendedProtocol(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})

	full := allTypesRow{
		k: 1, b: ptr(true), i2: ptr(int16(-32768)), i8: ptr(int64(9_000_000_000)), f4: ptr(float32(1.5)), f8: ptr(0.1),
		n: numeric(t, "12345678901234567890.123456789"), n2: numeric(t, "-1234.5"), s: ptr("héllo 'q' \\ \"x\""), vc: ptr("abc"),
		d:    pgtype.Date{Time: time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), Valid: true},
		ts:   pgtype.Timestamp{Time: time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC), Valid: true},
		tstz: pgtype.Timestamptz{Time: time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC), Valid: true},
		iv:   pgtype.Interval{Months: 14, Days: -3, Microseconds: 3_723_000_004, Valid: true},
	}
	nulls := allTypesRow{k: 2}

	for i, mode := range queryModes {
		t.Run(mode.String(), func(t *testing.T) {
			conn := connectMode(t, ctx, srv.URL, mode)
			tbl, view := fmt.Sprintf("t%d", i), fmt.Sprintf("v%d", i)
			exec := func(sql string, args ...any) pgconn.CommandTag {
				t.Helper()
				tag, err := conn.Exec(ctx, sql, args...)
				if err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				return tag
			}
			exec("CREATE TABLE " + tbl + " (" + allTypesColumns + ")")
			exec("CREATE MATERIALIZED VIEW " + view + " AS SELECT count(*) AS n, sum(i8) AS total, max(s) AS top FROM " + tbl)

			insert := "INSERT INTO " + tbl + " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
			for _, r := range []allTypesRow{full, nulls} {
				if tag := exec(insert, r.args()...); tag.String() != "INSERT 0 1" {
					t.Fatalf("insert: tag %q", tag)
				}
			}

			// Every type reads back, in the formats pgx picks for the mode
			// and, where pgx describes the statement, all text and all
			// binary.
			formats := []pgx.QueryResultFormats{nil}
			if mode == pgx.QueryExecModeCacheStatement || mode == pgx.QueryExecModeDescribeExec {
				formats = append(formats, pgx.QueryResultFormats{pgx.TextFormatCode}, pgx.QueryResultFormats{pgx.BinaryFormatCode})
			}
			for _, f := range formats {
				args := []any{}
				if f != nil {
					args = append(args, f)
				}
				rows, err := conn.Query(ctx, "SELECT * FROM "+tbl+" WHERE k >= $1 ORDER BY k", append(args, 0)...)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for rows.Next() {
					var r allTypesRow
					if err := rows.Scan(r.dest()...); err != nil {
						t.Fatalf("formats %v: %v", f, err)
					}
					if r.n2.Valid && r.n2.Exp != -2 {
						// numeric(10,2) keeps two fractional digits.
						t.Errorf("formats %v: numeric(10,2) %s has exponent %d", f, numericText(r.n2), r.n2.Exp)
					}
					got = append(got, r.String())
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("formats %v: %v", f, err)
				}
				want := []string{full.String(), nulls.String()}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("formats %v:\n got %q\nwant %q", f, got, want)
				}
			}

			// The view follows the table.
			var n, total int64
			var top *string
			view1 := "SELECT n, total, top FROM " + view + " WHERE n >= $1"
			if err := conn.QueryRow(ctx, view1, 0).Scan(&n, &total, &top); err != nil || n != 2 || total != 9_000_000_000 || top == nil || *top != *full.s {
				t.Fatalf("view: %d %d %v %v", n, total, top, err)
			}
			if tag := exec("UPDATE "+tbl+" SET i8 = $1, vc = $2 WHERE k = $3", 100, "xy", 2); tag.String() != "UPDATE 1" {
				t.Errorf("update: %q", tag)
			}
			if tag := exec("DELETE FROM "+tbl+" WHERE k = $1", int32(1)); tag.String() != "DELETE 1" {
				t.Errorf("delete: %q", tag)
			}
			if err := conn.QueryRow(ctx, view1, 0).Scan(&n, &total, &top); err != nil || n != 1 || total != 100 || top != nil {
				t.Fatalf("view after UPDATE and DELETE: %d %d %v %v", n, total, top, err)
			}
			var vc string
			if err := conn.QueryRow(ctx, "SELECT vc FROM "+tbl+" WHERE k = $1", 2).Scan(&vc); err != nil || vc != "xy" {
				t.Fatalf("updated row: %q %v", vc, err)
			}

			// A named prepared statement, used several times.
			name := "ins_" + tbl
			if _, err := conn.Prepare(ctx, name, "INSERT INTO "+tbl+" (k, s, n2) VALUES ($1, $2, $3)"); err != nil {
				t.Fatal(err)
			}
			for k := 10; k < 15; k++ {
				exec(name, k, fmt.Sprintf("s%d", k), numeric(t, fmt.Sprintf("%d.255", k)))
			}
			// Parameters in the select list, WHERE, LIMIT and OFFSET.
			rows, err := conn.Query(ctx, "SELECT k, $1 || s, n2 + $2 FROM "+tbl+" WHERE k > $3 ORDER BY k LIMIT $4 OFFSET $5",
				"<", numeric(t, "0.01"), 10, 3, 1)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var k int32
				var s string
				var n2 pgtype.Numeric
				if err := rows.Scan(&k, &s, &n2); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprintf("%d %s %s", k, s, numericText(n2)))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if want := "[12 <s12 12.27 13 <s13 13.27 14 <s14 14.27]"; fmt.Sprint(got) != want {
				t.Errorf("parameterized query: %v, want %s", got, want)
			}

			// A bad parameter is refused, with the statement's SQLSTATE where
			// the server sees it; the connection goes on.
			_, err = conn.Exec(ctx, "SELECT k FROM "+tbl+" WHERE k = $1", "x1")
			var pe *pgconn.PgError
			if mode == pgx.QueryExecModeExec || mode == pgx.QueryExecModeSimpleProtocol {
				if !errors.As(err, &pe) || pe.Code != "22P02" {
					t.Errorf("bad integer parameter: %v", err)
				}
			} else if err == nil {
				t.Error("bad integer parameter accepted")
			}
			// A bind error from the server, then a statement error with its
			// position.
			_, err = conn.Exec(ctx, "SELECT nope FROM "+tbl+" WHERE k = $1", 1)
			if !errors.As(err, &pe) || pe.Code != "42703" || pe.Position != 8 {
				t.Errorf("unknown column: %v", err)
			}
			var count int64
			if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+tbl+" WHERE k <> $1", -1).Scan(&count); err != nil || count != 6 {
				t.Errorf("count: %d %v", count, err)
			}
		})
	}
}

// TestExtendedProtocolMessages drives the extended protocol message by
// message over pgx's connection: a portal fetched with a row limit, and the
// protocol's errors.
func TestExtendedProtocolMessages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	conn := connectMode(t, ctx, srv.URL, pgx.QueryExecModeSimpleProtocol)
	if _, err := conn.Exec(ctx, "CREATE TABLE t (k int PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 10) AS g"); err != nil {
		t.Fatal(err)
	}
	pc := conn.PgConn()

	// A portal fetched 4 rows at a time.
	fe := pc.Frontend()
	fe.Send(&pgproto3.Parse{Name: "p", Query: "SELECT k, v FROM t WHERE k > $1 ORDER BY k"})
	fe.Send(&pgproto3.Describe{ObjectType: 'S', Name: "p"})
	fe.Send(&pgproto3.Bind{DestinationPortal: "c", PreparedStatement: "p", Parameters: [][]byte{[]byte("0")},
		ResultFormatCodes: []int16{pgproto3.BinaryFormat, pgproto3.TextFormat}})
	for range 4 {
		fe.Send(&pgproto3.Execute{Portal: "c", MaxRows: 4})
	}
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		m, err := pc.ReceiveMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *pgproto3.ParseComplete:
			got = append(got, "parsed")
		case *pgproto3.ParameterDescription:
			got = append(got, fmt.Sprint("params ", m.ParameterOIDs))
		case *pgproto3.RowDescription:
			got = append(got, fmt.Sprintf("columns %s:%d %s:%d", m.Fields[0].Name, m.Fields[0].DataTypeOID, m.Fields[1].Name, m.Fields[1].DataTypeOID))
		case *pgproto3.BindComplete:
			got = append(got, "bound")
		case *pgproto3.DataRow:
			k := int32(m.Values[0][0])<<24 | int32(m.Values[0][1])<<16 | int32(m.Values[0][2])<<8 | int32(m.Values[0][3])
			got = append(got, fmt.Sprintf("%d:%s", k, m.Values[1]))
		case *pgproto3.PortalSuspended:
			got = append(got, "suspended")
		case *pgproto3.CommandComplete:
			got = append(got, string(m.CommandTag))
		case *pgproto3.ErrorResponse:
			t.Fatalf("error %s %s", m.Code, m.Message)
		case *pgproto3.ReadyForQuery:
			got = append(got, "ready")
		}
		if _, ok := m.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	want := "parsed|params [23]|columns k:23 v:25|bound|1:v1|2:v2|3:v3|4:v4|suspended|5:v5|6:v6|7:v7|8:v8|suspended|9:v9|10:v10|SELECT 2|SELECT 0|ready"
	if g := strings.Join(got, "|"); g != want {
		t.Errorf("portal:\n got %s\nwant %s", g, want)
	}

	// Protocol errors.
	codeOf := func(err error) string {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return pe.Code + " " + pe.Message
		}
		return fmt.Sprint(err)
	}
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"too few parameters", func() error {
			return pc.ExecParams(ctx, "SELECT $1::int + $2", [][]byte{[]byte("1")}, nil, nil, nil).Read().Err
		}, `08P01 bind message supplies 1 parameters, but prepared statement "" requires 2`},
		{"not an integer", func() error {
			return pc.ExecParams(ctx, "SELECT k FROM t WHERE k = $1", [][]byte{[]byte("abc")}, nil, nil, nil).Read().Err
		}, `22P02 invalid input syntax for type integer: "abc"`},
		{"unknown statement", func() error {
			return pc.ExecPrepared(ctx, "nope", nil, nil, nil).Read().Err
		}, `26000 prepared statement "nope" does not exist`},
		{"undetermined parameter", func() error {
			_, err := pc.Prepare(ctx, "", "SELECT $2::int", nil)
			return err
		}, "42P18 could not determine data type of parameter $1"},
		{"view with a parameter", func() error {
			_, err := pc.Prepare(ctx, "", "CREATE MATERIALIZED VIEW pv AS SELECT k FROM t WHERE k = $1", nil)
			return err
		}, "0A000 materialized views may not be defined using bound parameters"},
		{"two statements", func() error {
			_, err := pc.Prepare(ctx, "", "SELECT 1; SELECT 2", nil)
			return err
		}, "42601 cannot insert multiple commands into a prepared statement"},
		{"duplicate statement", func() error {
			_, err := pc.Prepare(ctx, "p", "SELECT 1", nil)
			return err
		}, `42P05 prepared statement "p" already exists`},
	} {
		if got := codeOf(tc.run()); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}

	// The parameter types the server infers.
	sd, err := pc.Prepare(ctx, "types", "INSERT INTO t VALUES ($1 + 1, $2)", nil)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sd.ParamOIDs) != "[23 25]" || len(sd.Fields) != 0 {
		t.Errorf("INSERT parameters %v, fields %v", sd.ParamOIDs, sd.Fields)
	}
	sd, err = pc.Prepare(ctx, "types2", "SELECT $1::numeric(10,2), $2, k FROM t WHERE v = $3 LIMIT $4", []uint32{0, 20})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sd.ParamOIDs) != "[1700 20 25 20]" || len(sd.Fields) != 3 || sd.Fields[0].TypeModifier != 10<<16|2+4 || sd.Fields[1].DataTypeOID != 20 {
		t.Errorf("SELECT parameters %v, fields %+v", sd.ParamOIDs, sd.Fields)
	}

	// A statement prepared over a table that is then recreated with other
	// columns fails, as in PostgreSQL; pgx then prepares it again.
	cs := connectMode(t, ctx, srv.URL, pgx.QueryExecModeCacheStatement)
	if _, err := cs.Exec(ctx, "CREATE TABLE r (a int)"); err != nil {
		t.Fatal(err)
	}
	var a int32
	if err := cs.QueryRow(ctx, "SELECT * FROM r WHERE $1", true).Scan(&a); !errors.Is(err, pgx.ErrNoRows) {
		t.Fatalf("empty table: %v", err)
	}
	for _, sql := range []string{"DROP TABLE r", "CREATE TABLE r (a text)", "INSERT INTO r VALUES ('x')"} {
		if _, err := cs.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	var s string
	if err := cs.QueryRow(ctx, "SELECT * FROM r WHERE $1", true).Scan(&s); codeOf(err) != "0A000 cached plan must not change result type" {
		t.Fatalf("recreated table: %v", err)
	}
	if err := cs.QueryRow(ctx, "SELECT * FROM r WHERE $1", true).Scan(&s); err != nil || s != "x" {
		t.Fatalf("after re-preparing: %q %v", s, err)
	}
}

// TestDatabaseSQL runs database/sql over pgx's stdlib driver.
func TestDatabaseSQL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := testserver.Start(t, testserver.Options{})
	db, err := sql.Open("pgx", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (k int PRIMARY KEY, v text, d date, n numeric(8,3))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE MATERIALIZED VIEW s AS SELECT count(*) AS c, sum(n) AS total FROM t"); err != nil {
		t.Fatal(err)
	}
	stmt, err := db.PrepareContext(ctx, "INSERT INTO t VALUES ($1, $2, $3, $4)")
	if err != nil {
		t.Fatal(err)
	}
	for k := range 5 {
		if _, err := stmt.ExecContext(ctx, k, fmt.Sprint("v", k), time.Date(2024, 1, k+1, 0, 0, 0, 0, time.UTC), fmt.Sprintf("%d.5", k)); err != nil {
			t.Fatal(err)
		}
	}
	stmt.Close()
	var v string
	var d time.Time
	if err := db.QueryRowContext(ctx, "SELECT v, d FROM t WHERE k = $1", 3).Scan(&v, &d); err != nil || v != "v3" || d.Day() != 4 {
		t.Fatalf("row 3: %q %v %v", v, d, err)
	}
	var c int64
	var total string
	if err := db.QueryRowContext(ctx, "SELECT c, total FROM s").Scan(&c, &total); err != nil || c != 5 || total != "12.500" {
		t.Fatalf("view: %d %s %v", c, total, err)
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM t WHERE k = $1", "x"); err == nil {
		t.Fatal("DELETE with a bad parameter succeeded")
	}
}
