package pgwire

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// rawStarted dials the server and completes the startup.
func rawStarted(t *testing.T, ts *testServer) *rawClient {
	t.Helper()
	c := dialRaw(t, ts.addr)
	c.startup(map[string]string{"user": "u"})
	return c
}

// receive returns the next message, of type M.
func receive[M pgproto3.BackendMessage](c *rawClient) M {
	c.t.Helper()
	m, err := c.fe.Receive()
	if err != nil {
		c.t.Fatal(err)
	}
	v, ok := m.(M)
	if !ok {
		var want M
		c.t.Fatalf("got %s, want %T", describe(m), want)
	}
	return v
}

func TestExtendedQueryBasics(t *testing.T) {
	ts, done := setup(t)
	defer done()
	c := rawStarted(t, ts)

	// A named statement: parameter types from the client (int8 for $3), the
	// statement ($1:int4) or neither ($2, text).
	c.send(
		&pgproto3.Parse{Name: "s", Query: "echo $1:int4 $2 $3", ParameterOIDs: []uint32{0, 0, types.OIDInt8}},
		&pgproto3.Describe{ObjectType: 'S', Name: "s"},
		&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("42"), []byte(" hi "), nil}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	c.expect("1", "t [23 25 20]", "T $1:23:4:-1:0 $2:25:-1:-1:0 $3:20:8:-1:0",
		"2", "T $1:23:4:-1:0 $2:25:-1:-1:0 $3:20:8:-1:0",
		"D 42| hi |NULL", "C SELECT 1", "Z I")

	// The statement is used again; the unnamed portal is replaced.
	c.send(
		&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("-1"), []byte(""), []byte("7")}},
		&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("2"), []byte("b"), []byte("8")}},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	c.expect("2", "2", "D 2|b|8", "C SELECT 1", "Z I")

	// A statement returning no rows describes as NoData; the unnamed
	// statement is replaced by the next Parse.
	c.send(
		&pgproto3.Parse{Query: "insert"},
		&pgproto3.Describe{ObjectType: 'S'},
		&pgproto3.Parse{Query: "select 9"},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Parse{Query: "insert"},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	c.expect("1", "t []", "n", "1", "2", "T ?column?:23:4:-1:0", "D 9", "C SELECT 1", "1", "2", "n", "C INSERT 0 1", "Z I")

	// An empty query.
	c.send(&pgproto3.Parse{Query: " "}, &pgproto3.Describe{ObjectType: 'S'}, &pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	c.expect("1", "t []", "n", "2", "n", "I", "Z I")

	// Flush sends what is buffered without ending the pipeline.
	c.send(&pgproto3.Parse{Name: "f", Query: "select 3"}, &pgproto3.Flush{})
	c.expect("1")
	c.send(&pgproto3.Bind{PreparedStatement: "f"}, &pgproto3.Execute{}, &pgproto3.Flush{})
	c.expect("2", "D 3", "C SELECT 1")
	c.send(&pgproto3.Sync{})
	c.expect("Z I")

	// Close; closing what does not exist is fine.
	c.send(&pgproto3.Close{ObjectType: 'S', Name: "f"}, &pgproto3.Close{ObjectType: 'S', Name: "nope"},
		&pgproto3.Close{ObjectType: 'P', Name: "nope"}, &pgproto3.Describe{ObjectType: 'S', Name: "f"}, &pgproto3.Sync{})
	c.expect("3", "3", "3", `E ERROR/ERROR 26000 prepared statement "f" does not exist`, "Z I")

	// Notices, parameter status and transaction status pass through.
	c.send(&pgproto3.Parse{Query: "notice x"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "set a b"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "begin"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	c.expect("1", "2", "N NOTICE/NOTICE 01000 hello x", "C DO", "1", "2", "S a=b", "C SET", "1", "2", "C BEGIN", "Z T")
	c.send(&pgproto3.Query{String: "commit"})
	c.expect("C COMMIT", "Z I")
}

func TestExtendedQueryErrors(t *testing.T) {
	ts, done := setup(t)
	defer done()
	c := rawStarted(t, ts)

	// An error is sent at once; everything up to Sync is discarded, simple
	// queries included.
	c.send(&pgproto3.Bind{PreparedStatement: "nope"}, &pgproto3.Flush{})
	c.expect(`E ERROR/ERROR 26000 prepared statement "nope" does not exist`)
	c.send(&pgproto3.Parse{Name: "x", Query: "select 1"}, &pgproto3.Query{String: "insert"}, &pgproto3.Execute{}, &pgproto3.Sync{})
	c.expect("Z I")
	c.send(&pgproto3.Describe{ObjectType: 'S', Name: "x"}, &pgproto3.Sync{})
	c.expect(`E ERROR/ERROR 26000 prepared statement "x" does not exist`, "Z I")

	for _, tc := range []struct {
		name string
		msgs []pgproto3.FrontendMessage
		want []string
	}{
		{"unnamed statement", []pgproto3.FrontendMessage{&pgproto3.Bind{}},
			[]string{"E ERROR/ERROR 26000 unnamed prepared statement does not exist"}},
		{"unknown portal", []pgproto3.FrontendMessage{&pgproto3.Execute{Portal: "p"}},
			[]string{`E ERROR/ERROR 34000 portal "p" does not exist`}},
		{"describe unknown portal", []pgproto3.FrontendMessage{&pgproto3.Describe{ObjectType: 'P'}},
			[]string{`E ERROR/ERROR 34000 portal "" does not exist`}},
		{"duplicate statement", []pgproto3.FrontendMessage{&pgproto3.Parse{Name: "d", Query: "select 1"}, &pgproto3.Parse{Name: "d", Query: "select 2"}},
			[]string{"1", `E ERROR/ERROR 42P05 prepared statement "d" already exists`}},
		{"duplicate portal", []pgproto3.FrontendMessage{&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "d"}, &pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "d"}},
			[]string{"2", `E ERROR/ERROR 42P03 cursor "p" already exists`}},
		{"too few parameters", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1 $2"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("1")}}},
			[]string{"1", `E ERROR/ERROR 08P01 bind message supplies 1 parameters, but prepared statement "" requires 2`}},
		{"too many parameters", []pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "d", Parameters: [][]byte{[]byte("1")}}},
			[]string{`E ERROR/ERROR 08P01 bind message supplies 1 parameters, but prepared statement "d" requires 0`}},
		{"parameter formats", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1 $2 $3"},
			&pgproto3.Bind{ParameterFormatCodes: []int16{0, 0}, Parameters: [][]byte{nil, nil, nil}}},
			[]string{"1", "E ERROR/ERROR 08P01 bind message has 2 parameter formats but 3 parameters"}},
		{"result formats", []pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "d", ResultFormatCodes: []int16{0, 1}}},
			[]string{"E ERROR/ERROR 08P01 bind message has 2 result formats but query has 1 columns"}},
		{"result format code", []pgproto3.FrontendMessage{&pgproto3.Bind{PreparedStatement: "d", ResultFormatCodes: []int16{2}}},
			[]string{"E ERROR/ERROR 22023 unsupported format code: 2"}},
		{"parameter format code", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1"},
			&pgproto3.Bind{ParameterFormatCodes: []int16{3}, Parameters: [][]byte{[]byte("x")}}},
			[]string{"1", "E ERROR/ERROR 22023 unsupported format code: 3"}},
		{"bad integer text", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1:int4"}, &pgproto3.Bind{Parameters: [][]byte{[]byte("12x")}}},
			[]string{"1", `E ERROR/ERROR 22P02 invalid input syntax for type integer: "12x"`}},
		{"bad binary integer", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1:int4"},
			&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 0, 1}}}},
			[]string{"1", "E ERROR/ERROR 22P03 incorrect binary data format in bind parameter 1"}},
		{"invalid UTF-8 parameter", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1"}, &pgproto3.Bind{Parameters: [][]byte{{0xff}}}},
			[]string{"1", `E ERROR/ERROR 22021 invalid byte sequence for encoding "UTF8"`}},
		{"unsupported parameter type", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "echo $1", ParameterOIDs: []uint32{600}}},
			[]string{"E ERROR/ERROR 0A000 parameter $1 has type OID 600, which is not supported"}},
		{"two statements", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "insert; insert"}},
			[]string{"E ERROR/ERROR 42601 cannot insert multiple commands into a prepared statement"}},
		{"prepare error", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "prepareerror"}},
			[]string{`E ERROR/ERROR 42P01 relation "x" does not exist [||3]`}},
		{"bind error", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "binderror"}, &pgproto3.Bind{}},
			[]string{"1", "E ERROR/ERROR 0A000 fake bind error"}},
		{"execute error", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "error"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Execute{}},
			[]string{"1", "2", `E ERROR/ERROR 42601 syntax error at or near "foo" [some detail|some hint|8]`}},
		{"columns differ from the description", []pgproto3.FrontendMessage{&pgproto3.Parse{Query: "badcols"}, &pgproto3.Bind{}, &pgproto3.Execute{}},
			[]string{"1", "2", "E ERROR/ERROR XX000 pgwire: BeginRows(n bigint) differs from the statement's description (?column? integer)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			c.send(append(tc.msgs, &pgproto3.Sync{})...)
			c.expect(append(tc.want, "Z I")...)
			// The connection goes on.
			c.send(&pgproto3.Query{String: "select 1"})
			c.expect("T ?column?:23:4:-1:0", "D 1", "C SELECT 1", "Z I")
		})
	}
	c.t = t

	// A failed portal cannot be run again; a finished one returns no more
	// rows.
	c.send(&pgproto3.Query{String: "begin"})
	c.expect("C BEGIN", "Z T")
	c.send(&pgproto3.Parse{Query: "plainerror"}, &pgproto3.Bind{DestinationPortal: "f"}, &pgproto3.Execute{Portal: "f"}, &pgproto3.Sync{})
	c.expect("1", "2", "E ERROR/ERROR XX000 boom", "Z T")
	c.send(&pgproto3.Execute{Portal: "f"}, &pgproto3.Sync{})
	c.expect(`E ERROR/ERROR 55000 portal "f" cannot be run`, "Z T")
	c.send(&pgproto3.Parse{Query: "insert"}, &pgproto3.Bind{DestinationPortal: "i"}, &pgproto3.Execute{Portal: "i"}, &pgproto3.Execute{Portal: "i"}, &pgproto3.Sync{})
	c.expect("1", "2", "C INSERT 0 1", `E ERROR/ERROR 55000 portal "i" cannot be run`, "Z T")
	c.send(&pgproto3.Query{String: "commit"})
	c.expect("C COMMIT", "Z I")
}

