package sql

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Window functions are bound in two steps. While the select list and ORDER
// BY are bound, each call f(...) OVER (...) is recorded in the query's
// windowCollector with its arguments and window over the FROM scope, and
// stands in the expression as a winRef. Once the aggregation (and the
// scalar subqueries of the select list) is in place, placeWindows rewrites
// the recorded expressions over it, stacks one Window per distinct PARTITION
// BY / ORDER BY, and turns every winRef into a reference to its output
// column. So window functions run after GROUP BY and HAVING and may wrap
// aggregates (rank() OVER (ORDER BY sum(x))), as in PostgreSQL.

// windowingError is SQLSTATE 42P20 (windowing_error).
const windowingError = "42P20"

// PostgreSQL's FRAMEOPTION_* bits of WindowDef.FrameOptions.
const (
	frameNonDefault         = 0x00001
	frameRange              = 0x00002
	frameRows               = 0x00004
	frameGroups             = 0x00008
	frameStartUnboundedPrec = 0x00020
	frameEndUnboundedFoll   = 0x00100
	frameStartCurrentRow    = 0x00200
	frameEndCurrentRow      = 0x00400
	frameStartOffsetPrec    = 0x00800
	frameEndOffsetPrec      = 0x01000
	frameStartOffsetFoll    = 0x02000
	frameEndOffsetFoll      = 0x04000
	frameExcludeCurrentRow  = 0x08000
	frameExcludeGroup       = 0x10000
	frameExcludeTies        = 0x20000
	frameOptionsClauseGiven = frameNonDefault
)

// windowFunctions are the window functions that are not aggregates.
var windowFunctions = map[string]bool{
	ir.WinRowNumber: true, ir.WinRank: true, ir.WinDenseRank: true, ir.WinPercentRank: true, ir.WinCumeDist: true,
	ir.WinNtile: true, ir.WinLag: true, ir.WinLead: true, ir.WinFirstValue: true, ir.WinLastValue: true, ir.WinNthValue: true,
}

// hypotheticalSet are the window functions that are also ordered-set
// aggregates in PostgreSQL (rank(x) WITHIN GROUP (ORDER BY ...)).
var hypotheticalSet = map[string]bool{ir.WinRank: true, ir.WinDenseRank: true, ir.WinPercentRank: true, ir.WinCumeDist: true}

// windowCollector records the window function calls of one query level.
type windowCollector struct {
	// named are the windows of the WINDOW clause, bound when first
	// referenced (or at the end, to report their errors).
	named []*namedWindow
	calls []windowRecord
}

// namedWindow is one WINDOW clause entry.
type namedWindow struct {
	def  *pg_query.WindowDef
	spec *windowSpec
}

// windowSpec is a bound window: PARTITION BY, ORDER BY and frame, over the
// FROM scope.
type windowSpec struct {
	part      []ir.Expr
	partLocs  []int32
	order     []ir.WindowKey
	orderLocs []int32
	frame     ir.WindowFrame
	// hasFrame is set when the window has a frame clause of its own.
	hasFrame bool
	// sessionGap (microseconds) is set by SESSION WITH GAP: partitions are
	// split into sessions of the ORDER BY time.
	sessionGap int64
}

// windowRecord is a recorded call and its window.
type windowRecord struct {
	call     ir.WindowCall
	argLocs  []int32
	spec     *windowSpec
	loc      int32
	filterAt int32
	sig      string
}

// winRef stands for window call Index of the query until placeWindows
// turns it into a column reference. sig renders the call and its window,
// so that the same call in the select list and in ORDER BY is one column.
type winRef struct {
	Index int
	T     types.T
	sig   string
}

func (e *winRef) Type() types.T  { return e.T }
func (e *winRef) String() string { return e.sig }

// newWindowCollector returns the collector of a query with the given WINDOW
// clause. A window name defined twice is an error.
func (b *binder) newWindowCollector(clause []*pg_query.Node) (*windowCollector, error) {
	wc := &windowCollector{}
	for _, n := range clause {
		def := n.GetWindowDef()
		if def == nil {
			continue
		}
		for _, w := range wc.named {
			if w.def.Name == def.Name {
				return nil, b.errAt(def.Location, sqlerr.New(windowingError, "window \"%s\" is already defined", def.Name))
			}
		}
		wc.named = append(wc.named, &namedWindow{def: def})
	}
	return wc, nil
}

