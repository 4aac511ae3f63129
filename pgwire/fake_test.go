package pgwire

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// fakeEngine is an Engine whose sessions understand a tiny command language
// (see fakeSession.run). It records what the server does to it.
type fakeEngine struct {
	mem        memory.Allocator
	connectErr error
	// noBlock makes "block" return at once (for the fuzz test).
	noBlock bool

	mu       sync.Mutex
	params   []map[string]string
	sessions []*fakeSession

	// blocked receives the context of every "block" statement when it starts;
	// unblocked receives the context's cause when it ends.
	blocked   chan context.Context
	unblocked chan error
	// release ends a running "wait" statement successfully.
	release chan struct{}
	// closed receives every session when it is closed.
	closed chan *fakeSession

	// The prepared statements and portals not closed yet, and the number
	// of portal runs.
	openStmts, openPortals, portalRuns atomic.Int64
}

func newFakeEngine(mem memory.Allocator) *fakeEngine {
	return &fakeEngine{
		mem:       mem,
		blocked:   make(chan context.Context, 64),
		unblocked: make(chan error, 64),
		release:   make(chan struct{}),
		closed:    make(chan *fakeSession, 1024),
	}
}

func (e *fakeEngine) Connect(ctx context.Context, params map[string]string) (Session, error) {
	if e.connectErr != nil {
		return nil, e.connectErr
	}
	s := &fakeSession{e: e, params: params, tx: 'I'}
	e.mu.Lock()
	e.params = append(e.params, params)
	e.sessions = append(e.sessions, s)
	e.mu.Unlock()
	return s, nil
}

func (e *fakeEngine) lastParams() map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.params[len(e.params)-1]
}

type fakeSession struct {
	e      *fakeEngine
	params map[string]string
	tx     byte
	closes atomic.Int32
}

func (s *fakeSession) TxStatus() byte { return s.tx }

func (s *fakeSession) Close() {
	s.closes.Add(1)
	select {
	case s.e.closed <- s:
	default: // nobody counts (fuzzing)
	}
}

// Query runs the ';'-separated statements of text. Empty statements are
// skipped; a text of only empty statements is an empty query.
func (s *fakeSession) Query(ctx context.Context, text string, w ResultWriter) error {
	ran := false
	for _, stmt := range strings.Split(text, ";") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		ran = true
		if err := s.run(ctx, stmt, w); err != nil {
			return err
		}
	}
	if !ran {
		return w.EmptyQuery()
	}
	return nil
}

func (s *fakeSession) run(ctx context.Context, stmt string, w ResultWriter) error {
	f := strings.Fields(stmt)
	arg := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	switch f[0] {
	case "select":
		// select <int>: one int column named ?column?.
		v, err := strconv.Atoi(arg(1))
		if err != nil {
			return sqlerr.New(sqlerr.SyntaxError, "bad select")
		}
		return s.writeInts(w, []Column{{Name: "?column?", Type: types.Int32T}}, int64(v), 1)
	case "rows":
		// rows <n>: n bigints 0..n-1 in batches of 1000, every 7th (i%7 == 3)
		// NULL. n is at most 100000, so that fuzzing ends.
		n, _ := strconv.Atoi(arg(1))
		return s.writeRows(w, min(n, 100_000))
	case "types":
		return s.writeTypes(w)
	case "insert":
		return w.Complete("INSERT 0 1")
	case "begin":
		s.tx = 'T'
		return w.Complete("BEGIN")
	case "commit":
		s.tx = 'I'
		return w.Complete("COMMIT")
	case "notice":
		if err := w.Notice("NOTICE", "01000", "hello "+strings.Join(f[1:], " ")); err != nil {
			return err
		}
		return w.Complete("DO")
	case "set":
		if err := w.ParameterStatus(arg(1), arg(2)); err != nil {
			return err
		}
		return w.Complete("SET")
	case "error":
		return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: `syntax error at or near "foo"`,
			Detail: "some detail", Hint: "some hint", Position: 8}
	case "plainerror":
		return errors.New("boom")
	case "nothing":
		return nil
	case "block":
		if s.e.noBlock {
			return w.Complete("BLOCK")
		}
		s.e.blocked <- ctx
		<-ctx.Done()
		s.e.unblocked <- context.Cause(ctx)
		return ctx.Err()
	case "wait":
		s.e.blocked <- ctx
		select {
		case <-s.e.release:
			return w.Complete("WAIT")
		case <-ctx.Done():
			s.e.unblocked <- context.Cause(ctx)
			return ctx.Err()
		}
	case "misuse":
		// WriteRows without BeginRows: the writer refuses.
		b := array.NewRecordBuilder(s.e.mem, arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil))
		defer b.Release()
		rec := b.NewRecordBatch()
		defer rec.Release()
		return w.WriteRows(rec)
	case "mismatch":
		// An int64 batch for an int32 column: the writer refuses.
		if err := w.BeginRows([]Column{{Name: "x", Type: types.Int32T}}); err != nil {
			return err
		}
		b := array.NewRecordBuilder(s.e.mem, arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil))
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(1)
		rec := b.NewRecordBatch()
		defer rec.Release()
		return w.WriteRows(rec)
	}
	return sqlerr.New(sqlerr.SyntaxError, "fake: unknown statement %q", f[0])
}

