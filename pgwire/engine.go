package pgwire

import (
	"context"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/types"
)

// Engine opens sessions.
type Engine interface {
	// Connect opens a session for a client whose startup message carried params
	// (user, database, application_name, options, ...). An error is sent to the
	// client as a FATAL ErrorResponse and the connection is closed.
	//
	// params always holds "user"; "database" defaults to the user name as in
	// PostgreSQL. Protocol options (names starting with "_pq_.") are removed.
	// ctx is cancelled when the connection ends.
	Connect(ctx context.Context, params map[string]string) (Session, error)
}

// Session runs one client's statements. Its methods, and those of the
// PreparedStatements and Portals it returns, are called from one goroutine.
type Session interface {
	// Query runs every statement of one simple-Query message in order, reporting
	// each statement's result to w. It returns the first error, after which no
	// further statement of the message runs. ctx is cancelled when the client
	// sends a CancelRequest for this session or the connection is lost.
	//
	// The error reaches the client as an ErrorResponse: an *sqlerr.Error with its
	// SQLSTATE and fields, anything else as XX000, except that an error after a
	// CancelRequest becomes 57014 (query_canceled). w must not be used after
	// Query returns.
	Query(ctx context.Context, text string, w ResultWriter) error
	// Prepare analyses text, which holds at most one statement, for the
	// extended query protocol (a Parse message) without running it; text
	// without a statement prepares an empty query. paramTypes are the types
	// the client declared for $1, $2, ...; an UnknownT entry asks the session
	// to infer that parameter's type from the statement. Errors reach the
	// client as Query's do.
	Prepare(ctx context.Context, text string, paramTypes []types.T) (PreparedStatement, error)
	// TxStatus is the transaction status for ReadyForQuery: 'I', 'T' or 'E'.
	TxStatus() byte
	// Close releases the session; it is called exactly once, also when the client
	// disappears mid-query.
	Close()
}

// IdleTimeoutSession is a Session with an idle_in_transaction_session_timeout:
// when IdleInTransactionTimeout (asked before each wait for a message) is not
// zero and no message arrives within it, the connection ends with FATAL 25P03.
type IdleTimeoutSession interface {
	IdleInTransactionTimeout() time.Duration
}

// ZonedSession is a Session whose TimeZone setting may be other than UTC:
// the connection prints timestamptz values in text format in TimeZone()
// (binary format stays zone-free UTC microseconds) and reports its name as
// the TimeZone parameter at startup. A session that does not implement it
// runs in UTC.
type ZonedSession interface {
	TimeZone() *types.Zone
}

// Drainer is a Session whose running statement may not end by itself (a
// SUBSCRIBE streams until cancelled). Server.Close calls Drain, from any
// goroutine, when it waits for the session's running statement: the
// session should end that statement soon.
type Drainer interface {
	Drain()
}

// sessionZone is s's time zone.
func sessionZone(s Session) *types.Zone {
	if zs, ok := s.(ZonedSession); ok {
		if z := zs.TimeZone(); z != nil {
			return z
		}
	}
	return types.UTC
}

// PreparedStatement is a statement prepared by Session.Prepare. It is used
// only while its session is open; the connection closes it exactly once.
type PreparedStatement interface {
	// Params returns the type of each parameter, $1 first: every declared
	// one and every one the statement references (at most 65535). A
	// parameter whose type nothing decided is UnknownT; its values are text.
	// The caller does not modify the slice.
	Params() []types.T
	// Columns describes the rows the statement returns, or is nil if it
	// returns none. The caller does not modify the slice.
	Columns() []Column
	// Bind creates a portal: the statement with one value per parameter,
	// each of the parameter's type (types.Null for NULL). The portal's
	// result has the statement's Columns: if the statement's analysis
	// changed since Prepare so that it would not (a table was recreated),
	// Bind fails. The portal does not retain params.
	Bind(ctx context.Context, params []types.Datum) (Portal, error)
	// Close releases the statement. Portals bound from it stay usable.
	Close()
}

// Portal is a prepared statement bound to parameter values (a Bind
// message). It is used only while its session is open; the connection
// closes it exactly once.
type Portal interface {
	// Run executes the statement once, reporting its result to w as Query
	// does for one statement: BeginRows with the statement's Columns,
	// WriteRows, Complete; or just Complete; or EmptyQuery for an empty
	// query. The connection calls Run at most once per portal, also when the
	// client fetches the rows with several Execute messages (it keeps the
	// rows). ctx and errors are as for Query.
	Run(ctx context.Context, w ResultWriter) error
	// Close releases the portal.
	Close()
}

// Column describes one result column.
type Column struct {
	Name string
	Type types.T
}

// ResultWriter receives statement results. It is not safe for concurrent use.
//
// Every method returns an error once the connection can no longer be written
// (the client went away); BeginRows and WriteRows also return one when the
// query's context is cancelled. The session should stop the statement and
// return that error from Query.
type ResultWriter interface {
	// BeginRows starts a row-returning result: it sends RowDescription, or,
	// when a Portal runs (the client has had the description from Describe),
	// checks that cols are the statement's Columns.
	BeginRows(cols []Column) error
	// WriteRows sends every row of rec as a DataRow, each column in the
	// format the client asked for (text for a simple query; text or binary
	// per column for a portal). rec's columns are the Arrow types of the
	// Columns given to BeginRows. WriteRows does not release rec; it may
	// retain it (rec.Retain) to send the rows later, when the client fetches
	// a portal's rows with a row limit, so the session must not modify rec's
	// buffers after passing it, as Arrow's immutability rules say.
	WriteRows(rec arrow.RecordBatch) error
	// Complete ends one statement with its command tag ("SELECT 3", "INSERT 0 1",
	// "CREATE TABLE", ...).
	Complete(tag string) error
	// EmptyQuery reports an empty statement (EmptyQueryResponse).
	EmptyQuery() error
	// Notice sends a NoticeResponse (severity NOTICE/WARNING).
	Notice(severity, code, message string) error
	// ParameterStatus reports a changed session parameter (after SET of a
	// reported parameter such as application_name or TimeZone).
	ParameterStatus(name, value string) error
}