// used reports whether the query has window function calls.
func (wc *windowCollector) used() bool { return wc != nil && len(wc.calls) > 0 }

// finishWindows binds the WINDOW clause entries no call referenced, so that
// their errors are reported as PostgreSQL does.
func (b *binder) finishWindows(ctx *exprCtx, wc *windowCollector) error {
	for i, w := range wc.named {
		if w.spec == nil {
			if _, err := b.bindNamedWindow(ctx, wc, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// bindWindowCall binds f(...) OVER (...) in ctx and returns its winRef.
func (b *binder) bindWindowCall(ctx *exprCtx, name string, f *pg_query.FuncCall) (ir.Expr, error) {
	switch {
	case ctx.wins == nil:
		return nil, b.errAt(f.Location, sqlerr.New(windowingError, "window functions are not allowed in %s", windowClauseName(ctx)))
	case ctx.inAgg:
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.GroupingError, "aggregate function calls cannot contain window function calls"))
	case ctx.inWindow:
		return nil, b.errAt(f.Location, sqlerr.New(windowingError, "window function calls cannot be nested"))
	}
	isAgg := ir.AggregateNames[name]
	switch {
	case unsupportedAggregates[name]:
		return nil, b.errAt(f.Location, sqlerr.Unsupported("aggregate function %s", name))
	case !isAgg && !windowFunctions[name]:
		if ir.FunctionOverloads(name) != nil || functionAliases[name] != "" {
			return nil, b.errAt(f.Location, sqlerr.New(sqlerr.WrongObjectType, "OVER specified, but %s is not a window function nor an aggregate function", name))
		}
		args, err := b.bindExprs(&exprCtx{scope: ctx.scope, clause: ctx.clause}, f.Args)
		if err != nil {
			return nil, err
		}
		return nil, b.errAt(f.Location, noSuchFunction(name, args))
	case f.AggDistinct:
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.FeatureNotSupported, "DISTINCT is not implemented for window functions"))
	case len(f.AggOrder) > 0 && isAgg:
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.FeatureNotSupported, "aggregate ORDER BY is not implemented for window functions"))
	case f.AggFilter != nil && !isAgg:
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.FeatureNotSupported, "FILTER is not implemented for non-aggregate window functions"))
	case f.AggStar && name != ir.AggCount:
		return nil, b.errAt(f.Location, sqlerr.New(sqlerr.SyntaxError, "%s(*) is not allowed", name))
	}
	inner := *ctx
	inner.inWindow = true
	rec := windowRecord{loc: f.Location}
	for _, a := range f.Args {
		e, err := b.bindExpr(&inner, a)
		if err != nil {
			return nil, err
		}
		rec.call.Args = append(rec.call.Args, e)
		rec.argLocs = append(rec.argLocs, exprLocation(a))
	}
	var err error
	if isAgg {
		err = b.windowAggregate(&rec, name, f)
	} else {
		err = b.windowFunction(&rec, name, f)
	}
	if err != nil {
		return nil, err
	}
	if f.AggFilter != nil {
		fctx := &exprCtx{scope: ctx.scope, aggs: ctx.aggs, clause: "FILTER", subs: ctx.subs}
		filter, err := b.bindExpr(fctx, f.AggFilter)
		if err != nil {
			return nil, err
		}
		if rec.call.Filter, err = b.requireBool(filter, "argument of FILTER", f.Location); err != nil {
			return nil, err
		}
		rec.filterAt = exprLocation(f.AggFilter)
	}
	if rec.spec, err = b.bindOver(ctx, ctx.wins, f.Over); err != nil {
		return nil, err
	}
	if !ir.IsRanking(rec.call.Func) && rec.call.Func != ir.WinLag && rec.call.Func != ir.WinLead {
		rec.call.Frame = rec.spec.frame
	}
	if b.takeNullTreatment(f.Over.Location) {
		switch rec.call.Func {
		case ir.WinLag, ir.WinLead, ir.WinFirstValue, ir.WinLastValue, ir.WinNthValue:
			rec.call.IgnoreNulls = true
		default:
			return nil, b.errAt(f.Location, sqlerr.New(sqlerr.FeatureNotSupported,
				"IGNORE NULLS is supported for lag, lead, first_value, last_value and nth_value, not %s", name))
		}
	}
	rec.sig = rec.call.String() + " OVER (" + rec.spec.String() + ")"
	if rec.call.IgnoreNulls {
		rec.sig += " IGNORE NULLS"
	}
	wc := ctx.wins
	for i, r := range wc.calls {
		if r.sig == rec.sig {
			return &winRef{Index: i, T: r.call.T, sig: r.sig}, nil
		}
	}
	wc.calls = append(wc.calls, rec)
	return &winRef{Index: len(wc.calls) - 1, T: rec.call.T, sig: rec.sig}, nil
}