// Prepare implements Session for the extended protocol. The statements are
// those of run, plus "echo $1 $2:int8 ...", which returns one row with the
// value of each parameter named, in a column of the parameter's type (text
// if it has none). A parameter written $n:type has that type unless the
// client declared one; a bare $n gets the declared type or none. "binderror"
// fails at Bind, "badcols" reports other columns than it describes, and
// "prepareerror" fails here.
func (s *fakeSession) Prepare(ctx context.Context, text string, declared []types.T) (PreparedStatement, error) {
	if strings.Count(strings.TrimRight(strings.TrimSpace(text), ";"), ";") > 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	text = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(text), ";"))
	ps := &fakeStatement{s: s, text: text, params: append([]types.T(nil), declared...)}
	f := strings.Fields(text)
	if len(f) > 0 {
		ps.kind = f[0]
	}
	for _, w := range f {
		num, typ, ok := strings.Cut(w, ":")
		n, err := strconv.Atoi(strings.TrimPrefix(num, "$"))
		if !strings.HasPrefix(num, "$") || err != nil || n < 1 {
			continue
		}
		for len(ps.params) < n {
			ps.params = append(ps.params, types.UnknownT)
		}
		if ok && ps.params[n-1].Kind == types.Unknown {
			t, known := types.FromName(typ, nil)
			if !known {
				return nil, sqlerr.New(sqlerr.UndefinedObject, "type \"%s\" does not exist", typ)
			}
			ps.params[n-1] = t
		}
		ps.echo = append(ps.echo, n-1)
	}
	switch {
	case len(f) == 0:
	case f[0] == "prepareerror":
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"x\" does not exist").At(3)
	case f[0] == "echo":
		for _, i := range ps.echo {
			t := ps.params[i]
			if t.Kind == types.Unknown {
				t = types.TextT
			}
			ps.cols = append(ps.cols, Column{Name: fmt.Sprintf("$%d", i+1), Type: t})
		}
	case f[0] == "select", f[0] == "badcols":
		ps.cols = []Column{{Name: "?column?", Type: types.Int32T}}
	case f[0] == "rows":
		ps.cols = []Column{{Name: "n", Type: types.Int64T}}
	case f[0] == "types":
		ps.cols = typesColumns
	}
	s.e.openStmts.Add(1)
	return ps, nil
}

type fakeStatement struct {
	s      *fakeSession
	text   string
	kind   string // the first word of text
	params []types.T
	echo   []int // the parameters echo returns
	cols   []Column
	closed bool
}

func (ps *fakeStatement) Params() []types.T { return ps.params }
func (ps *fakeStatement) Columns() []Column { return ps.cols }