// TestPortalRowLimit checks Execute with a row limit: the statement runs once
// and its rows are fetched in parts.
func TestPortalRowLimit(t *testing.T) {
	ts, done := setup(t)
	defer done()
	c := rawStarted(t, ts)
	rows := func(from, to int) []string {
		var out []string
		for i := from; i < to; i++ {
			if i%7 == 3 {
				out = append(out, "D NULL")
			} else {
				out = append(out, fmt.Sprintf("D %d", i))
			}
		}
		return out
	}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}

	c.send(&pgproto3.Parse{Name: "r", Query: "rows 2500"},
		&pgproto3.Bind{PreparedStatement: "r"},
		&pgproto3.Execute{MaxRows: 3}, &pgproto3.Execute{MaxRows: 1200}, &pgproto3.Execute{},
		&pgproto3.Execute{}, &pgproto3.Execute{MaxRows: 5}, &pgproto3.Sync{})
	c.expect(cat([]string{"1", "2"}, rows(0, 3), []string{"s"}, rows(3, 1203), []string{"s"}, rows(1203, 2500),
		[]string{"C SELECT 1297", "C SELECT 0", "C SELECT 0", "Z I"})...)
	if n := ts.e.portalRuns.Load(); n != 1 {
		t.Errorf("portal ran %d times", n)
	}

	// Exactly the rows left: PortalSuspended, then an empty fetch, as in
	// PostgreSQL. A result fetched with a limit larger than it completes.
	c.send(&pgproto3.Bind{PreparedStatement: "r", DestinationPortal: "a"}, &pgproto3.Bind{DestinationPortal: "b", PreparedStatement: "r"},
		&pgproto3.Execute{Portal: "a", MaxRows: 2500}, &pgproto3.Execute{Portal: "b", MaxRows: 10_000},
		&pgproto3.Execute{Portal: "a", MaxRows: 1}, &pgproto3.Sync{})
	c.expect(cat([]string{"2", "2"}, rows(0, 2500), []string{"s"}, rows(0, 2500), []string{"C SELECT 2500", "C SELECT 0", "Z I"})...)

	// Outside a transaction block Sync ends every portal; inside one they
	// live until it ends.
	c.send(&pgproto3.Bind{PreparedStatement: "r", DestinationPortal: "p"}, &pgproto3.Sync{}, &pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	c.expect("2", "Z I", `E ERROR/ERROR 34000 portal "p" does not exist`, "Z I")
	c.send(&pgproto3.Query{String: "begin"})
	c.expect("C BEGIN", "Z T")
	c.send(&pgproto3.Bind{PreparedStatement: "r", DestinationPortal: "p"}, &pgproto3.Execute{Portal: "p", MaxRows: 2}, &pgproto3.Sync{})
	c.expect(cat([]string{"2"}, rows(0, 2), []string{"s", "Z T"})...)
	c.send(&pgproto3.Execute{Portal: "p", MaxRows: 2}, &pgproto3.Sync{})
	c.expect(cat(rows(2, 4), []string{"s", "Z T"})...)
	// The portal still holds its rows when the connection ends: they are
	// released (setup's leak check).
	c.send(&pgproto3.Bind{PreparedStatement: "r", DestinationPortal: "q"}, &pgproto3.Execute{Portal: "q", MaxRows: 1}, &pgproto3.Sync{})
	c.expect(cat([]string{"2"}, rows(0, 1), []string{"s", "Z T"})...)
	c.send(&pgproto3.Query{String: "commit"})
	c.expect("C COMMIT", "Z I")
	c.send(&pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	c.expect(`E ERROR/ERROR 34000 portal "p" does not exist`, "Z I")

	// A simple query drops the unnamed statement and portal.
	c.send(&pgproto3.Parse{Query: "select 1"}, &pgproto3.Bind{}, &pgproto3.Sync{}, &pgproto3.Query{String: "insert"},
		&pgproto3.Bind{}, &pgproto3.Sync{})
	c.expect("1", "2", "Z I", "C INSERT 0 1", "Z I", "E ERROR/ERROR 26000 unnamed prepared statement does not exist", "Z I")

	c.send(&pgproto3.Query{String: "begin"})
	c.expect("C BEGIN", "Z T")
	c.send(&pgproto3.Bind{PreparedStatement: "r", DestinationPortal: "z"}, &pgproto3.Execute{Portal: "z", MaxRows: 1}, &pgproto3.Sync{})
	c.expect(cat([]string{"2"}, rows(0, 1), []string{"s", "Z T"})...)
	c.send(&pgproto3.Terminate{})
	c.expectEOF()
}

// TestBinaryFormats checks binary results and parameters of every type: the
// binary values mean what the text ones do.
func TestBinaryFormats(t *testing.T) {
	ts, done := setup(t)
	defer done()
	c := rawStarted(t, ts)

	// The "types" row in text, then in binary, then mixed.
	c.send(&pgproto3.Parse{Name: "t", Query: "types"}, &pgproto3.Bind{PreparedStatement: "t"}, &pgproto3.Execute{}, &pgproto3.Sync{})
	receive[*pgproto3.ParseComplete](c)
	receive[*pgproto3.BindComplete](c)
	text := receive[*pgproto3.DataRow](c).Values
	var texts []string
	for _, v := range text {
		texts = append(texts, string(v))
	}
	c.expect("D NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL", "C SELECT 2", "Z I")

	mixed := make([]int16, len(typesColumns))
	for i := range mixed {
		mixed[i] = int16(i % 2)
	}
	for _, formats := range [][]int16{{1}, mixed} {
		c.send(&pgproto3.Bind{PreparedStatement: "t", ResultFormatCodes: formats}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
		receive[*pgproto3.BindComplete](c)
		desc := receive[*pgproto3.RowDescription](c)
		row := receive[*pgproto3.DataRow](c)
		for i, col := range typesColumns {
			f := formats[0]
			if len(formats) > 1 {
				f = formats[i]
			}
			if desc.Fields[i].Format != f {
				t.Errorf("column %s described with format %d, want %d", col.Name, desc.Fields[i].Format, f)
			}
			got := string(row.Values[i])
			if f == 1 && col.Type.Kind != types.Unknown {
				d, err := types.DecodeBinary(col.Type, row.Values[i])
				if err != nil {
					t.Fatalf("column %s: %v", col.Name, err)
				}
				got = d.Text(col.Type)
			}
			if got != texts[i] {
				t.Errorf("column %s in format %d reads %q, text %q", col.Name, f, got, texts[i])
			}
		}
		c.expect("D NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL", "C SELECT 2", "Z I")
	}

	// Binary parameters of every type come back as their text.
	m := pgtype.NewMap()
	var query []string
	var oids []uint32
	var params [][]byte
	var want []string
	for i, tc := range []struct {
		t    types.T
		v    any
		text string
	}{
		{types.BoolT, true, "t"},
		{types.Int16T, int16(-3), "-3"},
		{types.Int32T, int32(math.MinInt32), "-2147483648"},
		{types.Int64T, int64(math.MaxInt64), "9223372036854775807"},
		{types.Float32T, float32(1.5), "1.5"},
		{types.Float64T, 0.1, "0.1"},
		{types.NumericT, "-12.3400", "-12.3400"},
		{types.TextT, "héllo", "héllo"},
		{types.DateT, time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), "1999-12-31"},
		{types.TimestampT, time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC), "2024-02-29 13:14:15.123456"},
		{types.TimestampTZT, time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC), "1969-07-20 20:17:00+00"},
		{types.IntervalT, pgtype.Interval{Months: 14, Days: -3, Microseconds: 3_600_000_001, Valid: true}, "1 year 2 mons -3 days +01:00:00.000001"},
	} {
		v := tc.v
		if s, ok := v.(string); ok && tc.t.Kind == types.Numeric {
			var n pgtype.Numeric
			if err := n.Scan(s); err != nil {
				t.Fatal(err)
			}
			v = n
		}
		b, err := m.Encode(tc.t.OID(), pgtype.BinaryFormatCode, v, nil)
		if err != nil {
			t.Fatalf("%v: %v", tc.t, err)
		}
		query = append(query, fmt.Sprintf("$%d", i+1))
		oids = append(oids, tc.t.OID())
		params = append(params, b)
		want = append(want, tc.text)
	}
	c.send(&pgproto3.Parse{Query: "echo " + strings.Join(query, " "), ParameterOIDs: oids},
		&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: params}, &pgproto3.Execute{}, &pgproto3.Sync{})
	c.expect("1", "2", "D "+strings.Join(want, "|"), "C SELECT 1", "Z I")
}