// windowClauseName names the clause of ctx in "window functions are not
// allowed in ..." as PostgreSQL does.
func windowClauseName(ctx *exprCtx) string {
	switch ctx.clause {
	case "":
		return "this context"
	case "FROM":
		return "functions in FROM"
	}
	if strings.HasPrefix(ctx.clause, "window ") {
		return "window definitions"
	}
	return ctx.clause
}

// windowAggregates are the aggregates the window operator computes over
// frames (first_value and last_value are window functions too).
var windowAggregates = map[string]bool{ir.AggCount: true, ir.AggSum: true, ir.AggAvg: true, ir.AggMin: true, ir.AggMax: true,
	ir.WinFirstValue: true, ir.WinLastValue: true, ir.AggBoolAnd: true, ir.AggBoolOr: true, ir.AggEvery: true,
	ir.AggStddev: true, ir.AggStddevSamp: true, ir.AggStddevPop: true, ir.AggVariance: true, ir.AggVarSamp: true, ir.AggVarPop: true,
	ir.AggArrayAgg: true, ir.AggStringAgg: true, ir.AggApproxCountDistinct: true}

// windowAggregate resolves an aggregate used as a window function.
func (b *binder) windowAggregate(rec *windowRecord, name string, f *pg_query.FuncCall) error {
	c := &rec.call
	c.Func = name
	if f.AggStar {
		c.Func, c.T = ir.AggCountStar, types.Int64T
		return nil
	}
	if !windowAggregates[name] {
		return b.errAt(f.Location, sqlerr.Unsupported("aggregate function %s as a window function", name))
	}
	if name == ir.AggStringAgg {
		return b.windowStringAgg(c, f)
	}
	if len(c.Args) != 1 {
		return b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(c.Args)))
	}
	c.Args[0] = b.defaultType(c.Args[0])
	var err error
	if c.T, err = aggResultType(name, c.Args[0].Type()); err != nil {
		return b.errAt(f.Location, err.(*sqlerr.Error))
	}
	return nil
}

// windowStringAgg resolves string_agg(value, separator) over a window: text
// values and a constant separator.
func (b *binder) windowStringAgg(c *ir.WindowCall, f *pg_query.FuncCall) error {
	if len(c.Args) != 2 {
		return b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction, "function string_agg with %d arguments does not exist", len(c.Args)))
	}
	for i := range c.Args {
		a, err := b.coerce(b.defaultType(c.Args[i]), types.TextT, f.Location)
		if err != nil {
			return err
		}
		c.Args[i] = a
	}
	if _, ok := c.Args[1].(*ir.Const); !ok {
		return b.errAt(f.Location, sqlerr.Unsupported("string_agg as a window function with a separator that is not a constant"))
	}
	c.T = types.TextT
	return nil
}