func (ps *fakeStatement) Bind(ctx context.Context, params []types.Datum) (Portal, error) {
	if ps.closed {
		return nil, errors.New("fake: Bind of a closed statement")
	}
	if len(params) != len(ps.params) {
		return nil, fmt.Errorf("fake: %d values for %d parameters", len(params), len(ps.params))
	}
	if ps.kind == "binderror" {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "fake bind error")
	}
	ps.s.e.openPortals.Add(1)
	return &fakePortal{ps: ps, params: append([]types.Datum(nil), params...)}, nil
}

func (ps *fakeStatement) Close() {
	if ps.closed {
		panic("fake: statement closed twice")
	}
	ps.closed = true
	ps.s.e.openStmts.Add(-1)
}

type fakePortal struct {
	ps     *fakeStatement
	params []types.Datum
	ran    bool
	closed bool
}

func (p *fakePortal) Run(ctx context.Context, w ResultWriter) error {
	if p.ran || p.closed {
		return errors.New("fake: portal run twice or after Close")
	}
	p.ran = true
	p.ps.s.e.portalRuns.Add(1)
	ps := p.ps
	switch ps.kind {
	case "":
		return w.EmptyQuery()
	case "echo":
		return ps.s.writeDatums(w, ps.cols, ps.echo, p.params)
	case "badcols":
		return ps.s.writeRows(w, 1)
	}
	return ps.s.run(ctx, ps.text, w)
}

func (p *fakePortal) Close() {
	if p.closed {
		panic("fake: portal closed twice")
	}
	p.closed = true
	p.ps.s.e.openPortals.Add(-1)
}

