package pgwire

import (
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// The extended query protocol: Parse creates a prepared statement, Bind a
// portal (the statement with parameter values and result formats), Describe
// reports either's parameters and result columns, Execute runs a portal,
// Close drops either, Sync ends the pipeline with ReadyForQuery, Flush sends
// what is buffered. An error in any of them is reported and every following
// message up to Sync is discarded, as PostgreSQL does; so is a malformed
// message (08P01), unless its length is wrong, which ends the connection.
//
// The empty name is the unnamed statement or portal: the next Parse or Bind
// replaces it, and a simple Query drops both. Named ones live until Close;
// every portal is dropped at a Sync (or at the end of a simple Query) outside
// a transaction block, as PostgreSQL ends the implicit transaction there.

// SQLSTATEs of the extended protocol.
const (
	invalidCursorName           = "34000" // invalid_cursor_name: unknown portal
	duplicateCursor             = "42P03" // duplicate_cursor: the portal exists
	duplicatePreparedStatement  = "42P05" // duplicate_prepared_statement
	objectNotInPrerequisite     = "55000" // object_not_in_prerequisite_state
	invalidBinaryRepresentation = "22P03" // invalid_binary_representation
)

// statement is a prepared statement of a connection.
type statement struct {
	ps     PreparedStatement
	params []types.T
	// paramOIDs are the parameter types reported by Describe: the
	// declared OID where the client declared one, else the type's.
	paramOIDs []uint32
	cols      []Column
}

// portalState is where a portal is in its life.
type portalState uint8

const (
	// portalReady: bound, not run yet.
	portalReady portalState = iota
	// portalSuspended: run; some of its rows are still to be fetched.
	portalSuspended
	// portalDone: run, and every row sent.
	portalDone
	// portalFailed: the run failed.
	portalFailed
)

// portal is a bound statement of a connection.
type portal struct {
	p       Portal
	cols    []Column
	formats []int16 // the format of each of cols
	state   portalState
	// buffering is set while the portal runs for an Execute with a row
	// limit: the result writer keeps its rows (retained) in rows, and its
	// command tag in tag, to be sent by this and later Executes.
	buffering bool
	rows      []arrow.RecordBatch
	next      int // the first unsent row of rows[0]
	tag       string
}

// release drops the rows p still holds.
func (p *portal) release() {
	for _, r := range p.rows {
		r.Release()
	}
	clear(p.rows)
	p.rows, p.next = nil, 0
}

// extended handles one extended-protocol message of type typ (the body is
// read). It reports whether the connection goes on.
func (c *conn) extended(typ byte, body []byte) bool {
	var err error
	switch typ {
	case 'P':
		err = c.parse(body)
	case 'B':
		err = c.bind(body)
	case 'D':
		err = c.describe(body)
	case 'E':
		err = c.execute(body)
	case 'C':
		err = c.closeMessage(body)
	case 'H':
		if len(body) > 0 {
			err = newProtocolError("invalid Flush message format")
			break
		}
		return c.flush() == nil
	}
	if c.wErr != nil || c.ctx.Err() != nil {
		return false
	}
	if err == nil {
		return true
	}
	if pe, ok := err.(protocolError); ok {
		// A malformed message whose framing held: an ERROR, after which
		// the connection resyncs at Sync, as PostgreSQL does.
		err = sqlerr.New(sqlerr.ProtocolViolation, "%s", pe)
	}
	c.sendError("ERROR", sqlerr.Wrap(err))
	c.skipToSync = true
	// PostgreSQL sends an error at once, also without Sync or Flush.
	return c.flush() == nil
}

// sync handles Sync: the end of an extended-protocol pipeline.
func (c *conn) sync() bool {
	c.skipToSync = false
	c.endTransaction()
	return c.ready()
}

// endTransaction drops every portal if the session is not in a transaction
// block: the implicit transaction that ends here would end them in
// PostgreSQL.
func (c *conn) endTransaction() {
	if c.session.TxStatus() == 'I' {
		for name := range c.portals {
			c.closePortal(name)
		}
	}
}

func (c *conn) parse(body []byte) error {
	r := msgReader{b: body, msg: "Parse"}
	name := r.string()
	query := r.string()
	oids := make([]uint32, r.uint16())
	for i := range oids {
		oids[i] = r.uint32()
	}
	if err := r.end(); err != nil {
		return err
	}
	if name == "" {
		c.closeStatement("")
	} else if c.stmts[name] != nil {
		return sqlerr.New(duplicatePreparedStatement, "prepared statement \"%s\" already exists", name)
	}
	if !utf8.ValidString(query) {
		return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	declared := make([]types.T, len(oids))
	for i, oid := range oids {
		if oid == 0 || oid == types.OIDUnknown {
			declared[i] = types.UnknownT // to be inferred
			continue
		}
		t, ok := types.FromOID(oid)
		if !ok {
			return sqlerr.New(sqlerr.FeatureNotSupported, "parameter $%d has type OID %d, which is not supported", i+1, oid)
		}
		declared[i] = t
	}
	ps, err := c.session.Prepare(c.ctx, query, declared)
	if err != nil {
		return err
	}
	st := &statement{ps: ps, params: ps.Params(), cols: ps.Columns()}
	if len(st.params) < len(declared) || len(st.params) > math.MaxUint16 {
		ps.Close()
		return sqlerr.New(sqlerr.InternalError, "pgwire: a statement with %d declared parameters has %d", len(declared), len(st.params))
	}
	st.paramOIDs = make([]uint32, len(st.params))
	for i, t := range st.params {
		st.paramOIDs[i] = t.OID()
		if i < len(oids) && declared[i].Kind != types.Unknown {
			st.paramOIDs[i] = oids[i]
		}
	}
	if c.stmts == nil {
		c.stmts = make(map[string]*statement)
	}
	c.stmts[name] = st
	return c.send(&pgproto3.ParseComplete{})
}

func (c *conn) bind(body []byte) error {
	r := msgReader{b: body, msg: "Bind"}
	portalName := r.string()
	stmtName := r.string()
	paramFormats := make([]int16, r.uint16())
	for i := range paramFormats {
		paramFormats[i] = r.int16()
	}
	values := make([][]byte, r.uint16()) // slices of body; nil is NULL
	for i := range values {
		switch n := r.int32(); {
		case n >= 0:
			values[i] = r.bytes(int(n))
			if values[i] == nil {
				values[i] = []byte{} // an empty value, not NULL
			}
		case n != -1:
			r.fail()
		}
	}
	resultFormats := make([]int16, r.uint16())
	for i := range resultFormats {
		resultFormats[i] = r.int16()
	}
	if err := r.end(); err != nil {
		return err
	}

	st := c.stmts[stmtName]
	if st == nil {
		if stmtName == "" {
			return sqlerr.New(sqlerr.InvalidSQLStatementName, "unnamed prepared statement does not exist")
		}
		return sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", stmtName)
	}
	if n := len(paramFormats); n > 1 && n != len(values) {
		return sqlerr.New(sqlerr.ProtocolViolation, "bind message has %d parameter formats but %d parameters", n, len(values))
	}
	if len(values) != len(st.params) {
		return sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement \"%s\" requires %d",
			len(values), stmtName, len(st.params))
	}
	if portalName == "" {
		c.closePortal("")
	} else if c.portals[portalName] != nil {
		// PostgreSQL's words: portals and cursors are one thing there.
		return sqlerr.New(duplicateCursor, "cursor \"%s\" already exists", portalName)
	}
	params, err := decodeParams(st.params, paramFormats, values, sessionZone(c.session))
	if err != nil {
		return err
	}
	formats, err := resultFormatsFor(resultFormats, len(st.cols))
	if err != nil {
		return err
	}
	bp, err := st.ps.Bind(c.ctx, params)
	if err != nil {
		return err
	}
	if c.portals == nil {
		c.portals = make(map[string]*portal)
	}
	c.portals[portalName] = &portal{p: bp, cols: st.cols, formats: formats}
	return c.send(&pgproto3.BindComplete{})
}

// decodeParams converts a Bind message's parameter values into datums of
// the statement's parameter types; text timestamptz values without an offset
// are read in zone.
func decodeParams(ts []types.T, formats []int16, values [][]byte, zone *types.Zone) ([]types.Datum, error) {
	out := make([]types.Datum, len(values))
	for i, v := range values {
		if v == nil {
			out[i] = types.Null
			continue
		}
		format := int16(pgproto3.TextFormat)
		switch len(formats) {
		case 0:
		case 1:
			format = formats[0]
		default:
			format = formats[i]
		}
		t := ts[i]
		var err error
		switch format {
		case pgproto3.TextFormat:
			if !utf8.Valid(v) {
				return nil, sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
			}
			out[i], err = types.ParseTextIn(t, string(v), zone)
		case pgproto3.BinaryFormat:
			if size := t.Size(); size > 0 && len(v) != int(size) {
				return nil, sqlerr.New(invalidBinaryRepresentation, "incorrect binary data format in bind parameter %d", i+1)
			}
			out[i], err = types.DecodeBinary(t, v)
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unsupported format code: %d", format)
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// resultFormatsFor expands a Bind message's result format codes (none: all
// text; one: for every column; else one per column) to one per column.
func resultFormatsFor(codes []int16, ncols int) ([]int16, error) {
	if len(codes) > 1 && len(codes) != ncols {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message has %d result formats but query has %d columns", len(codes), ncols)
	}
	formats := make([]int16, ncols)
	for i := range formats {
		switch len(codes) {
		case 0:
		case 1:
			formats[i] = codes[0]
		default:
			formats[i] = codes[i]
		}
		if f := formats[i]; f != pgproto3.TextFormat && f != pgproto3.BinaryFormat {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unsupported format code: %d", f)
		}
	}
	return formats, nil
}

func (c *conn) describe(body []byte) error {
	r := msgReader{b: body, msg: "Describe"}
	kind := r.byte()
	name := r.string()
	if err := r.end(); err != nil {
		return err
	}
	var cols []Column
	var formats []int16
	switch kind {
	case 'S':
		st := c.stmts[name]
		if st == nil {
			if name == "" {
				return sqlerr.New(sqlerr.InvalidSQLStatementName, "unnamed prepared statement does not exist")
			}
			return sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", name)
		}
		if err := c.send(&pgproto3.ParameterDescription{ParameterOIDs: st.paramOIDs}); err != nil {
			return err
		}
		cols = st.cols
	case 'P':
		p := c.portals[name]
		if p == nil {
			return sqlerr.New(invalidCursorName, "portal \"%s\" does not exist", name)
		}
		cols, formats = p.cols, p.formats
	default:
		return newProtocolError("invalid DESCRIBE message subtype %d", kind)
	}
	if cols == nil {
		return c.send(&pgproto3.NoData{})
	}
	fields, err := appendFields(c.rw.fields[:0], cols, formats)
	if err != nil {
		return err
	}
	c.rw.fields = fields
	return c.send(&pgproto3.RowDescription{Fields: fields})
}

func (c *conn) execute(body []byte) error {
	r := msgReader{b: body, msg: "Execute"}
	name := r.string()
	maxRows := r.int32()
	if err := r.end(); err != nil {
		return err
	}
	p := c.portals[name]
	if p == nil {
		return sqlerr.New(invalidCursorName, "portal \"%s\" does not exist", name)
	}
	limit := max(int(maxRows), 0) // 0: no limit
	switch p.state {
	case portalReady:
		p.buffering = limit > 0 && p.cols != nil
		err := c.runPortal(p)
		p.buffering = false
		if err != nil {
			p.state = portalFailed
			p.release()
			return err
		}
		if p.cols == nil || limit == 0 {
			p.state = portalDone
			return nil
		}
		p.state = portalSuspended
		return c.sendRows(p, limit)
	case portalSuspended:
		return c.sendRows(p, limit)
	case portalDone:
		if p.cols != nil {
			// Fetching past the end of a result fetches nothing.
			return c.send(&pgproto3.CommandComplete{CommandTag: []byte(noNUL(tagWithCount(p.tag, 0)))})
		}
	}
	return sqlerr.New(objectNotInPrerequisite, "portal \"%s\" cannot be run", name)
}

// runPortal runs p's statement, as runQuery runs a simple query's, and
// returns the error to report, if any.
func (c *conn) runPortal(p *portal) error {
	reported, canceled, err := c.cancelable(func(ctx context.Context) { c.rw.startPortal(ctx, p) },
		func(ctx context.Context) error { return p.p.Run(ctx, &c.rw) })

	switch {
	case err != nil:
		return queryError(err, canceled)
	case !reported:
		return c.send(&pgproto3.EmptyQueryResponse{})
	}
	return nil
}

// sendRows sends up to limit (0: all) of the rows p holds, then
// PortalSuspended if it sent limit rows, as PostgreSQL does even when no row
// is left, else CommandComplete.
func (c *conn) sendRows(p *portal, limit int) error {
	sent := 0
	for len(p.rows) > 0 && (limit == 0 || sent < limit) {
		rec := p.rows[0]
		n := int(rec.NumRows())
		hi := n
		if limit > 0 {
			hi = min(n, p.next+limit-sent)
		}
		if err := c.rw.writeRows(p.cols, p.formats, rec, p.next, hi); err != nil {
			return err
		}
		sent += hi - p.next
		p.next = hi
		if p.next == n {
			rec.Release()
			p.rows[0] = nil
			p.rows, p.next = p.rows[1:], 0
		}
	}
	if limit > 0 && sent == limit {
		return c.send(&pgproto3.PortalSuspended{})
	}
	p.state = portalDone
	p.release()
	return c.send(&pgproto3.CommandComplete{CommandTag: []byte(noNUL(tagWithCount(p.tag, sent)))})
}

// tagWithCount replaces the row count that ends a command tag ("SELECT 5")
// with n: the tag of one Execute of a portal counts the rows it sent.
func tagWithCount(tag string, n int) string {
	i := strings.LastIndexByte(tag, ' ')
	if i < 0 || i == len(tag)-1 {
		return tag
	}
	for _, ch := range tag[i+1:] {
		if ch < '0' || ch > '9' {
			return tag
		}
	}
	return tag[:i+1] + strconv.Itoa(n)
}

func (c *conn) closeMessage(body []byte) error {
	r := msgReader{b: body, msg: "Close"}
	kind := r.byte()
	name := r.string()
	if err := r.end(); err != nil {
		return err
	}
	switch kind {
	case 'S':
		c.closeStatement(name)
	case 'P':
		c.closePortal(name)
	default:
		return newProtocolError("invalid CLOSE message subtype %d", kind)
	}
	// Closing what does not exist is not an error.
	return c.send(&pgproto3.CloseComplete{})
}

func (c *conn) closeStatement(name string) {
	if st := c.stmts[name]; st != nil {
		delete(c.stmts, name)
		st.ps.Close()
	}
}

func (c *conn) closePortal(name string) {
	if p := c.portals[name]; p != nil {
		delete(c.portals, name)
		p.release()
		p.p.Close()
	}
}

// closeAll closes every portal and statement, when the connection ends.
func (c *conn) closeAll() {
	for name := range c.portals {
		c.closePortal(name)
	}
	for name := range c.stmts {
		c.closeStatement(name)
	}
}

// msgReader reads the fields of a message body in order, as PostgreSQL's
// pq_getmsg functions do. After the first failure every read returns a zero
// value, and end reports the message malformed.
type msgReader struct {
	b      []byte
	msg    string // the message's name, for the error
	failed bool
}

func (r *msgReader) fail() { r.failed, r.b = true, nil }

func (r *msgReader) next(n int) []byte {
	if n < 0 || len(r.b) < n {
		r.fail()
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *msgReader) byte() byte {
	if v := r.next(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *msgReader) uint16() uint16 {
	if v := r.next(2); v != nil {
		return binary.BigEndian.Uint16(v)
	}
	return 0
}

func (r *msgReader) int16() int16 { return int16(r.uint16()) }

func (r *msgReader) uint32() uint32 {
	if v := r.next(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (r *msgReader) int32() int32 { return int32(r.uint32()) }

// bytes returns the next n bytes, a slice of the body.
func (r *msgReader) bytes(n int) []byte { return r.next(n) }

// string reads a NUL-terminated string.
func (r *msgReader) string() string {
	for i, ch := range r.b {
		if ch == 0 {
			s := string(r.b[:i])
			r.b = r.b[i+1:]
			return s
		}
	}
	r.fail()
	return ""
}

// end reports a malformed message: a field was missing or bytes are left.
func (r *msgReader) end() error {
	if r.failed || len(r.b) > 0 {
		return newProtocolError("invalid %s message format", r.msg)
	}
	return nil
}