// windowFunction resolves a window function's arguments and result type.
func (b *binder) windowFunction(rec *windowRecord, name string, f *pg_query.FuncCall) error {
	c := &rec.call
	c.Func = name
	args := c.Args
	noFunc := func() error { return b.errAt(f.Location, noSuchFunction(name, args)) }
	// intArg converts argument i to integer, as PostgreSQL's int4
	// parameters take it (implicitly), and requires it to be constant.
	intArg := func(i int, what string) error {
		if _, ok := ir.ImplicitCastCost(args[i].Type(), types.Int32T); !ok && args[i].Type().Kind != types.Unknown {
			return noFunc()
		}
		e, err := b.castTo(args[i], types.Int32T, rec.argLocs[i], false)
		if err != nil {
			return err
		}
		if !constantExpr(e) {
			return b.errAt(rec.argLocs[i], sqlerr.Unsupported("%s with a non-constant %s", name, what))
		}
		args[i] = e
		return nil
	}
	// value resolves a polymorphic value argument.
	value := func(ts ...int) (types.T, error) {
		es := make([]ir.Expr, len(ts))
		known := false
		for k, i := range ts {
			es[k] = args[i]
			known = known || args[i].Type().Kind != types.Unknown
		}
		if !known {
			return types.T{}, sqlerr.New(sqlerr.DatatypeMismatch, "could not determine polymorphic type because input has type unknown")
		}
		t, err := b.commonType(es, name, f.Location)
		if err != nil {
			return types.T{}, noFunc()
		}
		for _, i := range ts {
			if args[i].Type().Kind == types.Unknown {
				// An untyped literal is read as t; a bad one is its error.
				if args[i], err = b.castTo(args[i], t, rec.argLocs[i], false); err != nil {
					return types.T{}, err
				}
			} else if args[i], err = b.coerce(args[i], t, rec.argLocs[i]); err != nil {
				return types.T{}, noFunc()
			}
		}
		return t, nil
	}
	var err error
	switch name {
	case ir.WinRowNumber, ir.WinRank, ir.WinDenseRank, ir.WinPercentRank, ir.WinCumeDist:
		if len(args) > 0 {
			if hypotheticalSet[name] {
				return b.errAt(f.Location, sqlerr.New(sqlerr.WrongObjectType, "WITHIN GROUP is required for ordered-set aggregate %s", name))
			}
			return noFunc()
		}
		c.T = types.Int64T
		if name == ir.WinPercentRank || name == ir.WinCumeDist {
			c.T = types.Float64T
		}
	case ir.WinNtile:
		if len(args) != 1 {
			return noFunc()
		}
		if err = intArg(0, "argument"); err != nil {
			return err
		}
		c.T = types.Int32T
	case ir.WinLag, ir.WinLead:
		if len(args) < 1 || len(args) > 3 {
			return noFunc()
		}
		if len(args) >= 2 {
			if err = intArg(1, "offset"); err != nil {
				return err
			}
		}
		vals := []int{0}
		if len(args) == 3 {
			vals = append(vals, 2)
		}
		if c.T, err = value(vals...); err != nil {
			return err
		}
		// Always three arguments: value, offset, default.
		for len(args) < 3 {
			if len(args) == 1 {
				args = append(args, &ir.Const{Value: types.DInt(1), T: types.Int32T})
			} else {
				args = append(args, &ir.Const{Value: types.Null, T: c.T})
			}
		}
	case ir.WinFirstValue, ir.WinLastValue:
		if len(args) != 1 {
			return noFunc()
		}
		if c.T, err = value(0); err != nil {
			return err
		}
	case ir.WinNthValue:
		if len(args) != 2 {
			return noFunc()
		}
		if err = intArg(1, "n"); err != nil {
			return err
		}
		if c.T, err = value(0); err != nil {
			return err
		}
	}
	c.Args = args
	return nil
}

// constantExpr reports whether e has no column references: its value is
// the same for every row.
func constantExpr(e ir.Expr) bool {
	ok := true
	ir.Walk(e, func(x ir.Expr) bool {
		switch x.(type) {
		case *ir.InputRef, *aggRef, *outerRef, *scalarRef, *winRef, *srfRef:
			ok = false
		case *ir.Call:
			if x.(*ir.Call).Fn == ir.FnNow {
				// Constant within a statement, but a view must not
				// freeze it.
				ok = false
			}
		}
		return ok
	})
	return ok
}

// bindOver binds the window of an OVER clause: a name (OVER w), or a
// specification that may refine a named window (OVER (w ORDER BY ...)).
func (b *binder) bindOver(ctx *exprCtx, wc *windowCollector, over *pg_query.WindowDef) (*windowSpec, error) {
	if over.Name != "" {
		i := wc.find(over.Name, len(wc.named))
		if i < 0 {
			return nil, b.errAt(over.Location, sqlerr.New(sqlerr.UndefinedObject, "window \"%s\" does not exist", over.Name))
		}
		return b.bindNamedWindow(ctx, wc, i)
	}
	return b.bindWindowDef(ctx, wc, over, len(wc.named))
}

// find returns the index of the named window among the first n, or -1.
func (wc *windowCollector) find(name string, n int) int {
	for i, w := range wc.named[:n] {
		if w.def.Name == name {
			return i
		}
	}
	return -1
}

