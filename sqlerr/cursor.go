package sqlerr

// The SQLSTATEs of cursors and subscriptions.
const (
	// InvalidCursorName: FETCH, MOVE or CLOSE of a cursor that does not exist.
	InvalidCursorName = "34000"
	// DuplicateCursor: DECLARE of a name already taken.
	DuplicateCursor = "42P03"
	// ConfigurationLimitExceeded: a subscriber's backlog is full.
	ConfigurationLimitExceeded = "53400"
)
