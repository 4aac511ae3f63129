package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// setup starts a server over a fake engine with a checked allocator. The
// returned function closes the server and checks for leaks; defer it.
func setup(t *testing.T, opts ...Options) (*testServer, func()) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	ts := startServer(t, newFakeEngine(mem), opts...)
	return ts, func() {
		ts.close(t)
		mem.AssertSize(t, 0)
		// Every session was closed exactly once.
		ts.e.mu.Lock()
		defer ts.e.mu.Unlock()
		for i, s := range ts.e.sessions {
			if n := s.closes.Load(); n != 1 {
				t.Errorf("session %d closed %d times", i, n)
			}
		}
		if n, m := ts.e.openStmts.Load(), ts.e.openPortals.Load(); n != 0 || m != 0 {
			t.Errorf("%d prepared statements and %d portals not closed", n, m)
		}
	}
}

func connectPgx(t *testing.T, ts *testServer, extra string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://alice@%s/dev?sslmode=disable%s", ts.addr, extra))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestStartupParameters(t *testing.T) {
	ts, done := setup(t, Options{ServerVersion: "15.0-test"})
	defer done()
	c := dialRaw(t, ts.addr)
	status, key := c.startup(map[string]string{"user": "alice", "database": "dev", "application_name": "myapp", "options": "-c x=y"})
	want := map[string]string{
		"server_version":                "15.0-test",
		"server_encoding":               "UTF8",
		"client_encoding":               "UTF8",
		"DateStyle":                     "ISO, MDY",
		"IntervalStyle":                 "postgres",
		"TimeZone":                      "UTC",
		"integer_datetimes":             "on",
		"standard_conforming_strings":   "on",
		"application_name":              "myapp",
		"is_superuser":                  "on",
		"session_authorization":         "alice",
		"default_transaction_read_only": "off",
		"in_hot_standby":                "off",
	}
	if fmt.Sprint(status) != fmt.Sprint(want) {
		t.Errorf("parameter status:\n got %v\nwant %v", status, want)
	}
	if len(key.SecretKey) != 4 || key.ProcessID == 0 {
		t.Errorf("backend key data %+v", key)
	}
	p := ts.e.lastParams()
	if p["user"] != "alice" || p["database"] != "dev" || p["application_name"] != "myapp" || p["options"] != "-c x=y" {
		t.Errorf("engine got params %v", p)
	}

	// A second connection gets another process id; the database defaults to
	// the user name.
	c2 := dialRaw(t, ts.addr)
	status2, key2 := c2.startup(map[string]string{"user": "bob"})
	if key2.ProcessID == key.ProcessID {
		t.Errorf("two connections share process id %d", key.ProcessID)
	}
	if status2["application_name"] != "" || status2["session_authorization"] != "bob" {
		t.Errorf("parameter status %v", status2)
	}
	if p := ts.e.lastParams(); p["database"] != "bob" {
		t.Errorf("engine got params %v", p)
	}
	c.send(&pgproto3.Terminate{})
	c.expectEOF()
}

func TestStartupErrors(t *testing.T) {
	ts, done := setup(t)
	defer done()
	for _, tc := range []struct {
		name string
		pkt  []byte // sent after a 4-byte length
		want string
	}{
		{"no user", startupPacket(3<<16, "database", "dev"), "E FATAL/FATAL 28000 no PostgreSQL user name specified in startup packet"},
		{"protocol 2", startupPacket(2<<16, "user", "u"), "E FATAL/FATAL 0A000 unsupported frontend protocol 2.0: server supports 3.0"},
		{"protocol 4.1", startupPacket(4<<16|1, "user", "u"), "E FATAL/FATAL 0A000 unsupported frontend protocol 4.1: server supports 3.0"},
		{"no terminator", startupPacket(3<<16, "user", "u")[:10], "E FATAL/FATAL 08P01 invalid startup packet layout: expected terminator as last byte"},
		{"too short", []byte{0, 3}, "E FATAL/FATAL 08P01 invalid length of startup packet"},
		{"replication", startupPacket(3<<16, "user", "u", "replication", "database"), "E FATAL/FATAL 0A000 replication connections are not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, ts.addr)
			c.writeRaw(withLength(tc.pkt))
			c.expect(tc.want)
			c.expectEOF()
		})
	}
	t.Run("too long", func(t *testing.T) {
		c := dialRaw(t, ts.addr)
		c.writeRaw([]byte{0, 1, 0, 0})
		c.expect("E FATAL/FATAL 08P01 invalid length of startup packet")
		c.expectEOF()
	})
}