// bindNamedWindow binds WINDOW clause entry i, once.
func (b *binder) bindNamedWindow(ctx *exprCtx, wc *windowCollector, i int) (*windowSpec, error) {
	w := wc.named[i]
	if w.spec != nil {
		return w.spec, nil
	}
	// A window may refine the windows defined before it only.
	spec, err := b.bindWindowDef(ctx, wc, w.def, i)
	if err != nil {
		return nil, err
	}
	w.spec = spec
	return spec, nil
}

// bindWindowDef binds a window specification; a window it refines must be
// among the first visible named windows.
func (b *binder) bindWindowDef(ctx *exprCtx, wc *windowCollector, def *pg_query.WindowDef, visible int) (*windowSpec, error) {
	spec := &windowSpec{}
	var base *windowSpec
	if def.Refname != "" {
		i := wc.find(def.Refname, visible)
		if i < 0 {
			return nil, b.errAt(def.Location, sqlerr.New(sqlerr.UndefinedObject, "window \"%s\" does not exist", def.Refname))
		}
		var err error
		if base, err = b.bindNamedWindow(ctx, wc, i); err != nil {
			return nil, err
		}
		switch {
		case len(def.PartitionClause) > 0:
			return nil, b.errAt(def.Location, sqlerr.New(windowingError, "cannot override PARTITION BY clause of window \"%s\"", def.Refname))
		case len(def.OrderClause) > 0 && len(base.order) > 0:
			return nil, b.errAt(def.Location, sqlerr.New(windowingError, "cannot override ORDER BY clause of window \"%s\"", def.Refname))
		case base.hasFrame:
			return nil, b.errAt(def.Location, sqlerr.New(windowingError, "cannot copy window \"%s\" because it has a frame clause", def.Refname).
				WithHint("Omit the parentheses in this OVER clause."))
		}
		spec.part, spec.partLocs = base.part, base.partLocs
		spec.order, spec.orderLocs = base.order, base.orderLocs
	}
	// Window definitions may hold aggregates but no window functions.
	dctx := &exprCtx{scope: ctx.scope, aggs: ctx.aggs, clause: "window definitions", subs: ctx.subs}
	for _, n := range def.PartitionClause {
		e, err := b.bindExpr(dctx, n)
		if err != nil {
			return nil, err
		}
		spec.part = append(spec.part, b.defaultType(e))
		spec.partLocs = append(spec.partLocs, exprLocation(n))
	}
	if len(def.OrderClause) > 0 {
		spec.order, spec.orderLocs = nil, nil
	}
	for _, n := range def.OrderClause {
		sb := n.GetSortBy()
		if len(sb.UseOp) > 0 {
			return nil, b.errAt(sb.Location, sqlerr.Unsupported("ORDER BY ... USING"))
		}
		e, err := b.bindExpr(dctx, sb.Node)
		if err != nil {
			return nil, err
		}
		k := sortKey(0, sb)
		spec.order = append(spec.order, ir.WindowKey{Expr: b.defaultType(e), Desc: k.Desc, NullsFirst: k.NullsFirst})
		spec.orderLocs = append(spec.orderLocs, exprLocation(sb.Node))
	}
	var err error
	spec.hasFrame = def.FrameOptions&frameOptionsClauseGiven != 0
	if spec.frame, err = b.bindFrame(def, spec); err != nil {
		return nil, err
	}
	if base != nil {
		spec.sessionGap = base.sessionGap
	}
	if c := b.takeSessionGap(def.Location); c != nil {
		if spec.sessionGap, err = b.bindSessionGap(c, spec); err != nil {
			return nil, err
		}
	}
	return spec, nil
}

// bindSessionGap binds the gap of SESSION WITH GAP: a constant interval
// without months, in a window ordered by one ascending time column.
func (b *binder) bindSessionGap(c *dialectClause, spec *windowSpec) (int64, error) {
	at := charPosition(b.full, c.start)
	if spec.hasFrame {
		return 0, sqlerr.New(windowingError, "SESSION WITH GAP is the frame of its window: it cannot have ROWS, RANGE or GROUPS too").At(at)
	}
	if len(spec.order) != 1 || spec.order[0].Desc {
		return 0, sqlerr.New(windowingError, "SESSION WITH GAP needs a window ordered by one time column, ascending").At(at)
	}
	if k := spec.order[0].Expr.Type().Kind; k != types.Timestamp && k != types.TimestampTZ {
		return 0, sqlerr.New(sqlerr.DatatypeMismatch, "SESSION WITH GAP orders by a timestamp or timestamp with time zone, not %s",
			spec.order[0].Expr.Type()).At(at)
	}
	res, err := pg_query.Parse("SELECT " + c.expr)
	if err != nil {
		return 0, syntaxError(b.full, c.exprOff-len("SELECT "), err)
	}
	sel := res.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return 0, sqlerr.New(sqlerr.SyntaxError, "SESSION WITH GAP needs an interval").At(at)
	}
	sub := &binder{cat: b.cat, full: b.full, base: c.exprOff - len("SELECT ")}
	gap, err := sub.windowInterval(sel.TargetList[0].GetResTarget().Val, "session")
	if err == nil && gap <= 0 {
		err = sqlerr.New(sqlerr.InvalidParameterValue, "the gap of SESSION WITH GAP must be positive").At(charPosition(b.full, c.exprOff))
	}
	return gap, err
}