// TestMalformedExtendedMessages checks that a malformed extended-protocol
// message gets an 08P01 error and the connection resyncs at Sync.
func TestMalformedExtendedMessages(t *testing.T) {
	ts, done := setup(t)
	defer done()
	for _, tc := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"parse without query", []byte{'P', 0, 0, 0, 6, 's', 0}, "E ERROR/ERROR 08P01 invalid Parse message format"},
		{"parse with short oids", []byte{'P', 0, 0, 0, 11, 0, 'q', 0, 0, 1, 0, 0}, "E ERROR/ERROR 08P01 invalid Parse message format"},
		{"bind with trailing bytes", []byte{'B', 0, 0, 0, 13, 0, 0, 0, 0, 0, 0, 0, 0, 9}, "E ERROR/ERROR 08P01 invalid Bind message format"},
		{"bind with bad length", []byte{'B', 0, 0, 0, 16, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 0, 0}, "E ERROR/ERROR 08P01 invalid Bind message format"},
		{"describe subtype", []byte{'D', 0, 0, 0, 6, 'X', 0}, "E ERROR/ERROR 08P01 invalid DESCRIBE message subtype 88"},
		{"close subtype", []byte{'C', 0, 0, 0, 6, 'X', 0}, "E ERROR/ERROR 08P01 invalid CLOSE message subtype 88"},
		{"execute without row count", []byte{'E', 0, 0, 0, 5, 0}, "E ERROR/ERROR 08P01 invalid Execute message format"},
		{"flush with a body", []byte{'H', 0, 0, 0, 5, 0}, "E ERROR/ERROR 08P01 invalid Flush message format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := rawStarted(t, ts)
			c.writeRaw(tc.raw)
			c.writeRaw([]byte{'E', 0, 0, 0, 9, 0, 0, 0, 0, 0}) // skipped
			c.writeRaw([]byte{'S', 0, 0, 0, 4})
			c.expect(tc.want, "Z I")
			c.writeRaw([]byte{'S', 0, 0, 0, 4})
			c.expect("Z I")
		})
	}
}