// startupPacket returns the body of a startup packet for a protocol version.
func startupPacket(version uint32, kv ...string) []byte {
	b := binary.BigEndian.AppendUint32(nil, version)
	for _, s := range kv {
		b = append(append(b, s...), 0)
	}
	return append(b, 0)
}

// withLength prefixes b with its length, as startup packets are framed.
func withLength(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b)+4)), b...)
}

func (c *rawClient) writeRaw(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) readByte() byte {
	c.t.Helper()
	var b [1]byte
	if _, err := io.ReadFull(c.nc, b[:]); err != nil {
		c.t.Fatal(err)
	}
	return b[0]
}

func TestEncryptionRequestsDeclined(t *testing.T) {
	ts, done := setup(t)
	defer done()
	c := dialRaw(t, ts.addr)
	c.writeRaw(withLength(binary.BigEndian.AppendUint32(nil, sslRequestCode)))
	if b := c.readByte(); b != 'N' {
		t.Fatalf("SSLRequest answered %q", b)
	}
	c.writeRaw(withLength(binary.BigEndian.AppendUint32(nil, gssEncRequestCode)))
	if b := c.readByte(); b != 'N' {
		t.Fatalf("GSSEncRequest answered %q", b)
	}
	c.startup(map[string]string{"user": "u"})
	c.send(&pgproto3.Query{String: "select 1"})
	c.expect("T ?column?:23:4:-1:0", "D 1", "C SELECT 1", "Z I")

	// pgx's sslmode=prefer asks for SSL first and goes on without it.
	conn := connectPgx(t, ts, "&sslmode=prefer")
	var v int32
	if err := conn.QueryRow(context.Background(), "select 7").Scan(&v); err != nil || v != 7 {
		t.Fatalf("select 7: %v, %v", v, err)
	}
}

func TestProtocolNegotiation(t *testing.T) {
	ts, done := setup(t)
	defer done()
	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32,
		Parameters: map[string]string{"user": "u", "_pq_.something": "x"}})
	c.expect("v 3.0 [_pq_.something]", "R ok")
	if _, ok := ts.e.lastParams()["_pq_.something"]; ok {
		t.Error("protocol option reached the engine")
	}
}

func TestSimpleQueryResults(t *testing.T) {
	ts, done := setup(t)
	defer done()
	c := dialRaw(t, ts.addr)
	c.startup(map[string]string{"user": "u"})

	// Several statements in one message, each reported in order.
	c.send(&pgproto3.Query{String: "insert; select 42; notice a b; set application_name x; begin"})
	c.expect(
		"C INSERT 0 1",
		"T ?column?:23:4:-1:0", "D 42", "C SELECT 1",
		"N NOTICE/NOTICE 01000 hello a b", "C DO",
		"S application_name=x", "C SET",
		"C BEGIN",
		"Z T",
	)
	c.send(&pgproto3.Query{String: "commit"})
	c.expect("C COMMIT", "Z I")

	// An error stops the message; the connection goes on.
	c.send(&pgproto3.Query{String: "insert; error; insert"})
	c.expect("C INSERT 0 1", `E ERROR/ERROR 42601 syntax error at or near "foo" [some detail|some hint|8]`, "Z I")
	c.send(&pgproto3.Query{String: "plainerror"})
	c.expect("E ERROR/ERROR XX000 boom", "Z I")

	// Empty queries.
	c.send(&pgproto3.Query{String: ""})
	c.expect("I", "Z I")
	c.send(&pgproto3.Query{String: " ; ;\n"})
	c.expect("I", "Z I")
	// A session that reports nothing still answers the client.
	c.send(&pgproto3.Query{String: "nothing"})
	c.expect("I", "Z I")

	// Misuse of the ResultWriter is an internal error, not a broken stream.
	c.send(&pgproto3.Query{String: "misuse"})
	c.expect("E ERROR/ERROR XX000 pgwire: WriteRows without BeginRows", "Z I")
	c.send(&pgproto3.Query{String: "mismatch"})
	c.expect("T x:23:4:-1:0", `E ERROR/ERROR XX000 pgwire: column "x" of type integer holds Arrow int64, not int32`, "Z I")

	// Invalid UTF-8 is refused before it reaches the session.
	c.send(&pgproto3.Query{String: "select \xff"})
	c.expect(`E ERROR/ERROR 22021 invalid byte sequence for encoding "UTF8"`, "Z I")

	// Sync alone gets ReadyForQuery; copy messages are ignored.
	c.send(&pgproto3.Sync{}, &pgproto3.CopyDone{}, &pgproto3.Query{String: "select 1"})
	c.expect("Z I", "T ?column?:23:4:-1:0", "D 1", "C SELECT 1", "Z I")
}