// bindFrame binds a window's frame clause (the default frame if none).
func (b *binder) bindFrame(def *pg_query.WindowDef, spec *windowSpec) (ir.WindowFrame, error) {
	opts := def.FrameOptions
	if opts&frameOptionsClauseGiven == 0 {
		return ir.DefaultFrame, nil
	}
	f := ir.WindowFrame{Mode: ir.FrameRange}
	construct := "RANGE"
	switch {
	case opts&frameRows != 0:
		f.Mode, construct = ir.FrameRows, "ROWS"
	case opts&frameGroups != 0:
		f.Mode, construct = ir.FrameGroups, "GROUPS"
	}
	switch {
	case opts&frameStartUnboundedPrec != 0:
		f.Start.Kind = ir.BoundUnboundedPreceding
	case opts&frameStartCurrentRow != 0:
		f.Start.Kind = ir.BoundCurrentRow
	case opts&frameStartOffsetPrec != 0:
		f.Start.Kind = ir.BoundPreceding
	case opts&frameStartOffsetFoll != 0:
		f.Start.Kind = ir.BoundFollowing
	}
	switch {
	case opts&frameEndUnboundedFoll != 0:
		f.End.Kind = ir.BoundUnboundedFollowing
	case opts&frameEndOffsetPrec != 0:
		f.End.Kind = ir.BoundPreceding
	case opts&frameEndOffsetFoll != 0:
		f.End.Kind = ir.BoundFollowing
	default:
		f.End.Kind = ir.BoundCurrentRow
	}
	switch {
	case opts&frameExcludeCurrentRow != 0:
		f.Exclude = ir.ExcludeCurrentRow
	case opts&frameExcludeGroup != 0:
		f.Exclude = ir.ExcludeGroup
	case opts&frameExcludeTies != 0:
		f.Exclude = ir.ExcludeTies
	}
	hasOffset := f.Start.Kind == ir.BoundPreceding || f.Start.Kind == ir.BoundFollowing ||
		f.End.Kind == ir.BoundPreceding || f.End.Kind == ir.BoundFollowing
	switch {
	case f.Mode == ir.FrameRange && hasOffset && len(spec.order) != 1:
		return f, b.errAt(def.Location, sqlerr.New(windowingError, "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"))
	case f.Mode == ir.FrameGroups && len(spec.order) == 0:
		return f, b.errAt(def.Location, sqlerr.New(windowingError, "GROUPS mode requires an ORDER BY clause"))
	}
	var err error
	if f.Start.Kind == ir.BoundPreceding || f.Start.Kind == ir.BoundFollowing {
		if f.Start.Offset, err = b.bindFrameOffset(def.StartOffset, f.Mode, construct, spec); err != nil {
			return f, err
		}
	}
	if f.End.Kind == ir.BoundPreceding || f.End.Kind == ir.BoundFollowing {
		if f.End.Offset, err = b.bindFrameOffset(def.EndOffset, f.Mode, construct, spec); err != nil {
			return f, err
		}
	}
	return f, nil
}