// TestExtendedCancel checks that a CancelRequest cancels a running Execute.
func TestExtendedCancel(t *testing.T) {
	ts, done := setup(t)
	defer done()
	conn := connectPgx(t, ts, "")
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		rr := conn.PgConn().ExecParams(ctx, "block", nil, nil, nil, nil).Read()
		errc <- rr.Err
	}()
	<-ts.e.blocked
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	<-ts.e.unblocked
	var pe *pgconn.PgError
	if err := <-errc; !errors.As(err, &pe) || pe.Code != sqlerr.QueryCanceled {
		t.Fatalf("canceled Execute: %v", err)
	}
	var v int64
	if err := conn.QueryRow(ctx, "echo $1:int8", pgx.QueryExecModeCacheStatement, 5).Scan(&v); err != nil || v != 5 {
		t.Fatalf("after cancel: %v %v", v, err)
	}
}

// TestPgxModes runs pgx in every query mode against the fake engine.
func TestPgxModes(t *testing.T) {
	ts, done := setup(t)
	defer done()
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://u@%s/dev?sslmode=disable", ts.addr))
			if err != nil {
				t.Fatal(err)
			}
			cfg.DefaultQueryExecMode = mode
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)

			// Every type, in whatever format pgx picks.
			var (
				b              bool
				i2             int16
				i4             int32
				i8             int64
				f4             float32
				f8             float64
				n, n102        pgtype.Numeric
				s, vc          string
				d, ts, tstz    time.Time
				iv             pgtype.Interval
				u              *string
				nb             *bool
				ni2, ni4, ni8  *int64
				nf4, nf8       *float64
				nn, nn102      pgtype.Numeric
				ns, nvc        *string
				nd, nts, ntstz *time.Time
				niv            pgtype.Interval
				nu             *string
			)
			rows, err := conn.Query(ctx, "types", mode)
			if err != nil {
				t.Fatal(err)
			}
			if !rows.Next() {
				t.Fatalf("no row: %v", rows.Err())
			}
			if err := rows.Scan(&b, &i2, &i4, &i8, &f4, &f8, &n, &n102, &s, &vc, &d, &ts, &tstz, &iv, &u); err != nil {
				t.Fatal(err)
			}
			if !rows.Next() {
				t.Fatalf("no second row: %v", rows.Err())
			}
			if err := rows.Scan(&nb, &ni2, &ni4, &ni8, &nf4, &nf8, &nn, &nn102, &ns, &nvc, &nd, &nts, &ntstz, &niv, &nu); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			nv, _ := n.Value()
			n102v, _ := n102.Value()
			got := fmt.Sprintln(b, i2, i4, i8, f4, f8, nv, n102v, s, "["+vc+"]", d.Format("2006-01-02"), ts.Format(time.RFC3339Nano),
				tstz.UTC().Format(time.RFC3339), iv.Months, iv.Days, iv.Microseconds, u)
			got = strings.TrimSuffix(got, "\n")
			want := "true -2 2147483647 -9223372036854775808 1.5 0.1 -1.5 0.05 héllo [] 1969-12-31 1969-12-31T23:59:59.999999Z " +
				"2023-11-14T22:13:20Z -26 -3 -1500000 <nil>"
			if got != want {
				t.Errorf("row:\n got %s\nwant %s", got, want)
			}
			if nb != nil || ni2 != nil || ni4 != nil || ni8 != nil || nf4 != nil || nf8 != nil || nn.Valid || nn102.Valid ||
				ns != nil || nvc != nil || nd != nil || nts != nil || ntstz != nil || niv.Valid || nu != nil {
				t.Error("NULL row scanned non-NULL values")
			}

			// A statement without rows.
			if tag, err := conn.Exec(ctx, "insert", mode); err != nil || tag.String() != "INSERT 0 1" {
				t.Errorf("insert: %v %v", tag, err)
			}
			if mode == pgx.QueryExecModeSimpleProtocol {
				return // the fake's simple queries have no echo
			}
			// Parameters.
			var e8 int64
			var et string
			var ed time.Time
			if err := conn.QueryRow(ctx, "echo $1:int8 $2 $3:date", 77, "x y", time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC)).Scan(&e8, &et, &ed); err != nil {
				t.Fatal(err)
			}
			if e8 != 77 || et != "x y" || !ed.Equal(time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("echo: %v %q %v", e8, et, ed)
			}
			// A parameter that is not an integer: pgx refuses to encode
			// it, or (in exec mode, which sends text) the server does.
			var pe *pgconn.PgError
			_, err = conn.Exec(ctx, "echo $1:int4", "nope")
			if mode == pgx.QueryExecModeExec && (!errors.As(err, &pe) || pe.Code != sqlerr.InvalidTextRepresentation) || err == nil {
				t.Errorf("bad integer parameter: %v", err)
			}
			if err := conn.QueryRow(ctx, "echo $1:int8", 5).Scan(&e8); err != nil || e8 != 5 {
				t.Errorf("after the error: %v %v", e8, err)
			}
		})
	}
}
