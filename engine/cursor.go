package engine

import (
	"context"
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Cursors (DECLARE, FETCH, MOVE, CLOSE) as PostgreSQL's. A cursor over a
// SELECT runs its query when it is declared, over the last committed epoch,
// and keeps the result: PostgreSQL's cursors see the snapshot of their
// DECLARE too, and a kept result lets every cursor scroll. A cursor over a
// SUBSCRIBE follows a subscription instead (subscribe.go): it only moves
// forward, and a FETCH waits for changes.
//
// Cursors belong to their session and are used on its goroutine only.

// cursor is one declared cursor.
type cursor struct {
	name     string
	hold     bool
	noScroll bool
	// inTx is set for a cursor declared in the current transaction block.
	inTx bool
	cols []pgwire.Column
	// recs are the kept rows in order; starts[i] is the 0-based index of
	// recs[i]'s first row; n is the row count.
	recs   []arrow.RecordBatch
	starts []int64
	n      int64
	// pos is the position as PostgreSQL counts it: 0 before the first row,
	// n+1 after the last, else on row pos (1-based).
	pos int64
	// sub, for a cursor over a SUBSCRIBE or a subscription, is its feed.
	sub changeFeed
}

func (c *cursor) release() {
	for _, r := range c.recs {
		r.Release()
	}
	c.recs = nil
	if c.sub != nil {
		c.sub.close()
	}
}

// declareCursor runs DECLARE.
func (s *session) declareCursor(ctx context.Context, st *sql.DeclareCursor, q batchQuery, w pgwire.ResultWriter) error {
	if !st.Hold && s.tx == nil {
		return sqlerr.New(sqlerr.NoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks")
	}
	if _, ok := s.cursors[st.Name]; ok {
		return sqlerr.New(sqlerr.DuplicateCursor, "cursor \"%s\" already exists", st.Name)
	}
	c := &cursor{name: st.Name, hold: st.Hold, noScroll: st.NoScroll, inTx: s.tx != nil}
	if st.Subscribe != nil {
		sub, err := s.openFeed(ctx, st.Subscribe)
		if err != nil {
			return err
		}
		c.sub, c.cols, c.noScroll = sub, sub.columns(), true
	} else if err := s.e.keepRows(ctx, st.Query, q, c); err != nil {
		c.release()
		return err
	}
	if s.cursors == nil {
		s.cursors = map[string]*cursor{}
	}
	s.cursors[st.Name] = c
	return w.Complete(st.Tag())
}

// keepRows runs the query of a cursor and keeps its visible columns in c.
func (e *Engine) keepRows(ctx context.Context, rel ir.Rel, q batchQuery, c *cursor) error {
	cols := rel.Columns()
	vis := ir.VisibleColumns(rel)
	visTypes := make([]types.T, len(vis))
	for i, col := range vis {
		c.cols = append(c.cols, pgwire.Column{Name: cols[col].Name, Type: cols[col].Type})
		visTypes[i] = cols[col].Type
	}
	schema := exec.SchemaOf(visTypes)
	return e.runQuery(ctx, rel, q, exec.OutputFunc(func(_ context.Context, m exec.Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Batch.Release()
		rec := m.Batch.Rec
		if rec.NumRows() == 0 {
			return nil
		}
		arrs := make([]arrow.Array, len(vis))
		for i, col := range vis {
			arrs[i] = rec.Column(col)
		}
		c.recs = append(c.recs, array.NewRecordBatch(schema, arrs, rec.NumRows()))
		c.starts = append(c.starts, c.n)
		c.n += rec.NumRows()
		return nil
	}))
}

// lookupCursor returns the cursor name, or a 34000 error.
func (s *session) lookupCursor(name string) (*cursor, error) {
	c := s.cursors[name]
	if c == nil {
		return nil, sqlerr.New(sqlerr.InvalidCursorName, "cursor \"%s\" does not exist", name)
	}
	return c, nil
}

// closeCursor runs CLOSE.
func (s *session) closeCursor(st *sql.CloseCursor, w pgwire.ResultWriter) error {
	if st.Name == "" {
		s.closeCursors(func(*cursor) bool { return true })
		return w.Complete(st.Tag())
	}
	c, err := s.lookupCursor(st.Name)
	if err != nil {
		return err
	}
	c.release()
	delete(s.cursors, st.Name)
	return w.Complete(st.Tag())
}

// closeCursors closes the cursors for which which returns true.
func (s *session) closeCursors(which func(*cursor) bool) {
	for name, c := range s.cursors {
		if which(c) {
			c.release()
			delete(s.cursors, name)
		}
	}
}

// endCursorTransaction closes the cursors a transaction's end closes in
// PostgreSQL: at COMMIT those without HOLD; at ROLLBACK also those declared
// in the transaction. The others no longer belong to a transaction.
func (s *session) endCursorTransaction(commit bool) {
	s.closeCursors(func(c *cursor) bool { return !c.hold || (!commit && c.inTx) })
	for _, c := range s.cursors {
		c.inTx = false
	}
}

// cursorColumns returns the columns a FETCH of st returns (nil for MOVE or
// a cursor that does not exist: the FETCH then fails).
func (s *session) cursorColumns(st *sql.Fetch) []pgwire.Column {
	if c := s.cursors[st.Name]; c != nil && !st.Move {
		return c.cols
	}
	return nil
}

// fetch runs FETCH or MOVE.
func (s *session) fetch(ctx context.Context, st *sql.Fetch, w pgwire.ResultWriter) error {
	c, err := s.lookupCursor(st.Name)
	if err != nil {
		return err
	}
	if c.sub != nil {
		return fetchFeed(ctx, c.sub, st, c.cols, w)
	}
	var out []rowRange
	var n int64
	if err := c.move(st, func(r rowRange) {
		n += r.len()
		if !st.Move {
			out = append(out, r)
		}
	}); err != nil {
		return err
	}
	if st.Move {
		return w.Complete(fmt.Sprintf("MOVE %d", n))
	}
	if err := w.BeginRows(c.cols); err != nil {
		return err
	}
	for _, r := range out {
		if err := c.writeRange(s.e, r, w); err != nil {
			return err
		}
	}
	return w.Complete(fmt.Sprintf("FETCH %d", n))
}

// rowRange is a run of rows: from..to (1-based, inclusive), backward when
// from > to.
type rowRange struct{ from, to int64 }

func (r rowRange) len() int64 {
	if r.from > r.to {
		return r.from - r.to + 1
	}
	return r.to - r.from + 1
}

// errNoScroll is PostgreSQL's error for moving a NO SCROLL cursor back.
var errNoScroll = sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cursor can only scan forward").
	WithHint("Declare it with SCROLL option to enable backward scan.")

// move moves c as st asks, as PostgreSQL's DoPortalRunFetch does, and
// passes emit the rows a FETCH returns.
func (c *cursor) move(st *sql.Fetch, emit func(rowRange)) error {
	forward, count := true, st.Count
	switch st.Direction {
	case sql.FetchForward, sql.FetchBackward:
		forward = st.Direction == sql.FetchForward
		if count < 0 {
			forward, count = !forward, -count
		}
	case sql.FetchAbsolute:
		switch {
		case count > 0:
			if c.pos >= count || c.pos > c.n {
				if err := c.rewind(); err != nil {
					return err
				}
			}
			c.step(true, count-1-c.pos, nil)
			count = 1
		case count < 0:
			c.pos = c.n + 1 // going to the end is a forward move
			if err := c.step(false, -count-1, nil); err != nil {
				return err
			}
			forward, count = false, 1
		default:
			return c.rewind()
		}
	case sql.FetchRelative:
		switch {
		case count > 0:
			c.step(true, count-1, nil)
			count = 1
		case count < 0:
			if err := c.step(false, -count-1, nil); err != nil {
				return err
			}
			forward, count = false, 1
		}
	}
	if count == 0 {
		// Count 0 fetches the current row again, if there is one.
		if c.pos >= 1 && c.pos <= c.n {
			emit(rowRange{c.pos, c.pos})
		}
		return nil
	}
	return c.step(forward, count, emit)
}

// rewind moves c before its first row.
func (c *cursor) rewind() error {
	if c.noScroll && c.pos != 0 {
		return errNoScroll
	}
	c.pos = 0
	return nil
}

// step moves c count rows (count >= 0) forward or backward, passing emit,
// if not nil, the rows it passes over.
func (c *cursor) step(forward bool, count int64, emit func(rowRange)) error {
	if count <= 0 {
		return nil
	}
	if forward {
		got := max(0, min(count, c.n-c.pos))
		if got > 0 && emit != nil {
			emit(rowRange{c.pos + 1, c.pos + got})
		}
		if got < count {
			c.pos = c.n + 1
		} else {
			c.pos += got
		}
		return nil
	}
	if c.noScroll {
		return errNoScroll
	}
	got := max(0, min(count, c.pos-1))
	if got > 0 && emit != nil {
		emit(rowRange{c.pos - 1, c.pos - got})
	}
	if got < count {
		c.pos = 0
	} else {
		c.pos -= got
	}
	return nil
}

// writeRange writes rows r of c to w.
func (c *cursor) writeRange(e *Engine, r rowRange, w pgwire.ResultWriter) error {
	lo, hi := min(r.from, r.to)-1, max(r.from, r.to) // 0-based [lo, hi)
	first := sort.Search(len(c.starts), func(i int) bool { return c.starts[i]+c.recs[i].NumRows() > lo })
	var parts []arrow.RecordBatch
	defer func() {
		for _, p := range parts {
			p.Release()
		}
	}()
	for i := first; i < len(c.recs) && c.starts[i] < hi; i++ {
		from, to := max(lo-c.starts[i], 0), min(hi-c.starts[i], c.recs[i].NumRows())
		if r.from <= r.to {
			parts = append(parts, c.recs[i].NewSlice(from, to))
			continue
		}
		sel := make([]int32, 0, to-from)
		for k := to - 1; k >= from; k-- {
			sel = append(sel, int32(k))
		}
		rec, err := eval.TakeRecord(e.mem, c.recs[i], sel)
		if err != nil {
			return err
		}
		parts = append(parts, rec)
	}
	if r.from > r.to {
		for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
			parts[i], parts[j] = parts[j], parts[i]
		}
	}
	for _, p := range parts {
		if err := w.WriteRows(p); err != nil {
			return err
		}
	}
	return nil
}