// writeDatums writes one row: the parameters idx of params, in cols.
func (s *fakeSession) writeDatums(w ResultWriter, cols []Column, idx []int, params []types.Datum) error {
	if err := w.BeginRows(cols); err != nil {
		return err
	}
	b := array.NewRecordBuilder(s.e.mem, schemaOf(cols))
	defer b.Release()
	for j, i := range idx {
		types.AppendDatum(b.Field(j), cols[j].Type, params[i])
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.WriteRows(rec); err != nil {
		return err
	}
	return w.Complete("SELECT 1")
}

func schemaOf(cols []Column) *arrow.Schema {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: c.Type.ArrowType(), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

func (s *fakeSession) writeInts(w ResultWriter, cols []Column, v int64, n int) error {
	if err := w.BeginRows(cols); err != nil {
		return err
	}
	b := array.NewRecordBuilder(s.e.mem, schemaOf(cols))
	defer b.Release()
	for range n {
		b.Field(0).(*array.Int32Builder).Append(int32(v))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.WriteRows(rec); err != nil {
		return err
	}
	return w.Complete(fmt.Sprintf("SELECT %d", n))
}

func (s *fakeSession) writeRows(w ResultWriter, n int) error {
	cols := []Column{{Name: "n", Type: types.Int64T}}
	if err := w.BeginRows(cols); err != nil {
		return err
	}
	b := array.NewRecordBuilder(s.e.mem, schemaOf(cols))
	defer b.Release()
	for start := 0; start < n; start += 1000 {
		for i := start; i < min(n, start+1000); i++ {
			if i%7 == 3 {
				b.Field(0).AppendNull()
			} else {
				b.Field(0).(*array.Int64Builder).Append(int64(i))
			}
		}
		rec := b.NewRecordBatch()
		err := w.WriteRows(rec)
		rec.Release()
		if err != nil {
			return err
		}
	}
	return w.Complete(fmt.Sprintf("SELECT %d", n))
}

// typesColumns are the columns of the "types" statement, one per kind.
var typesColumns = []Column{
	{"b", types.BoolT},
	{"i2", types.Int16T},
	{"i4", types.Int32T},
	{"i8", types.Int64T},
	{"f4", types.Float32T},
	{"f8", types.Float64T},
	{"n", types.NumericT},
	{"n102", types.NumericOf(10, 2)},
	{"t", types.TextT},
	{"vc5", types.T{Kind: types.Text, Width: 5}},
	{"d", types.DateT},
	{"ts", types.TimestampT},
	{"tstz", types.TimestampTZT},
	{"iv", types.IntervalT},
	{"u", types.UnknownT},
}

// writeTypes writes two rows of typesColumns: values, then NULLs.
func (s *fakeSession) writeTypes(w ResultWriter) error {
	if err := w.BeginRows(typesColumns); err != nil {
		return err
	}
	b := array.NewRecordBuilder(s.e.mem, schemaOf(typesColumns))
	defer b.Release()
	b.Field(0).(*array.BooleanBuilder).Append(true)
	b.Field(1).(*array.Int16Builder).Append(-2)
	b.Field(2).(*array.Int32Builder).Append(math.MaxInt32)
	b.Field(3).(*array.Int64Builder).Append(math.MinInt64)
	b.Field(4).(*array.Float32Builder).Append(1.5)
	b.Field(5).(*array.Float64Builder).Append(0.1)
	b.Field(6).(*array.Decimal128Builder).Append(types.PackNumeric(decimal128.FromI64(-15), 1)) // -1.5
	b.Field(7).(*array.Decimal128Builder).Append(decimal128.FromI64(5))                         // 0.05
	b.Field(8).(*array.StringBuilder).Append("héllo")
	b.Field(9).(*array.StringBuilder).Append("")
	b.Field(10).(*array.Date32Builder).Append(-1)
	b.Field(11).(*array.TimestampBuilder).Append(-1)
	b.Field(12).(*array.TimestampBuilder).Append(1_700_000_000_000_000)
	b.Field(13).(*array.MonthDayNanoIntervalBuilder).Append(types.IntervalValue{Months: -26, Days: -3, Micros: -1_500_000}.ToArrow())
	b.Field(14).AppendNull()
	for _, f := range b.Fields() {
		f.AppendNull()
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.WriteRows(rec); err != nil {
		return err
	}
	return w.Complete("SELECT 2")
}

// newTestBatch returns a batch of n rows for cols (bigint, text or numeric
// columns), every 5th row NULL.
func newTestBatch(t testing.TB, mem memory.Allocator, cols []Column, n int) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, schemaOf(cols))
	defer b.Release()
	for i := range n {
		for j, f := range b.Fields() {
			if i%5 == 4 {
				f.AppendNull()
				continue
			}
			switch f := f.(type) {
			case *array.Int64Builder:
				f.Append(int64(i) * 1_000_003)
			case *array.StringBuilder:
				f.Append("value " + strconv.Itoa(i))
			case *array.Decimal128Builder:
				f.Append(types.PackNumeric(decimal128.FromI64(int64(i)*12345), 2))
			default:
				t.Fatalf("column %d: no case for %T", j, f)
			}
		}
	}
	return b.NewRecordBatch()
}

// testServer is a Server on a loopback listener.
type testServer struct {
	*Server
	addr string
	e    *fakeEngine
	done chan error // Serve's result
}

// startServer serves e on a loopback port. The caller closes the server.
func startServer(t *testing.T, e *fakeEngine, opts ...Options) *testServer {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: NewServer(e, o), addr: ln.Addr().String(), e: e, done: make(chan error, 1)}
	go func() { ts.done <- ts.Serve(ln) }()
	return ts
}

// close closes the server and checks that Serve returned nil.
func (ts *testServer) close(t *testing.T) {
	t.Helper()
	if err := ts.Close(); err != nil {
		t.Error(err)
	}
	if err := <-ts.done; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func (ts *testServer) port() string {
	_, p, _ := net.SplitHostPort(ts.addr)
	return p
}

// rawClient is a frontend speaking the protocol message by message.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	fe *pgproto3.Frontend
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

func (c *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	c.t.Helper()
	for _, m := range msgs {
		c.fe.Send(m)
	}
	if err := c.fe.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

// startup sends a startup message with params and reads up to ReadyForQuery,
// returning the ParameterStatus values and BackendKeyData.
func (c *rawClient) startup(params map[string]string) (map[string]string, pgproto3.BackendKeyData) {
	c.t.Helper()
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: params})
	status := make(map[string]string)
	var key pgproto3.BackendKeyData
	for {
		m, err := c.fe.Receive()
		if err != nil {
			c.t.Fatal(err)
		}
		switch m := m.(type) {
		case *pgproto3.AuthenticationOk:
		case *pgproto3.ParameterStatus:
			status[m.Name] = m.Value
		case *pgproto3.BackendKeyData:
			key = pgproto3.BackendKeyData{ProcessID: m.ProcessID, SecretKey: append([]byte(nil), m.SecretKey...)}
		case *pgproto3.ReadyForQuery:
			return status, key
		default:
			c.t.Fatalf("unexpected startup message %s", describe(m))
		}
	}
}

// expect receives len(want) messages and compares their descriptions.
func (c *rawClient) expect(want ...string) {
	c.t.Helper()
	for i, w := range want {
		m, err := c.fe.Receive()
		if err != nil {
			c.t.Fatalf("message %d: want %q, got error %v", i, w, err)
		}
		if got := describe(m); got != w {
			c.t.Fatalf("message %d: got %q, want %q", i, got, w)
		}
	}
}

// expectEOF checks that the server closed the connection.
func (c *rawClient) expectEOF() {
	c.t.Helper()
	if m, err := c.fe.Receive(); err == nil {
		c.t.Fatalf("got %s, want the connection closed", describe(m))
	}
}

// describe returns a compact text of a backend message for comparisons.
func describe(m pgproto3.BackendMessage) string {
	switch m := m.(type) {
	case *pgproto3.CommandComplete:
		return "C " + string(m.CommandTag)
	case *pgproto3.RowDescription:
		var parts []string
		for _, f := range m.Fields {
			parts = append(parts, fmt.Sprintf("%s:%d:%d:%d:%d", f.Name, f.DataTypeOID, f.DataTypeSize, f.TypeModifier, f.Format))
		}
		return "T " + strings.Join(parts, " ")
	case *pgproto3.DataRow:
		var parts []string
		for _, v := range m.Values {
			if v == nil {
				parts = append(parts, "NULL")
			} else {
				parts = append(parts, string(v))
			}
		}
		return "D " + strings.Join(parts, "|")
	case *pgproto3.ErrorResponse:
		s := fmt.Sprintf("E %s/%s %s %s", m.Severity, m.SeverityUnlocalized, m.Code, m.Message)
		if m.Detail != "" || m.Hint != "" || m.Position != 0 {
			s += fmt.Sprintf(" [%s|%s|%d]", m.Detail, m.Hint, m.Position)
		}
		return s
	case *pgproto3.NoticeResponse:
		return fmt.Sprintf("N %s/%s %s %s", m.Severity, m.SeverityUnlocalized, m.Code, m.Message)
	case *pgproto3.ParameterStatus:
		return fmt.Sprintf("S %s=%s", m.Name, m.Value)
	case *pgproto3.ReadyForQuery:
		return "Z " + string(m.TxStatus)
	case *pgproto3.EmptyQueryResponse:
		return "I"
	case *pgproto3.AuthenticationOk:
		return "R ok"
	case *pgproto3.BackendKeyData:
		return fmt.Sprintf("K %d bytes", len(m.SecretKey))
	case *pgproto3.NegotiateProtocolVersion:
		return fmt.Sprintf("v 3.%d %v", m.NewestMinorProtocol, m.UnrecognizedOptions)
	case *pgproto3.ParseComplete:
		return "1"
	case *pgproto3.BindComplete:
		return "2"
	case *pgproto3.CloseComplete:
		return "3"
	case *pgproto3.NoData:
		return "n"
	case *pgproto3.PortalSuspended:
		return "s"
	case *pgproto3.ParameterDescription:
		return fmt.Sprint("t ", m.ParameterOIDs)
	}
	return fmt.Sprintf("%T", m)
}
