package sql

import (
	"math"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// DeclareCursor is DECLARE name [NO SCROLL | SCROLL] CURSOR [WITH HOLD] FOR
// query, where query is a SELECT or a SUBSCRIBE.
type DeclareCursor struct {
	Name string
	// Hold cursors outlive the transaction that declared them.
	Hold bool
	// NoScroll cursors only move forward.
	NoScroll bool
	// Query is the SELECT, or nil for a SUBSCRIBE (Subscribe).
	Query     ir.Rel
	Subscribe *Subscribe
}

// FetchAll is Fetch.Count for ALL.
const FetchAll = math.MaxInt64

// FetchDirection is the direction of a FETCH or MOVE.
type FetchDirection uint8

const (
	FetchForward FetchDirection = iota
	FetchBackward
	FetchAbsolute
	FetchRelative
)

// Fetch is FETCH or MOVE: [FORWARD | BACKWARD | ABSOLUTE | RELATIVE] count
// (NEXT, PRIOR, FIRST, LAST and ALL are counts and directions) FROM name,
// with Materialize's WITH (timeout = '...') for SUBSCRIBE cursors.
type Fetch struct {
	Name      string
	Move      bool
	Direction FetchDirection
	// Count is the number of rows (FetchAll: ALL), or the row of ABSOLUTE
	// and RELATIVE; negative counts go the other way, as in PostgreSQL.
	Count int64
	// Timeout is how long a FETCH of a subscription waits for its first
	// row (a negative value waits forever; 0 does not wait).
	Timeout int64 // microseconds
}

// CloseCursor is CLOSE name, or CLOSE ALL (Name "").
type CloseCursor struct{ Name string }

func (*DeclareCursor) Tag() string { return "DECLARE CURSOR" }
func (f *Fetch) Tag() string {
	if f.Move {
		return "MOVE"
	}
	return "FETCH"
}
func (c *CloseCursor) Tag() string {
	if c.Name == "" {
		return "CLOSE CURSOR ALL"
	}
	return "CLOSE CURSOR"
}

// The cursor options of PostgreSQL's DeclareCursorStmt.
const (
	cursorOptBinary      = 0x1
	cursorOptNoScroll    = 0x4
	cursorOptInsensitive = 0x8
	cursorOptHold        = 0x20
)

func (b *binder) bindDeclareCursor(s *pg_query.DeclareCursorStmt) (ir.Statement, error) {
	if s.Options&cursorOptBinary != 0 {
		return nil, sqlerr.Unsupported("BINARY cursors")
	}
	inner, err := b.bindStatement(s.Query)
	if err != nil {
		return nil, err
	}
	sel, ok := inner.(*ir.Select)
	if !ok {
		return nil, sqlerr.New(sqlerr.SyntaxError, "DECLARE CURSOR needs a SELECT or a SUBSCRIBE, not %s", inner.Tag())
	}
	return &DeclareCursor{
		Name:     s.Portalname,
		Hold:     s.Options&cursorOptHold != 0,
		NoScroll: s.Options&cursorOptNoScroll != 0,
		Query:    sel.Query,
	}, nil
}

func bindFetch(s *pg_query.FetchStmt) *Fetch {
	f := &Fetch{Name: s.Portalname, Move: s.Ismove, Count: s.HowMany, Timeout: -1}
	switch s.Direction {
	case pg_query.FetchDirection_FETCH_BACKWARD:
		f.Direction = FetchBackward
	case pg_query.FetchDirection_FETCH_ABSOLUTE:
		f.Direction = FetchAbsolute
	case pg_query.FetchDirection_FETCH_RELATIVE:
		f.Direction = FetchRelative
	}
	return f
}