func TestRowDescriptionAndDataRows(t *testing.T) {
	ts, done := setup(t)
	defer done()
	c := dialRaw(t, ts.addr)
	c.startup(map[string]string{"user": "u"})
	c.send(&pgproto3.Query{String: "types"})

	var fields []string
	for _, col := range typesColumns {
		fields = append(fields, fmt.Sprintf("%s:%d:%d:%d:0", col.Name, col.Type.OID(), col.Type.Size(), col.Type.Typmod()))
	}
	c.expect(
		"T "+strings.Join(fields, " "),
		"D t|-2|2147483647|-9223372036854775808|1.5|0.1|-1.5|0.05|héllo||1969-12-31|1969-12-31 23:59:59.999999|2023-11-14 22:13:20+00|-2 years -2 mons -3 days -00:00:01.5|NULL",
		"D NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
		"C SELECT 2",
		"Z I",
	)
	// Spot checks of the types' wire identity, independent of types.T.
	for _, f := range []string{"i8:20:8:-1:0", "n:1700:-1:-1:0", "n102:1700:-1:655366:0", "vc5:1043:-1:9:0", "tstz:1184:8:-1:0", "iv:1186:16:-1:0"} {
		if !strings.Contains(strings.Join(fields, " "), f) {
			t.Errorf("row description lacks %s", f)
		}
	}
}

func TestPgxQueries(t *testing.T) {
	ts, done := setup(t)
	defer done()
	conn := connectPgx(t, ts, "&application_name=pgxtest")
	ctx := context.Background()
	if got := conn.PgConn().ParameterStatus("application_name"); got != "pgxtest" {
		t.Errorf("application_name %q", got)
	}

	// A result much larger than the output buffer streams through.
	const n = 100_000
	rows, err := conn.Query(ctx, "rows 100000")
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rows.Next() {
		var v *int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		switch {
		case i%7 == 3 && v != nil:
			t.Fatalf("row %d: got %d, want NULL", i, *v)
		case i%7 != 3 && (v == nil || *v != int64(i)):
			t.Fatalf("row %d: got %v", i, v)
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if i != n || rows.CommandTag().String() != "SELECT 100000" {
		t.Fatalf("%d rows, tag %q", i, rows.CommandTag())
	}

	// Errors carry their fields.
	_, err = conn.Exec(ctx, "error")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a PgError", err)
	}
	if pe.Severity != "ERROR" || pe.Code != sqlerr.SyntaxError || pe.Position != 8 || pe.Detail != "some detail" || pe.Hint != "some hint" {
		t.Errorf("error fields %+v", pe)
	}
	tag, err := conn.Exec(ctx, "insert")
	if err != nil || tag.String() != "INSERT 0 1" {
		t.Fatalf("insert: %v %v", tag, err)
	}
	if _, err := conn.Exec(ctx, "set TimeZone Europe/Paris"); err != nil {
		t.Fatal(err)
	}
	if got := conn.PgConn().ParameterStatus("TimeZone"); got != "Europe/Paris" {
		t.Errorf("TimeZone %q after ParameterStatus", got)
	}
}

func TestFunctionCallRejected(t *testing.T) {
	ts, done := setup(t)
	defer done()
	c := dialRaw(t, ts.addr)
	c.startup(map[string]string{"user": "u"})
	c.send(&pgproto3.FunctionCall{Function: 1})
	c.expect("E ERROR/ERROR 0A000 function call protocol is not supported", "Z I")
	c.send(&pgproto3.Query{String: "select 5"})
	c.expect("T ?column?:23:4:-1:0", "D 5", "C SELECT 1", "Z I")
}

func TestMalformedMessagesCloseOnlyTheirConnection(t *testing.T) {
	ts, done := setup(t)
	defer done()
	other := connectPgx(t, ts, "")
	for _, tc := range []struct {
		name string
		raw  []byte
		want string
	}{
		{"unknown type", []byte{'Z', 0, 0, 0, 4}, "E FATAL/FATAL 08P01 invalid frontend message type 90"},
		{"short length", []byte{'Q', 0, 0, 0, 3}, "E FATAL/FATAL 08P01 invalid message length"},
		{"negative length", []byte{'Q', 0xff, 0xff, 0xff, 0xff}, "E FATAL/FATAL 08P01 invalid message length"},
		{"huge small message", []byte{'S', 0, 1, 0, 0}, "E FATAL/FATAL 08P01 invalid message length"},
		{"query without terminator", []byte{'Q', 0, 0, 0, 6, 'a', 'b'}, "E FATAL/FATAL 08P01 invalid Query message format"},
		{"query with inner NUL", []byte{'Q', 0, 0, 0, 7, 'a', 0, 0}, "E FATAL/FATAL 08P01 invalid Query message format"},
		{"password after startup", []byte{'p', 0, 0, 0, 5, 0}, "E FATAL/FATAL 08P01 invalid frontend message type 112"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, ts.addr)
			c.startup(map[string]string{"user": "u"})
			c.writeRaw(tc.raw)
			c.expect(tc.want)
			c.expectEOF()
		})
	}
	// A query truncated by the client going away ends quietly.
	c := dialRaw(t, ts.addr)
	c.startup(map[string]string{"user": "u"})
	c.writeRaw([]byte{'Q', 0, 0, 0, 100, 's'})
	c.nc.Close()

	var v int32
	if err := other.QueryRow(context.Background(), "select 3").Scan(&v); err != nil || v != 3 {
		t.Fatalf("other connection: %v %v", v, err)
	}
}