// bindFrameOffset binds a frame offset: a bigint in ROWS and GROUPS mode, in
// RANGE mode a value of the type PostgreSQL's in_range support functions
// take for the ORDER BY column's type.
func (b *binder) bindFrameOffset(n *pg_query.Node, mode ir.FrameMode, construct string, spec *windowSpec) (ir.Expr, error) {
	loc := exprLocation(n)
	e, err := b.bindExpr(&exprCtx{clause: "window " + construct}, n)
	if err != nil {
		if sqlerr.Code(err) == sqlerr.UndefinedColumn {
			// Any column reference is refused, whatever its name.
			return nil, b.errAt(loc, sqlerr.New(sqlerr.InvalidColumnReference, "argument of %s must not contain variables", construct))
		}
		return nil, err
	}
	if mode != ir.FrameRange {
		t := e.Type()
		if !t.IsNumeric() && t.Kind != types.Unknown {
			return nil, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch, "argument of %s must be type bigint, not type %s", construct, t))
		}
		switch c, isConst := e.(*ir.Const); {
		case t.Kind == types.Unknown:
			return b.castTo(e, types.Int64T, loc, false)
		case isConst && (t.Kind == types.Int16 || t.Kind == types.Int32):
			return &ir.Const{Value: c.Value, T: types.Int64T}, nil
		}
		return b.castTo(e, types.Int64T, loc, true)
	}
	colT := spec.order[0].Expr.Type()
	cands := rangeOffsetTypes(colT)
	if len(cands) == 0 {
		return nil, b.errAt(loc, sqlerr.New(sqlerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s", colT))
	}
	nodeT := e.Type()
	preferred := nodeT
	if nodeT.Kind == types.Unknown {
		preferred = colT
	}
	var selected types.T
	matches := 0
	for _, c := range cands {
		if _, ok := ir.ImplicitCastCost(nodeT, c); !ok && nodeT.Kind != types.Unknown && nodeT.Kind != c.Kind {
			continue
		}
		matches++
		if matches == 1 || selected.Kind != preferred.Kind {
			selected = c
		}
	}
	switch {
	case matches == 0:
		return nil, b.errAt(loc, sqlerr.New(sqlerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING is not supported for column type %s and offset type %s", colT, nodeT).
			WithHint("Cast the offset value to an appropriate type."))
	case matches > 1 && selected.Kind != preferred.Kind:
		return nil, b.errAt(loc, sqlerr.New(sqlerr.FeatureNotSupported, "RANGE with offset PRECEDING/FOLLOWING has multiple interpretations for column type %s and offset type %s", colT, nodeT).
			WithHint("Cast the offset value to the exact intended type."))
	}
	if selected.Kind == types.Numeric && nodeT.Kind == types.Numeric {
		return e, nil
	}
	return b.castTo(e, selected, loc, false)
}

// rangeOffsetTypes are the offset types of PostgreSQL's in_range support
// functions for an ORDER BY column of type t, the preferred one first.
func rangeOffsetTypes(t types.T) []types.T {
	switch t.Kind {
	case types.Int16, types.Int32, types.Int64:
		return []types.T{types.Int64T, types.Int32T, types.Int16T}
	case types.Numeric:
		return []types.T{types.NumericT}
	case types.Float32, types.Float64:
		return []types.T{types.Float64T}
	case types.Date, types.Timestamp, types.TimestampTZ, types.Interval:
		return []types.T{types.IntervalT}
	}
	return nil
}

// String renders a window specification (for signatures and EXPLAIN).
func (s *windowSpec) String() string {
	var parts []string
	if len(s.part) > 0 {
		ps := make([]string, len(s.part))
		for i, e := range s.part {
			ps[i] = e.String()
		}
		parts = append(parts, "PARTITION BY "+strings.Join(ps, ", "))
	}
	if len(s.order) > 0 {
		parts = append(parts, "ORDER BY "+windowKeysString(s.order))
	}
	parts = append(parts, s.frame.String())
	if s.sessionGap > 0 {
		parts = append(parts, fmt.Sprintf("SESSION WITH GAP %d us", s.sessionGap))
	}
	return strings.Join(parts, " ")
}

// windowKeysString renders ORDER BY keys.
func windowKeysString(keys []ir.WindowKey) string {
	os := make([]string, len(keys))
	for i, k := range keys {
		os[i] = k.Expr.String() + " " + ir.OrderWords(k.Desc, k.NullsFirst)
	}
	return strings.Join(os, ", ")
}

// containsWindow reports whether e has a window function call.
func containsWindow(e ir.Expr) bool {
	found := false
	ir.Walk(e, func(x ir.Expr) bool {
		if _, ok := x.(*winRef); ok {
			found = true
		}
		return !found
	})
	return found
}

// relHasWindow reports whether rel computes window functions (below any
// node but a join's input or a subquery's).
func relHasWindow(rel ir.Rel) bool {
	switch r := rel.(type) {
	case *ir.Window:
		return true
	case *ir.Project:
		return relHasWindow(r.Input)
	case *ir.Filter:
		return relHasWindow(r.Input)
	case *ir.Sort:
		return relHasWindow(r.Input)
	case *ir.Limit:
		return relHasWindow(r.Input)
	case *ir.Aggregate:
		return relHasWindow(r.Input)
	}
	return false
}

// placeWindows puts the query's window calls over input, the rows after
// GROUP BY, HAVING and the select list's scalar subqueries. rewrite (nil
// without aggregation) turns an expression over the FROM scope into one
// over the aggregation; resolve (nil without scalar subqueries) puts the
// subqueries' values in. Calls sharing a PARTITION BY and ORDER BY go into
// one Window; the Windows are stacked in the order their first calls
// appear. The targets' winRefs become references to the call columns.
func (b *binder) placeWindows(input ir.Rel, wc *windowCollector, rewrite func(ir.Expr, int32) (ir.Expr, error), resolve func(ir.Expr) ir.Expr, targets []target) (ir.Rel, error) {
	fix := func(e ir.Expr, loc int32) (ir.Expr, error) {
		if e == nil {
			return nil, nil
		}
		var err error
		if rewrite != nil {
			if e, err = rewrite(e, loc); err != nil {
				return nil, err
			}
		}
		if resolve != nil {
			e = resolve(e)
		}
		return e, nil
	}
	type group struct {
		key   string
		win   *ir.Window
		calls []int
	}
	var groups []*group
	var err error
	for i := range wc.calls {
		rec := &wc.calls[i]
		spec := rec.spec
		part := make([]ir.Expr, len(spec.part))
		for k, e := range spec.part {
			if part[k], err = fix(e, spec.partLocs[k]); err != nil {
				return nil, err
			}
		}
		order := make([]ir.WindowKey, len(spec.order))
		for k, o := range spec.order {
			order[k] = o
			if order[k].Expr, err = fix(o.Expr, spec.orderLocs[k]); err != nil {
				return nil, err
			}
		}
		call := rec.call
		call.Args = make([]ir.Expr, len(rec.call.Args))
		for k, a := range rec.call.Args {
			loc := rec.loc
			if k < len(rec.argLocs) && rec.argLocs[k] >= 0 {
				loc = rec.argLocs[k]
			}
			if call.Args[k], err = fix(a, loc); err != nil {
				return nil, err
			}
		}
		if call.Filter, err = fix(rec.call.Filter, rec.filterAt); err != nil {
			return nil, err
		}
		key := (&windowSpec{part: part, order: order, sessionGap: spec.sessionGap}).keyString()
		var g *group
		for _, x := range groups {
			if x.key == key {
				g = x
			}
		}
		if g == nil {
			g = &group{key: key, win: &ir.Window{PartitionBy: part, OrderBy: order, SessionGap: spec.sessionGap}}
			groups = append(groups, g)
		}
		g.win.Calls = append(g.win.Calls, call)
		g.calls = append(g.calls, i)
	}
	col := make([]int, len(wc.calls))
	rel := input
	for _, g := range groups {
		w := g.win
		w.Input = rel
		w.Cols = append([]ir.Column(nil), rel.Columns()...)
		for k, c := range w.Calls {
			col[g.calls[k]] = len(w.Cols)
			name := c.Func
			if name == ir.AggCountStar {
				name = ir.AggCount
			}
			w.Cols = append(w.Cols, ir.Column{Name: name, Type: c.T})
		}
		rel = w
	}
	cols := rel.Columns()
	for i := range targets {
		targets[i].expr = ir.Rewrite(targets[i].expr, func(x ir.Expr) ir.Expr {
			if r, ok := x.(*winRef); ok {
				c := col[r.Index]
				return &ir.InputRef{Index: c, T: cols[c].Type, Name: cols[c].Name}
			}
			return x
		})
	}
	return rel, nil
}

// keyString renders the PARTITION BY and ORDER BY of a window: the calls of
// windows with equal keys share one Window.
func (s *windowSpec) keyString() string {
	ps := make([]string, len(s.part))
	for i, e := range s.part {
		ps[i] = e.String()
	}
	return strings.Join(ps, ", ") + " | " + windowKeysString(s.order) + fmt.Sprintf(" | %d", s.sessionGap)
}
