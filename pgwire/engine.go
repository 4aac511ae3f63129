package pgwire

import (
	"context"

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

// Session runs one client's statements. Its methods are called from one goroutine.
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
	// TxStatus is the transaction status for ReadyForQuery: 'I', 'T' or 'E'.
	TxStatus() byte
	// Close releases the session; it is called exactly once, also when the client
	// disappears mid-query.
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
	// BeginRows starts a row-returning result (sends RowDescription).
	BeginRows(cols []Column) error
	// WriteRows sends every row of rec as a text-format DataRow. rec's columns are
	// the Arrow types of the Columns given to BeginRows. WriteRows does not retain
	// or release rec.
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
