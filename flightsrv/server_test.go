package flightsrv_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/streamsql/streamsql/flightsrv"
	"github.com/streamsql/streamsql/internal/testserver"
)

type fixture struct {
	t      *testing.T
	client *flightsql.Client
	srv    *testserver.Server
}

func start(t *testing.T) *fixture {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	srv := testserver.Start(t, testserver.Options{SuperuserPassword: "pw"})
	fs := flightsrv.New(srv.Engine, flightsrv.Options{Mem: mem})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go fs.Serve(ln)
	t.Cleanup(fs.Shutdown)
	c, err := flightsql.NewClient(ln.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &fixture{t: t, client: c, srv: srv}
}

func (f *fixture) login(user, password string) context.Context {
	f.t.Helper()
	ctx, err := f.client.Client.AuthenticateBasicToken(context.Background(), user, password)
	if err != nil {
		f.t.Fatalf("authenticating %s: %v", user, err)
	}
	return ctx
}

func (f *fixture) update(ctx context.Context, sql string) int64 {
	f.t.Helper()
	n, err := f.client.ExecuteUpdate(ctx, sql)
	if err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// query runs sql and returns its schema and rows, each row's values
// rendered by Arrow's ValueStr.
func (f *fixture) query(ctx context.Context, sql string) (*arrow.Schema, [][]string) {
	f.t.Helper()
	info, err := f.client.Execute(ctx, sql)
	if err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
	return f.read(ctx, info)
}

func (f *fixture) read(ctx context.Context, info *flight.FlightInfo) (*arrow.Schema, [][]string) {
	f.t.Helper()
	rd, err := f.client.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rd.Release()
	var rows [][]string
	for rd.Next() {
		rec := rd.RecordBatch()
		for r := 0; r < int(rec.NumRows()); r++ {
			row := make([]string, rec.NumCols())
			for c := range row {
				row[c] = rec.Column(c).ValueStr(r)
			}
			rows = append(rows, row)
		}
	}
	if err := rd.Err(); err != nil {
		f.t.Fatal(err)
	}
	return rd.Schema(), rows
}

// queryErr runs sql and returns the first error of its calls.
func (f *fixture) queryErr(ctx context.Context, sql string) error {
	info, err := f.client.Execute(ctx, sql)
	if err != nil {
		return err
	}
	rd, err := f.client.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		return err
	}
	defer rd.Release()
	for rd.Next() {
	}
	return rd.Err()
}

func wantCode(t *testing.T, err error, code codes.Code, sqlstate string) {
	t.Helper()
	st, _ := status.FromError(err)
	if err == nil || st.Code() != code || !strings.Contains(st.Message(), sqlstate) {
		t.Fatalf("got %v, want %s with SQLSTATE %s", err, code, sqlstate)
	}
}

// TestFlightSQL runs DDL, DML and queries over tables and a materialized
// view through a Flight SQL client, and checks the Arrow types and values.
func TestFlightSQL(t *testing.T) {
	f := start(t)
	ctx := f.login("root", "pw")
	f.update(ctx, "CREATE TABLE t (k int PRIMARY KEY, v numeric, d numeric(10,2), s text, ts timestamp, c char(3))")
	if n := f.update(ctx, "INSERT INTO t VALUES (1, 1.50, 2.5, 'a', '2026-01-02 03:04:05', 'x'), (2, NULL, NULL, NULL, NULL, NULL), (3, 10, 1, 'c', NULL, 'xyz')"); n != 3 {
		t.Fatalf("INSERT reported %d rows", n)
	}
	f.update(ctx, "CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n, sum(d) AS total FROM t")
	if n := f.update(ctx, "UPDATE t SET d = d * 2 WHERE k >= 2"); n != 2 {
		t.Fatalf("UPDATE reported %d rows", n)
	}
	f.update(ctx, "FLUSH")

	schema, rows := f.query(ctx, "SELECT k, v, d, s, ts, c FROM t ORDER BY k")
	wantTypes := []string{"int32", "utf8", "decimal(38, 2)", "utf8", "timestamp[us]", "utf8"}
	for i, fld := range schema.Fields() {
		if fld.Type.String() != wantTypes[i] {
			t.Errorf("column %s is %s, want %s", fld.Name, fld.Type, wantTypes[i])
		}
	}
	want := [][]string{
		{"1", "1.50", "2.5", "a", "2026-01-02T03:04:05", "x  "},
		{"2", "(null)", "(null)", "(null)", "(null)", "(null)"},
		{"3", "10", "2", "c", "(null)", "xyz"},
	}
	if got := rows; !equalRows(got, want) {
		t.Errorf("rows\n%v\nwant\n%v", got, want)
	}
	if _, rows := f.query(ctx, "SELECT n, total FROM mv"); !equalRows(rows, [][]string{{"3", "4.5"}}) {
		t.Errorf("view rows %v", rows)
	}

	// Prepared statements without parameters.
	prep, err := f.client.Prepare(ctx, "SELECT s FROM t WHERE k = 3")
	if err != nil {
		t.Fatal(err)
	}
	info, err := prep.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, rows := f.read(ctx, info); !equalRows(rows, [][]string{{"c"}}) {
		t.Errorf("prepared rows %v", rows)
	}
	if err := prep.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// Errors keep their SQLSTATE.
	_, err = f.client.Execute(ctx, "SELECT * FROM nope")
	wantCode(t, err, codes.InvalidArgument, "42P01")
	_, err = f.client.ExecuteUpdate(ctx, "INSERT INTO t VALUES (1, 0, 0, 'dup', NULL)")
	wantCode(t, err, codes.Aborted, "23505")
}

// TestFlightSQLAuthentication checks passwords, tokens and privileges.
func TestFlightSQLAuthentication(t *testing.T) {
	f := start(t)
	if _, err := f.client.Client.AuthenticateBasicToken(context.Background(), "root", "wrong"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := f.client.Execute(context.Background(), "SELECT 1"); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("no token: %v", err)
	}
	root := f.login("root", "pw")
	f.update(root, "CREATE TABLE secret (a int)")
	f.update(root, "CREATE ROLE alice LOGIN PASSWORD 'a'")
	alice := f.login("alice", "a")
	wantCode(t, f.queryErr(alice, "SELECT * FROM secret"), codes.PermissionDenied, "42501")
	f.update(root, "GRANT SELECT ON secret TO alice")
	if _, rows := f.query(alice, "SELECT count(*) FROM secret"); !equalRows(rows, [][]string{{"0"}}) {
		t.Errorf("rows %v", rows)
	}
}

func equalRows(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "|") != strings.Join(b[i], "|") {
			return false
		}
	}
	return true
}
