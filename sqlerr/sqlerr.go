// Package sqlerr defines the errors streamsql returns to SQL clients: each
// carries a PostgreSQL SQLSTATE code and, for errors in the statement text, the
// 1-based character position PostgreSQL would report.
//
// Every package may create these errors; pgwire turns them into ErrorResponse
// messages. An error that is not an *Error reaches the client as XX000
// (internal_error). This package imports only the standard library.
package sqlerr

import (
	"errors"
	"fmt"
)

// SQLSTATE codes used by streamsql.
const (
	SuccessfulCompletion       = "00000"
	FeatureNotSupported        = "0A000"
	CardinalityViolation       = "21000"
	DataException              = "22000"
	StringDataRightTruncation  = "22001"
	NumericValueOutOfRange     = "22003"
	InvalidDatetimeFormat      = "22007"
	DatetimeFieldOverflow      = "22008"
	DivisionByZero             = "22012"
	InvalidParameterValue      = "22023"
	InvalidTextRepresentation  = "22P02"
	CharacterNotInRepertoire   = "22021"
	InvalidAuthorization       = "28000"
	NotNullViolation           = "23502"
	UniqueViolation            = "23505"
	InvalidTransactionState    = "25000"
	ActiveSQLTransaction       = "25001"
	NoActiveSQLTransaction     = "25P01"
	InFailedSQLTransaction     = "25P02"
	ReadOnlySQLTransaction     = "25006"
	IdleInTransactionTimeout   = "25P03"
	InvalidSavepoint           = "3B001"
	SerializationFailure       = "40001"
	CantChangeRuntimeParam     = "55P02"
	InvalidSQLStatementName    = "26000"
	InvalidCatalogName         = "3D000"
	InvalidSchemaName          = "3F000"
	DuplicateSchema            = "42P06"
	DuplicateDatabase          = "42P04"
	InvalidObjectDefinition    = "42P17"
	SyntaxError                = "42601"
	InsufficientPrivilege      = "42501"
	UndefinedColumn            = "42703"
	UndefinedFunction          = "42883"
	AmbiguousFunction          = "42725"
	UndefinedTable             = "42P01"
	UndefinedObject            = "42704"
	DuplicateTable             = "42P07"
	DuplicateObject            = "42710"
	DuplicateAlias             = "42712"
	DuplicateColumn            = "42701"
	AmbiguousColumn            = "42702"
	DatatypeMismatch           = "42804"
	CannotCoerce               = "42846"
	GroupingError              = "42803"
	WrongObjectType            = "42809"
	InvalidColumnReference     = "42P10"
	InvalidTableDefinition     = "42P16"
	IndeterminateDatatype      = "42P18"
	NullValueNotAllowed        = "22004"
	InvalidRegularExpression   = "2201B"
	InvalidRowCountInLimit     = "2201W"
	DependentObjectsStillExist = "2BP01"
	ProtocolViolation          = "08P01"
	ConnectionFailure          = "08006"
	BadCopyFileFormat          = "22P04"
	QueryCanceled              = "57014"
	AdminShutdown              = "57P01"
	ObjectInUse                = "55006"
	IOError                    = "58030"
	UndefinedFile              = "58P01"
	DiskFull                   = "53100"
	OutOfMemory                = "53200"
	StatementTooComplex        = "54001"
	TooManyArguments           = "54023"
	InternalError              = "XX000"
)

// ObjectNotInPrerequisiteState: the object is not ready for the operation
// (a materialized view still being backfilled).
const ObjectNotInPrerequisiteState = "55000"

// Error is an error with a SQLSTATE. Position is the 1-based character offset
// into the statement text the error refers to, or 0.
type Error struct {
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position int
}

func (e *Error) Error() string { return e.Message }

// New returns an error with the given code and message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// At returns a copy of e that points at the 1-based position pos, unless e
// already carries a position.
func (e *Error) At(pos int) *Error {
	if e.Position != 0 || pos <= 0 {
		return e
	}
	c := *e
	c.Position = pos
	return &c
}

// WithHint returns a copy of e with a hint.
func (e *Error) WithHint(format string, args ...any) *Error {
	c := *e
	c.Hint = fmt.Sprintf(format, args...)
	return &c
}

// WithDetail returns a copy of e with a detail.
func (e *Error) WithDetail(detail string) *Error {
	c := *e
	c.Detail = detail
	return &c
}

// Unsupported returns the 0A000 error for a feature streamsql does not have.
func Unsupported(format string, args ...any) *Error {
	return &Error{Code: FeatureNotSupported, Message: fmt.Sprintf(format, args...) + " is not supported"}
}

// Code returns the SQLSTATE of err: its own if it is (or wraps) an *Error,
// otherwise XX000.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return InternalError
}

// Wrap converts any error into an *Error, keeping the SQLSTATE of a wrapped
// *Error and using XX000 otherwise.
func Wrap(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: InternalError, Message: err.Error()}
}
