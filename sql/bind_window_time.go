package sql

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Time windows in FROM, in the streaming dialect:
//
//	TUMBLE(rel, ts, size [, offset])
//	HOP(rel, ts, slide, size [, offset])
//
// rel names a table, source, materialized view or CTE; ts is one of its
// timestamp or timestamptz columns; the sizes are constant intervals without
// months. Both add window_start and window_end to rel's columns. TUMBLE is a
// projection (window_start = tumble_start(ts, size, offset)); HOP repeats
// every row once per window that holds it.

// isTimeWindow reports whether name is a time window table function.
func isTimeWindow(name string) bool { return name == "tumble" || name == "hop" || name == "session" }

func (b *binder) bindTimeWindow(rf *pg_query.RangeFunction, f *pg_query.FuncCall, name string) (ir.Rel, *scope, error) {
	if name == "session" {
		return b.bindSessionWindow(rf, f)
	}
	want := 3
	if name == "hop" {
		want = 4
	}
	if len(f.Args) != want && len(f.Args) != want+1 {
		return nil, nil, b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction,
			"%s takes %d or %d arguments: %s", strings.ToUpper(name), want, want+1, timeWindowUsage(name)))
	}
	if rf.Ordinality || rf.Lateral {
		return nil, nil, b.errAt(f.Location, sqlerr.Unsupported("%s with ORDINALITY or LATERAL", strings.ToUpper(name)))
	}
	alias := ""
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	input, sc, err := b.timeWindowInput(f.Args[0], name, alias)
	if err != nil {
		return nil, nil, err
	}
	ref, err := b.bindExpr(&exprCtx{scope: sc, clause: strings.ToUpper(name)}, f.Args[1])
	if err != nil {
		return nil, nil, err
	}
	col, ok := ref.(*ir.InputRef)
	if !ok || (col.T.Kind != types.Timestamp && col.T.Kind != types.TimestampTZ) {
		return nil, nil, b.errAt(exprLocation(f.Args[1]), sqlerr.New(sqlerr.DatatypeMismatch,
			"the time column of %s must be a column of type timestamp or timestamp with time zone, not %s", strings.ToUpper(name), ref.Type()))
	}
	var ivs []int64
	for _, a := range f.Args[2:] {
		iv, err := b.windowInterval(a, name)
		if err != nil {
			return nil, nil, err
		}
		ivs = append(ivs, iv)
	}
	offset := int64(0)
	if len(ivs) == want-1 {
		offset = ivs[len(ivs)-1]
		ivs = ivs[:len(ivs)-1]
	}
	for i, iv := range ivs {
		if iv <= 0 {
			return nil, nil, b.errAt(exprLocation(f.Args[2+i]), sqlerr.New(sqlerr.InvalidParameterValue,
				"the window size and slide of %s must be positive", strings.ToUpper(name)))
		}
	}
	cols := append([]ir.Column(nil), input.Columns()...)
	cols = append(cols, ir.Column{Name: "window_start", Type: col.T}, ir.Column{Name: "window_end", Type: col.T})
	var rel ir.Rel
	if name == "tumble" {
		rel = tumbleProject(input, col, ivs[0], offset, cols)
	} else {
		slide, size := ivs[0], ivs[1]
		if size%slide != 0 {
			return nil, nil, b.errAt(exprLocation(f.Args[3]), sqlerr.New(sqlerr.InvalidParameterValue,
				"the window size of HOP must be a multiple of its slide"))
		}
		rel = &ir.HopWindow{Input: input, TimeCol: col.Index, Slide: slide, Size: size, Offset: offset, Cols: cols}
	}
	table := alias
	if table == "" {
		table = name
	}
	out := &scope{cols: append([]scopeCol(nil), sc.cols...)}
	for i := range out.cols {
		if alias != "" {
			out.cols[i].table = alias
		}
	}
	out.cols = append(out.cols,
		scopeCol{table: table, name: "window_start", t: col.T},
		scopeCol{table: table, name: "window_end", t: col.T})
	if rf.Alias != nil {
		if err := applyColumnAliases(out, rf.Alias.Colnames); err != nil {
			return nil, nil, b.errAt(f.Location, err.(*sqlerr.Error))
		}
	}
	return rel, out, nil
}

func timeWindowUsage(name string) string {
	if name == "hop" {
		return "HOP(relation, time_column, slide, size [, offset])"
	}
	return "TUMBLE(relation, time_column, size [, offset])"
}