func TestCancelRequest(t *testing.T) {
	ts, done := setup(t)
	defer done()
	conn := connectPgx(t, ts, "")
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "block")
		errc <- err
	}()
	qctx := <-ts.e.blocked

	// A cancel request with the wrong key is ignored. The server handles it
	// before it closes the cancel connection.
	pid := conn.PgConn().PID()
	bad := dialRaw(t, ts.addr)
	pkt := binary.BigEndian.AppendUint32(nil, cancelRequestCode)
	pkt = binary.BigEndian.AppendUint32(pkt, pid)
	pkt = append(pkt, conn.PgConn().SecretKey()...)
	pkt[len(pkt)-1] ^= 1
	bad.writeRaw(withLength(pkt))
	bad.expectEOF()
	if qctx.Err() != nil {
		t.Fatal("a cancel request with a wrong key canceled the query")
	}

	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	if cause := <-ts.e.unblocked; cause != errQueryCanceled {
		t.Errorf("query context cause %v", cause)
	}
	var pe *pgconn.PgError
	if err := <-errc; !errors.As(err, &pe) || pe.Code != sqlerr.QueryCanceled || pe.Message != "canceling statement due to user request" {
		t.Fatalf("canceled query returned %v", err)
	}
	// The session goes on.
	var v int32
	if err := conn.QueryRow(ctx, "select 4").Scan(&v); err != nil || v != 4 {
		t.Fatalf("after cancel: %v %v", v, err)
	}
}

// TestCancelRequestBeforeQueryRuns: a CancelRequest that comes after the
// server read a query but before the query runs cancels it; one that comes
// between queries is ignored.
func TestCancelRequestBeforeQueryRuns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := newFakeEngine(mem)
	srv := NewServer(e, Options{})
	// The hook sends the cancel, once armed, in the window; CancelRequest
	// returns once the server has handled it.
	var armed atomic.Pointer[pgconn.PgConn]
	srv.testHookQueryRead = func() {
		if pc := armed.Swap(nil); pc != nil {
			if err := pc.CancelRequest(context.Background()); err != nil {
				t.Error(err)
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: srv, addr: ln.Addr().String(), e: e, done: make(chan error, 1)}
	go func() { ts.done <- ts.Serve(ln) }()
	defer ts.close(t)
	conn := connectPgx(t, ts, "")
	ctx := context.Background()

	armed.Store(conn.PgConn())
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "wait")
		errc <- err
	}()
	if qctx := <-e.blocked; qctx.Err() == nil {
		e.release <- struct{}{}
		t.Fatalf("a cancel that came before the query ran was lost: %v", <-errc)
	}
	if cause := <-e.unblocked; cause != errQueryCanceled {
		t.Errorf("query context cause %v", cause)
	}
	var pe *pgconn.PgError
	if err := <-errc; !errors.As(err, &pe) || pe.Code != sqlerr.QueryCanceled {
		t.Fatalf("canceled query returned %v", err)
	}

	// Between queries: ignored, the next query runs.
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	var v int32
	if err := conn.QueryRow(ctx, "select 4").Scan(&v); err != nil || v != 4 {
		t.Fatalf("after an idle cancel: %v %v", v, err)
	}
	conn.Close(ctx)
}

