package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Session windows in FROM, in the streaming dialect:
//
//	SESSION(rel, ts, gap [, partition_col ...])
//
// rel names a table, source, materialized view or CTE; ts is one of its
// timestamp or timestamptz columns; gap is a positive constant interval
// without months; the partition columns are columns of rel. It adds
// window_start and window_end to rel's columns (see SessionWindow).

const sessionUsage = "SESSION(relation, time_column, gap [, partition_column ...])"

func (b *binder) bindSessionWindow(rf *pg_query.RangeFunction, f *pg_query.FuncCall) (ir.Rel, *scope, error) {
	if len(f.Args) < 3 {
		return nil, nil, b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction,
			"SESSION takes at least 3 arguments: %s", sessionUsage))
	}
	if rf.Ordinality || rf.Lateral {
		return nil, nil, b.errAt(f.Location, sqlerr.Unsupported("SESSION with ORDINALITY or LATERAL"))
	}
	alias := ""
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	input, sc, err := b.timeWindowInput(f.Args[0], "session", alias)
	if err != nil {
		return nil, nil, err
	}
	ctx := &exprCtx{scope: sc, clause: "SESSION"}
	ref, err := b.bindExpr(ctx, f.Args[1])
	if err != nil {
		return nil, nil, err
	}
	ts, ok := ref.(*ir.InputRef)
	if !ok || (ts.T.Kind != types.Timestamp && ts.T.Kind != types.TimestampTZ) {
		return nil, nil, b.errAt(exprLocation(f.Args[1]), sqlerr.New(sqlerr.DatatypeMismatch,
			"the time column of SESSION must be a column of type timestamp or timestamp with time zone, not %s", ref.Type()))
	}
	gap, err := b.windowInterval(f.Args[2], "session")
	if err != nil {
		return nil, nil, err
	}
	if gap <= 0 {
		return nil, nil, b.errAt(exprLocation(f.Args[2]), sqlerr.New(sqlerr.InvalidParameterValue,
			"the gap of SESSION must be positive"))
	}
	var parts []int
	for _, a := range f.Args[3:] {
		e, err := b.bindExpr(ctx, a)
		if err != nil {
			return nil, nil, err
		}
		col, ok := e.(*ir.InputRef)
		if !ok {
			return nil, nil, b.errAt(exprLocation(a), sqlerr.Unsupported(
				"expressions as partition columns of SESSION (partition by columns of its relation)"))
		}
		parts = append(parts, col.Index)
	}
	cols := append([]ir.Column(nil), input.Columns()...)
	cols = append(cols, ir.Column{Name: "window_start", Type: ts.T}, ir.Column{Name: "window_end", Type: ts.T})
	rel := &ir.SessionWindow{Input: input, TimeCol: ts.Index, Gap: gap, PartitionCols: parts, Cols: cols}
	out, err := b.windowScope(rf, f, sc, alias, "session", ts.T)
	if err != nil {
		return nil, nil, err
	}
	return rel, out, nil
}

// windowScope is the scope of a time window over a relation of scope sc:
// sc's columns (renamed to alias's table, if any) then window_start and
// window_end of type t, with the alias's column names applied.
func (b *binder) windowScope(rf *pg_query.RangeFunction, f *pg_query.FuncCall, sc *scope, alias, fn string, t types.T) (*scope, error) {
	table := alias
	if table == "" {
		table = fn
	}
	out := &scope{cols: append([]scopeCol(nil), sc.cols...)}
	for i := range out.cols {
		if alias != "" {
			out.cols[i].table = alias
		}
	}
	out.cols = append(out.cols,
		scopeCol{table: table, name: "window_start", t: t},
		scopeCol{table: table, name: "window_end", t: t})
	if rf.Alias != nil {
		if err := applyColumnAliases(out, rf.Alias.Colnames); err != nil {
			return nil, b.errAt(f.Location, err.(*sqlerr.Error))
		}
	}
	return out, nil
}