// timeWindowInput binds the relation argument of a time window: the name of
// a CTE, table, source or materialized view, or a parenthesized subquery.
func (b *binder) timeWindowInput(arg *pg_query.Node, fn, alias string) (ir.Rel, *scope, error) {
	if sl := arg.GetSubLink(); sl != nil && sl.SubLinkType == pg_query.SubLinkType_EXPR_SUBLINK {
		sub, err := b.bindQuery(sl.Subselect.GetSelectStmt())
		if err != nil {
			return nil, nil, err
		}
		return sub, derivedScope(sub, alias), nil
	}
	cr := arg.GetColumnRef()
	if cr == nil || len(cr.Fields) == 0 || len(cr.Fields) > 2 {
		return nil, nil, b.errAt(exprLocation(arg), sqlerr.New(sqlerr.SyntaxError,
			"the first argument of %s must name a table, source, materialized view or CTE, or be a subquery", strings.ToUpper(fn)))
	}
	rv := &pg_query.RangeVar{Location: cr.Location, Inh: true}
	for i, fl := range cr.Fields {
		s := fl.GetString_()
		if s == nil {
			return nil, nil, b.errAt(cr.Location, sqlerr.New(sqlerr.SyntaxError, "malformed relation name in %s", strings.ToUpper(fn)))
		}
		if i == len(cr.Fields)-1 {
			rv.Relname = s.Sval
		} else {
			rv.Schemaname = s.Sval
		}
	}
	if alias != "" {
		rv.Alias = &pg_query.Alias{Aliasname: alias}
	}
	if rel, sc, ok := b.cteRef(rv); ok {
		return rel, sc, nil
	}
	rel, err := b.lookup(rv)
	if err != nil {
		return nil, nil, err
	}
	if rel.Kind == catalog.View {
		return b.expandView(rel, rv)
	}
	return &ir.Scan{Relation: rel, Alias: alias}, b.tableScope(rel, alias), nil
}

// windowInterval binds a constant interval argument of a time window and
// returns it in microseconds.
func (b *binder) windowInterval(n *pg_query.Node, fn string) (int64, error) {
	e, err := b.bindExpr(&exprCtx{clause: strings.ToUpper(fn)}, n)
	if err != nil {
		return 0, err
	}
	var iv types.IntervalValue
	switch c := e.(type) {
	case *ir.Const:
		switch {
		case c.T.Kind == types.Interval && !c.Value.Null:
			iv = c.Value.Ivl
		case c.T.Kind == types.Unknown && !c.Value.Null:
			d, err := types.ParseText(types.IntervalT, c.Value.S)
			if err != nil {
				return 0, b.errAt(exprLocation(n), sqlerr.Wrap(err))
			}
			iv = d.Ivl
		default:
			return 0, b.notWindowInterval(n, fn)
		}
	case *ir.Cast:
		arg, ok := c.Arg.(*ir.Const)
		if !ok || c.T.Kind != types.Interval || arg.Value.Null {
			return 0, b.notWindowInterval(n, fn)
		}
		d, err := types.ParseText(types.IntervalT, arg.Value.Text(arg.T))
		if err != nil {
			return 0, b.errAt(exprLocation(n), sqlerr.Wrap(err))
		}
		iv = d.Ivl
	default:
		return 0, b.notWindowInterval(n, fn)
	}
	if iv.Months != 0 {
		return 0, b.errAt(exprLocation(n), sqlerr.Unsupported("intervals with months or years in %s (use days)", strings.ToUpper(fn)))
	}
	return int64(iv.Days)*microsPerDay + iv.Micros, nil
}

const microsPerDay = 24 * 3600 * 1_000_000

func (b *binder) notWindowInterval(n *pg_query.Node, fn string) error {
	return b.errAt(exprLocation(n), sqlerr.New(sqlerr.DatatypeMismatch,
		"the sizes of %s must be constant intervals, such as INTERVAL '10 seconds'", strings.ToUpper(fn)))
}

// tumbleProject is input with window_start and window_end appended.
func tumbleProject(input ir.Rel, ts *ir.InputRef, size, offset int64, cols []ir.Column) ir.Rel {
	p := &ir.Project{Input: input, Cols: cols}
	for i, c := range input.Columns() {
		p.Exprs = append(p.Exprs, &ir.InputRef{Index: i, T: c.Type, Name: c.Name})
	}
	sizeC := &ir.Const{Value: types.DInterval(types.IntervalValue{Micros: size}), T: types.IntervalT}
	offC := &ir.Const{Value: types.DInterval(types.IntervalValue{Micros: offset}), T: types.IntervalT}
	start := &ir.Call{Fn: ir.FnTumbleStart, Args: []ir.Expr{ts, sizeC, offC}, T: ts.T}
	p.Exprs = append(p.Exprs, start, &ir.Call{Fn: ir.FnAdd, Args: []ir.Expr{start, sizeC}, T: ts.T})
	return p
}