func TestClientDisconnectMidQuery(t *testing.T) {
	ts, done := setup(t)
	defer done()
	other := connectPgx(t, ts, "")
	c := dialRaw(t, ts.addr)
	c.startup(map[string]string{"user": "u"})
	c.send(&pgproto3.Query{String: "block"})
	<-ts.e.blocked
	c.nc.Close()
	if cause := <-ts.e.unblocked; cause != errClientGone {
		t.Errorf("query context cause %v", cause)
	}
	s := <-ts.e.closed
	if s.closes.Load() != 1 {
		t.Errorf("session closed %d times", s.closes.Load())
	}
	var v int32
	if err := other.QueryRow(context.Background(), "select 2").Scan(&v); err != nil || v != 2 {
		t.Fatalf("other connection: %v %v", v, err)
	}
}

func TestServerCloseSendsAdminShutdown(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	// A short grace: the blocked query is cancelled.
	ts := startServer(t, newFakeEngine(mem), Options{ShutdownGrace: 20 * time.Millisecond})

	idle := dialRaw(t, ts.addr)
	idle.startup(map[string]string{"user": "u"})
	busy := dialRaw(t, ts.addr)
	busy.startup(map[string]string{"user": "u"})
	busy.send(&pgproto3.Query{String: "block"})
	<-ts.e.blocked
	// A connection in startup: the SSLRequest's answer shows it is served.
	starting := dialRaw(t, ts.addr)
	starting.writeRaw(withLength(binary.BigEndian.AppendUint32(nil, sslRequestCode)))
	if b := starting.readByte(); b != 'N' {
		t.Fatalf("SSLRequest answered %q", b)
	}

	closed := make(chan struct{})
	go func() {
		ts.close(t)
		close(closed)
	}()
	const fatal = "E FATAL/FATAL 57P01 terminating connection due to administrator command"
	idle.expect(fatal)
	idle.expectEOF()
	busy.expect(fatal)
	busy.expectEOF()
	if cause := <-ts.e.unblocked; cause != errShutdown {
		t.Errorf("query context cause %v", cause)
	}
	starting.expect(fatal)
	starting.expectEOF()
	<-closed
	if n := len(ts.e.closed); n != 2 {
		t.Errorf("%d sessions closed, want 2", n)
	}
	// The listener is closed.
	if nc, err := net.Dial("tcp", ts.addr); err == nil {
		nc.Close()
		t.Error("server still accepts after Close")
	}
	// Serving after Close does nothing.
	if err := ts.ServeConnCheck(); err != nil {
		t.Error(err)
	}
}

// TestServerCloseLetsRunningQueryFinish checks that Close lets a running
// query finish and send its result before the connection is ended.
func TestServerCloseLetsRunningQueryFinish(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ts := startServer(t, newFakeEngine(mem))
	busy := dialRaw(t, ts.addr)
	busy.startup(map[string]string{"user": "u"})
	busy.send(&pgproto3.Query{String: "wait"})
	<-ts.e.blocked
	closed := make(chan struct{})
	go func() {
		ts.close(t)
		close(closed)
	}()
	ts.e.release <- struct{}{}
	busy.expect("C WAIT")
	busy.expect("Z I")
	busy.expect("E FATAL/FATAL 57P01 terminating connection due to administrator command")
	busy.expectEOF()
	<-closed
}

// ServeConnCheck runs ServeConn on a pipe after Close: it must return at once,
// closing the connection.
func (ts *testServer) ServeConnCheck() error {
	a, b := net.Pipe()
	defer b.Close()
	ts.ServeConn(context.Background(), a)
	if _, err := b.Read(make([]byte, 1)); err == nil {
		return errors.New("ServeConn after Close wrote to the connection")
	}
	return nil
}

func TestServeConnContextCancel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := newFakeEngine(mem)
	srv := NewServer(e, Options{})
	defer srv.Close()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() {
		srv.ServeConn(ctx, a)
		close(served)
	}()
	c := &rawClient{t: t, nc: b, fe: pgproto3.NewFrontend(b, b)}
	defer b.Close()
	c.startup(map[string]string{"user": "u"})
	cancel()
	c.expect("E FATAL/FATAL 57P01 terminating connection due to administrator command")
	c.expectEOF()
	<-served
	if s := <-e.closed; s.closes.Load() != 1 {
		t.Error("session not closed once")
	}
}

func TestDefaultServerVersion(t *testing.T) {
	if v := NewServer(nil, Options{}).version; v != "15.0" {
		t.Errorf("default server_version %q", v)
	}
}

func TestConnectError(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := newFakeEngine(mem)
	e.connectErr = sqlerr.New(sqlerr.InvalidCatalogName, `database "nope" does not exist`)
	ts := startServer(t, e)
	defer ts.close(t)
	_, err := pgx.Connect(context.Background(), fmt.Sprintf("postgres://u@%s/nope?sslmode=disable", ts.addr))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != sqlerr.InvalidCatalogName || pe.Severity != "FATAL" {
		t.Fatalf("connect: got %v, want FATAL 3D000", err)
	}
}

func TestConcurrentSessions(t *testing.T) {
	ts, done := setup(t)
	defer done()
	const clients, queries = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		conn := connectPgx(t, ts, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range queries {
				var count, sum int64
				rows, err := conn.Query(context.Background(), "rows 2000")
				if err != nil {
					errs <- err
					return
				}
				for rows.Next() {
					var v *int64
					if err := rows.Scan(&v); err != nil {
						errs <- err
						return
					}
					count++
					if v != nil {
						sum += *v
					}
				}
				if err := rows.Err(); err != nil {
					errs <- err
					return
				}
				// 0..1999 minus the NULL rows (i%7 == 3).
				want := int64(0)
				for i := int64(0); i < 2000; i++ {
					if i%7 != 3 {
						want += i
					}
				}
				if count != 2000 || sum != want {
					errs <- fmt.Errorf("%d rows summing to %d, want 2000 summing to %d", count, sum, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestWriteRowsAllocations checks that DataRow encoding does not allocate per
// row.
func TestWriteRowsAllocations(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	e := newFakeEngine(mem)
	srv := NewServer(e, Options{})
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go io.Copy(io.Discard, b)
	c := newConn(context.Background(), srv, a, 1)
	c.rw.start(context.Background())
	defer c.rw.finish()
	cols := []Column{{"a", types.Int64T}, {"b", types.TextT}, {"c", types.NumericOf(12, 2)}}
	if err := c.rw.BeginRows(cols); err != nil {
		t.Fatal(err)
	}
	bld := newTestBatch(t, mem, cols, 1000)
	defer bld.Release()
	// Text, then binary (as for a portal's result).
	for _, formats := range [][]int16{nil, {1, 1, 1}} {
		c.rw.formats = formats
		c.rw.WriteRows(bld) // warm up the buffers
		allocs := testing.AllocsPerRun(5, func() {
			if err := c.rw.WriteRows(bld); err != nil {
				t.Fatal(err)
			}
		})
		// A few per batch (formatters, column state), none per row.
		if allocs > 10 {
			t.Errorf("formats %v: %v allocations per 1000-row batch", formats, allocs)
		}
	}
}

func BenchmarkWriteRows(b *testing.B) {
	mem := memory.NewGoAllocator()
	srv := NewServer(newFakeEngine(mem), Options{})
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	go io.Copy(io.Discard, client)
	c := newConn(context.Background(), srv, server, 1)
	c.rw.start(context.Background())
	defer c.rw.finish()
	cols := []Column{{"a", types.Int64T}, {"b", types.TextT}, {"c", types.NumericOf(12, 2)}}
	if err := c.rw.BeginRows(cols); err != nil {
		b.Fatal(err)
	}
	rec := newTestBatch(b, mem, cols, 1024)
	defer rec.Release()
	n := 0
	for b.Loop() {
		if err := c.rw.WriteRows(rec); err != nil {
			b.Fatal(err)
		}
		n += 1024
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
}
