package sql

import (
	"fmt"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// SQL functions (CREATE FUNCTION ... LANGUAGE SQL) are inlined where they
// are called: the body is bound with the parameters as the columns of a
// scope of their own (so a body's FROM columns hide them, as in
// PostgreSQL), and the parameters are then replaced by the call's
// arguments. A body without FROM (SELECT expr, RETURN expr) is an
// expression; a body with FROM is a scalar subquery correlated on the
// parameters, collected like the scalar subqueries of the calling clause and
// decorrelated with them (bind_correlate.go, bind_decorrelate.go). The
// result is cast to the declared return type by assignment, and a STRICT
// function is NULL when an argument is.
//
// A body is bound once when the function is created, to check it and to
// record the relations and functions it names (catalog.Function.Refs and
// Calls); binding it again where it is called resolves each name to the same
// object, whatever the caller's search path. The views that call functions
// pin them the same way (catalog.Relation.Functions).

// invalidFunctionDefinition is SQLSTATE 42P13, duplicateFunction 42723.
const (
	invalidFunctionDefinition = "42P13"
	duplicateFunction         = "42723"
)

// maxInlineDepth bounds the nesting of inlined functions.
const maxInlineDepth = 32

// funcState is the binder's state for SQL functions.
type funcState struct {
	// pins maps the byte offset of a call in the text being bound to the
	// function it called when the text was first bound; stored is set when
	// binding a stored definition, whose unpinned calls are built-ins.
	pins   map[int32]uint32
	stored bool
	// refs are the function calls of the text being bound.
	refs []catalog.Ref
	// calls are all the functions inlined into the statement and reads
	// the relations their bodies name.
	calls, reads []uint32
	// stack are the functions whose bodies are being bound.
	stack []uint32
	// params is the parameter scope of the body being bound, nil outside
	// bodies.
	params *scope
}

// CreateFunction is CREATE [OR REPLACE] FUNCTION.
type CreateFunction struct {
	Fn      *catalog.Function
	Replace bool
}

func (*CreateFunction) Tag() string { return "CREATE FUNCTION" }

// DropFunction is DROP FUNCTION [IF EXISTS] name [(argtypes)] [, ...]
// [CASCADE].
type DropFunction struct {
	Targets  []FunctionTarget
	IfExists bool
	Cascade  bool
	Path     []string
}

func (*DropFunction) Tag() string { return "DROP FUNCTION" }

// FunctionTarget names a function to drop: by name alone when
// AnyArgs, else by name and argument types.
type FunctionTarget struct {
	Name    ir.ObjectName
	Args    []types.T
	AnyArgs bool
}

// String renders the target as PostgreSQL does in messages.
func (t FunctionTarget) String() string {
	if t.AnyArgs {
		return t.Name.String()
	}
	ts := make([]string, len(t.Args))
	for i, a := range t.Args {
		ts[i] = types.WithoutTypmod(a).String()
	}
	return t.Name.String() + "(" + strings.Join(ts, ", ") + ")"
}

// functionName splits a function's name as written into schema and name.
func (b *binder) functionName(names []*pg_query.Node) (ir.ObjectName, error) {
	var parts []string
	for _, n := range names {
		parts = append(parts, n.GetString_().Sval)
	}
	switch len(parts) {
	case 1:
		return ir.ObjectName{Name: parts[0]}, nil
	case 2:
		return ir.ObjectName{Schema: parts[0], Name: parts[1]}, nil
	}
	return ir.ObjectName{}, sqlerr.Unsupported("cross-database references")
}

func (b *binder) bindCreateFunction(s *pg_query.CreateFunctionStmt) (ir.Statement, error) {
	if s.IsProcedure {
		return nil, sqlerr.Unsupported("CREATE PROCEDURE")
	}
	name, err := b.functionName(s.Funcname)
	if err != nil {
		return nil, err
	}
	if name.Schema == "" {
		if name.Schema = b.cat.CreationSchema(b.path); name.Schema == "" {
			return nil, sqlerr.New(sqlerr.InvalidSchemaName, "no schema has been selected to create in")
		}
	} else if b.cat.Schema(name.Schema) == nil {
		return nil, sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", name.Schema)
	}
	if name.Schema == catalog.PgCatalog {
		return nil, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for schema pg_catalog")
	}
	fn := &catalog.Function{Schema: name.Schema, Name: name.Name, Volatility: "volatile", SQL: b.text}
	for _, pn := range s.Parameters {
		p := pn.GetFunctionParameter()
		switch p.Mode {
		case pg_query.FunctionParameterMode_FUNC_PARAM_DEFAULT, pg_query.FunctionParameterMode_FUNC_PARAM_IN:
		case pg_query.FunctionParameterMode_FUNC_PARAM_TABLE:
			return nil, sqlerr.Unsupported("SQL functions returning sets (RETURNS TABLE); only scalar functions are")
		default:
			return nil, sqlerr.Unsupported("OUT, INOUT and VARIADIC parameters")
		}
		if p.Defexpr != nil {
			return nil, sqlerr.Unsupported("parameter defaults")
		}
		t, err := b.bindTypeName(p.ArgType)
		if err != nil {
			return nil, err
		}
		if p.Name != "" && slices.Contains(fn.ArgNames, p.Name) {
			return nil, sqlerr.New(invalidFunctionDefinition, "parameter name \"%s\" used more than once", p.Name)
		}
		fn.ArgNames = append(fn.ArgNames, p.Name)
		fn.ArgTypes = append(fn.ArgTypes, t)
	}
	if s.ReturnType == nil {
		return nil, sqlerr.New(invalidFunctionDefinition, "function result type must be specified")
	}
	if s.ReturnType.Setof {
		return nil, sqlerr.Unsupported("SQL functions returning sets (RETURNS SETOF); only scalar functions are")
	}
	if fn.Result, err = b.bindTypeName(s.ReturnType); err != nil {
		return nil, err
	}
	var language string
	var as *pg_query.DefElem
	for _, o := range s.Options {
		d := o.GetDefElem()
		switch d.Defname {
		case "language":
			language = strings.ToLower(d.Arg.GetString_().Sval)
		case "volatility":
			fn.Volatility = d.Arg.GetString_().Sval
		case "strict":
			fn.Strict = d.Arg.GetBoolean().Boolval
		case "as":
			as = d
		case "parallel", "leakproof", "cost":
			// Hints for PostgreSQL's planner: accepted, without effect.
		default:
			return nil, b.errAt(d.Location, sqlerr.Unsupported("function option %s", strings.ToUpper(d.Defname)))
		}
	}
	switch {
	case s.SqlBody != nil && as != nil:
		return nil, sqlerr.New(invalidFunctionDefinition, "duplicate function body specified")
	case s.SqlBody == nil && as == nil:
		return nil, sqlerr.New(invalidFunctionDefinition, "no function body specified")
	case language == "" && s.SqlBody == nil:
		return nil, sqlerr.New(invalidFunctionDefinition, "no language specified")
	case language != "" && language != "sql":
		return nil, sqlerr.Unsupported("functions in language %s (only LANGUAGE SQL)", language)
	}
	// Where the body's text starts in the query string, for positions.
	bodyStart := b.base
	if as != nil {
		items := as.Arg.GetList().GetItems()
		if len(items) != 1 {
			return nil, sqlerr.New(invalidFunctionDefinition, "only one AS item needed for language \"sql\"")
		}
		fn.Body = items[0].GetString_().Sval
		bodyStart = b.base + int(as.ArgLocation) + bodyDelimiter(b.full[b.base+int(as.ArgLocation):])
	} else {
		bodyStart = b.textStart
	}
	var replaced uint32
	if s.Replace {
		for _, old := range b.cat.FunctionsIn(fn.Schema, fn.Name) {
			if old.SameArgs(fn.ArgTypes) {
				replaced = old.ID
			}
		}
	}
	if err := b.checkBody(fn, replaced); err != nil {
		if e, ok := err.(*sqlerr.Error); ok && e.Position > 0 {
			return nil, withoutPosition(e).At(charPosition(b.full, bodyStart) + e.Position - 1)
		}
		return nil, err
	}
	return &CreateFunction{Fn: fn, Replace: s.Replace}, nil
}

// bodyDelimiter returns the length of the quote opening the string literal
// at the start of text: 1 for '...', that of the tag for $tag$...$tag$.
func bodyDelimiter(text string) int {
	if strings.HasPrefix(text, "$") {
		if i := strings.IndexByte(text[1:], '$'); i >= 0 {
			return i + 2
		}
	}
	if strings.HasPrefix(text, "E'") || strings.HasPrefix(text, "e'") {
		return 2
	}
	return 1
}

// checkBody binds fn's body, as CREATE FUNCTION does to check it: it must
// be one SELECT (or RETURN) of one column whose type converts to the return
// type by assignment, and must not call fn (replaced, when replacing a
// function) through the functions it calls. It sets fn.Refs and fn.Calls.
func (b *binder) checkBody(fn *catalog.Function, replaced uint32) error {
	saved := b.funcs.stack
	if replaced != 0 {
		b.funcs.stack = append(b.funcs.stack, replaced)
	}
	defer func() { b.funcs.stack = saved }()
	calls, reads := b.funcs.calls, b.funcs.reads
	e, _, refs, fnRefs, err := b.bindBody(fn, "")
	b.funcs.calls, b.funcs.reads = calls, reads
	if err != nil {
		return err
	}
	if _, err := b.functionResult(fn, e); err != nil {
		return err
	}
	fn.Refs, fn.Calls = refs, fnRefs
	return nil
}

// functionResult converts e, the value of fn's body, to fn's return type by
// assignment, or fails with PostgreSQL's 42P13.
func (b *binder) functionResult(fn *catalog.Function, e ir.Expr) (ir.Expr, error) {
	from := e.Type()
	if from.Kind != types.Unknown && !types.Identical(from, fn.Result) && !ir.AssignmentCastAllowed(from, fn.Result) {
		return nil, sqlerr.New(invalidFunctionDefinition, "return type mismatch in function declared to return %s", fn.Result).
			WithDetail(fmt.Sprintf("Actual return type is %s.", from))
	}
	return b.castTo(e, fn.Result, -1, false)
}

// parseBody parses fn's body: the SELECT of an AS '...' body, or the
// RETURN expression or BEGIN ATOMIC statement of a SQL-standard one.
func parseBody(fn *catalog.Function) (p *Parsed, sel *pg_query.SelectStmt, ret *pg_query.Node, err error) {
	text := fn.Body
	if text == "" {
		text = fn.SQL
	}
	parsed, err := Parse(text)
	if err != nil {
		return nil, nil, nil, err
	}
	switch {
	case len(parsed) == 0:
		return nil, nil, nil, sqlerr.New(invalidFunctionDefinition, "return type mismatch in function declared to return %s", fn.Result).
			WithDetail("Function's final statement must be SELECT or INSERT/UPDATE/DELETE/MERGE RETURNING.")
	case len(parsed) > 1:
		return nil, nil, nil, sqlerr.Unsupported("SQL function bodies of more than one statement")
	}
	p = parsed[0]
	if p.node == nil {
		return nil, nil, nil, sqlerr.Unsupported("SQL function bodies that are not a SELECT")
	}
	if fn.Body != "" {
		if sel = p.node.GetSelectStmt(); sel == nil {
			return nil, nil, nil, sqlerr.Unsupported("SQL function bodies that are not a SELECT")
		}
		return p, sel, nil, nil
	}
	body := p.node.GetCreateFunctionStmt().GetSqlBody()
	if r := body.GetReturnStmt(); r != nil {
		return p, nil, r.Returnval, nil
	}
	// BEGIN ATOMIC ... END: a list holding the list of statements.
	var stmts []*pg_query.Node
	for _, l := range body.GetList().GetItems() {
		stmts = append(stmts, l.GetList().GetItems()...)
	}
	if len(stmts) != 1 {
		return nil, nil, nil, sqlerr.Unsupported("SQL function bodies of other than one statement")
	}
	if sel = stmts[0].GetSelectStmt(); sel == nil {
		return nil, nil, nil, sqlerr.Unsupported("SQL function bodies that are not a SELECT")
	}
	return p, sel, nil, nil
}

// simpleSelect reports whether sel is SELECT expr with nothing else: an
// expression rather than a query.
func simpleSelect(sel *pg_query.SelectStmt) bool {
	return sel.Op == pg_query.SetOperation_SETOP_NONE && len(sel.FromClause) == 0 && sel.WhereClause == nil &&
		len(sel.GroupClause) == 0 && sel.HavingClause == nil && len(sel.ValuesLists) == 0 &&
		len(sel.DistinctClause) == 0 && sel.LimitCount == nil && sel.LimitOffset == nil &&
		len(sel.SortClause) == 0 && sel.WithClause == nil && len(sel.WindowClause) == 0 && len(sel.TargetList) == 1
}

// bindBody binds fn's body over its parameter scope (InputRef i is
// parameter i). Scalar subqueries in it are collected in subs, over the
// same scope. refs and fnRefs are the relations and functions the body
// names, with their offsets in its text. clause names the calling clause,
// for messages.
func (b *binder) bindBody(fn *catalog.Function, clause string) (e ir.Expr, subs *subqueries, refs, fnRefs []catalog.Ref, err error) {
	if slices.Contains(b.funcs.stack, fn.ID) {
		return nil, nil, nil, nil, sqlerr.New(invalidFunctionDefinition, "SQL function \"%s\" calls itself: recursive SQL functions are not supported", fn.Name)
	}
	if len(b.funcs.stack) >= maxInlineDepth {
		return nil, nil, nil, nil, sqlerr.New(invalidFunctionDefinition, "SQL functions nested more than %d deep", maxInlineDepth)
	}
	p, sel, ret, err := parseBody(fn)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	params := &scope{}
	for i, t := range fn.ArgTypes {
		params.cols = append(params.cols, scopeCol{table: fn.Name, name: fn.ArgNames[i], t: t})
	}

	type savedState struct {
		full, text      string
		base, textStart int
		pins            map[int32]uint32
		refs            []catalog.Ref
		clauses         []*dialectClause
		params          *paramState
		qs              queryState
		fs              funcState
		path            []string
		volatile        *volatileUse
		hadVolatile     bool
	}
	sv := savedState{b.full, b.text, b.base, b.textStart, b.pins, b.refs, b.clauses, b.params, b.queryState, b.funcs, b.path, b.volatile, b.volatile != nil}
	b.full, b.text, b.base, b.textStart = p.full, p.Text, p.base, textStart(p)
	b.pins, b.refs, b.clauses, b.params, b.queryState = pins(fn.Refs), nil, nil, nil, queryState{}
	// A new function's body (no id yet) resolves names on the search path;
	// a stored one's are pinned.
	b.funcs.pins, b.funcs.stored, b.funcs.refs, b.funcs.params = pins(fn.Calls), fn.ID != 0, nil, params
	if fn.ID != 0 {
		b.path = nil
	}
	b.funcs.stack = append(slices.Clip(b.funcs.stack), fn.ID)
	defer func() {
		refs, fnRefs = b.refs, b.funcs.refs
		calls, reads := b.funcs.calls, b.funcs.reads
		b.full, b.text, b.base, b.textStart = sv.full, sv.text, sv.base, sv.textStart
		b.pins, b.refs, b.clauses, b.params, b.queryState = sv.pins, sv.refs, sv.clauses, sv.params, sv.qs
		b.funcs, b.path = sv.fs, sv.path
		b.funcs.calls = calls
		b.funcs.reads = reads
		for _, id := range refIDs(refs) {
			if !slices.Contains(b.funcs.reads, id) {
				b.funcs.reads = append(b.funcs.reads, id)
			}
		}
		if !sv.hadVolatile && b.volatile != nil {
			// Reported at the call, not inside the body's text.
			b.volatile = &volatileUse{fn: b.volatile.fn, loc: -1}
		}
	}()

	subs = &subqueries{}
	ctx := &exprCtx{scope: params, subs: subs, clause: clause}
	switch {
	case ret != nil:
		e, err = b.bindExpr(ctx, ret)
	case simpleSelect(sel):
		rt := sel.TargetList[0].GetResTarget()
		if rt == nil || rt.Val.GetColumnRef() != nil && isStar(rt.Val.GetColumnRef()) {
			return nil, nil, nil, nil, b.errAt(-1, sqlerr.Unsupported("SELECT * in a SQL function body"))
		}
		e, err = b.bindExpr(ctx, rt.Val)
	default:
		if n := len(sel.TargetList); n != 1 && sel.Op == pg_query.SetOperation_SETOP_NONE {
			return nil, nil, nil, nil, sqlerr.New(invalidFunctionDefinition, "return type mismatch in function declared to return %s", fn.Result).
				WithDetail("Final statement must return exactly one column.")
		}
		e, err = b.bindScalarSubquery(ctx, &pg_query.SubLink{
			SubLinkType: pg_query.SubLinkType_EXPR_SUBLINK,
			Subselect:   &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}},
			Location:    -1,
		})
	}
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// An untyped literal is text, as in PostgreSQL (RETURNS int AS 'SELECT
	// NULL' is a return type mismatch).
	return b.defaultType(e), subs, nil, nil, nil
}

func isStar(c *pg_query.ColumnRef) bool {
	for _, f := range c.Fields {
		if f.GetAStar() != nil {
			return true
		}
	}
	return false
}

// bindFunctionParam binds $n in a function body: parameter n.
func (b *binder) bindFunctionParam(ctx *exprCtx, ref *pg_query.ParamRef) (ir.Expr, error) {
	ps := b.funcs.params
	n := int(ref.Number)
	if n < 1 || n > len(ps.cols) {
		return nil, b.errAt(ref.Location, sqlerr.New(undefinedParameter, "there is no parameter $%d", n))
	}
	c := ps.cols[n-1]
	if ctx.scope == ps {
		return &ir.InputRef{Index: n - 1, T: c.t, Name: c.name}, nil
	}
	for d, o := range b.outer {
		if o == ps {
			return &outerRef{Depth: d + 1, Index: n - 1, T: c.t, Name: c.name}, nil
		}
	}
	return nil, b.errAt(ref.Location, sqlerr.Unsupported("$%d in this part of a SQL function body", n))
}

// bindUserCall binds a call f of a SQL function. It returns handled false
// for a call of a built-in function (with the arguments, if it bound them,
// for the caller to use).
func (b *binder) bindUserCall(ctx *exprCtx, f *pg_query.FuncCall) (args []ir.Expr, e ir.Expr, handled bool, err error) {
	name, err := b.functionName(f.Funcname)
	if err != nil || name.Schema == catalog.PgCatalog {
		return nil, nil, false, nil
	}
	off := b.textOffset(f.Location)
	var cands []*catalog.Function
	pinned := false
	if id, ok := b.funcs.pins[off]; ok {
		fn := b.cat.FunctionByID(id)
		if fn == nil {
			return nil, nil, true, b.errAt(f.Location, sqlerr.New(sqlerr.UndefinedFunction, "function \"%s\" (id %d) of a stored definition does not exist", name.Name, id))
		}
		cands, pinned = []*catalog.Function{fn}, true
	} else if b.funcs.stored {
		return nil, nil, false, nil
	} else if name.Schema != "" {
		if b.cat.Schema(name.Schema) == nil {
			return nil, nil, true, b.errAt(f.Location, sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", name.Schema))
		}
		cands = b.cat.FunctionsIn(name.Schema, name.Name)
	} else if cands = b.cat.ResolveFunctions(b.path, name.Name); len(cands) == 0 {
		return nil, nil, false, nil
	}
	if f.AggStar || f.AggDistinct || f.AggFilter != nil || len(f.AggOrder) > 0 || f.Over != nil {
		return nil, nil, true, b.errAt(f.Location, sqlerr.New(sqlerr.WrongObjectType, "%s is not an aggregate function", name))
	}
	if f.FuncVariadic {
		return nil, nil, true, b.errAt(f.Location, sqlerr.Unsupported("VARIADIC arguments"))
	}
	if args, err = b.bindExprs(ctx, f.Args); err != nil {
		return nil, nil, true, err
	}
	os := make([]*ir.Overload, len(cands))
	byOverload := map[*ir.Overload]*catalog.Function{}
	for i, fn := range cands {
		os[i] = &ir.Overload{Fn: fn.Name, Args: withoutTypmods(fn.ArgTypes), Result: fn.Result, Strict: fn.Strict}
		byOverload[os[i]] = fn
	}
	var best *ir.Overload
	bestCost, ambiguous := -1, false
	if kept := unknownArgsCandidates(preferMatches(os, args), args); len(kept) > 0 {
		best, bestCost, ambiguous = kept[0], 0, len(kept) > 1
		for _, o := range kept {
			c, _ := overloadCost(o, args)
			bestCost = max(bestCost, c)
		}
	}
	if !pinned && name.Schema == "" {
		// pg_catalog comes first: a built-in at least as close wins.
		bname := name.Name
		if alias, ok := functionAliases[bname]; ok {
			bname = alias
		}
		builtin := ir.IsArrayFunction(bname) && best == nil
		for _, o := range ir.FunctionOverloads(bname) {
			if c, ok := overloadCost(o, args); ok && (best == nil || c <= bestCost) {
				builtin = true
			}
		}
		if builtin || best == nil {
			return args, nil, false, nil
		}
	}
	if best == nil {
		return nil, nil, true, b.errAt(f.Location, noSuchFunction(name.String(), args))
	}
	if ambiguous {
		return nil, nil, true, b.errAt(f.Location, sqlerr.New(sqlerr.AmbiguousFunction, "function %s is not unique", describeCall(name.String(), args)).
			WithHint("Could not choose a best candidate function. You might need to add explicit type casts."))
	}
	e, err = b.inlineCall(ctx, byOverload[best], args, f.Location)
	return nil, e, true, err
}

// unknownArgsCandidates narrows the candidates that preferMatches left as
// PostgreSQL's func_select_candidate does for untyped arguments: at each
// position of an untyped argument, candidates taking a string there if any
// does, else those taking the preferred type of the one category all
// candidates take there. Without untyped arguments, several candidates are
// ambiguous (there is no cost order between, say, f(int) and f(bigint) for
// a smallint).
func unknownArgsCandidates(cands []*ir.Overload, args []ir.Expr) []*ir.Overload {
	for i, a := range args {
		if len(cands) < 2 {
			break
		}
		if a.Type().Kind != types.Unknown {
			continue
		}
		var str, pref []*ir.Overload
		cat, sameCat := byte(0), true
		for k, o := range cands {
			c, p := typeCategory(o.Args[i])
			if k == 0 {
				cat = c
			} else if c != cat {
				sameCat = false
			}
			if c == 'S' {
				str = append(str, o)
			}
			if p {
				pref = append(pref, o)
			}
		}
		switch {
		case len(str) > 0:
			cands = str
		case sameCat && len(pref) > 0:
			cands = pref
		}
	}
	return cands
}

func withoutTypmods(ts []types.T) []types.T {
	out := make([]types.T, len(ts))
	for i, t := range ts {
		out[i] = types.WithoutTypmod(t)
	}
	return out
}

// inlineCall returns the value of fn called with args at loc.
func (b *binder) inlineCall(ctx *exprCtx, fn *catalog.Function, args []ir.Expr, loc int32) (ir.Expr, error) {
	conv := make([]ir.Expr, len(args))
	for i, a := range args {
		c, err := b.castTo(a, types.WithoutTypmod(fn.ArgTypes[i]), loc, false)
		if err != nil {
			return nil, err
		}
		conv[i] = c
	}
	b.funcs.refs = append(b.funcs.refs, catalog.Ref{Loc: b.textOffset(loc), ID: fn.ID})
	if !slices.Contains(b.funcs.calls, fn.ID) {
		b.funcs.calls = append(b.funcs.calls, fn.ID)
	}
	body, subs, _, _, err := b.bindBody(fn, clauseName(ctx))
	if err != nil {
		if se, ok := err.(*sqlerr.Error); ok {
			// Positions in the body's text mean nothing in the caller's.
			return nil, b.errAt(loc, withoutPosition(se))
		}
		return nil, err
	}
	if len(subs.joins) > 0 && ctx.subs == nil {
		return nil, b.errAt(loc, sqlerr.Unsupported("SQL function %s, whose body is a query, in %s", fn.Name, clauseName(ctx)))
	}
	offset := 0
	if ctx.subs != nil {
		offset = len(ctx.subs.joins)
	}
	// The body's parameters become the arguments, and its subqueries those
	// of the calling clause.
	subst := func(e ir.Expr) ir.Expr {
		e = ir.Rewrite(e, func(x ir.Expr) ir.Expr {
			if r, ok := x.(*scalarRef); ok {
				return &scalarRef{Index: r.Index + offset, T: r.T}
			}
			return x
		})
		return ir.Rewrite(e, func(x ir.Expr) ir.Expr {
			if r, ok := x.(*ir.InputRef); ok {
				return conv[r.Index]
			}
			return x
		})
	}
	for _, sj := range subs.joins {
		if sj.dep != nil {
			d := *sj.dep
			d.domain = substAll(d.domain, subst)
			sj.dep = &d
		} else {
			sj.leftKeys = substAll(sj.leftKeys, subst)
		}
		ctx.subs.joins = append(ctx.subs.joins, sj)
	}
	e, err := b.functionResult(fn, subst(body))
	if se, ok := err.(*sqlerr.Error); ok {
		return nil, b.errAt(loc, se)
	} else if err != nil {
		return nil, err
	}
	if fn.Strict && len(conv) > 0 {
		var nulls []ir.Expr
		for _, a := range conv {
			nulls = append(nulls, &ir.Call{Fn: ir.FnIsNull, T: types.BoolT, Args: []ir.Expr{a}})
		}
		cond := nulls[0]
		if len(nulls) > 1 {
			cond = &ir.Call{Fn: ir.FnOr, T: types.BoolT, Args: nulls}
		}
		e = &ir.Case{T: e.Type(), Whens: []ir.When{{Cond: cond, Then: &ir.Const{Value: types.Null, T: e.Type()}}}, Else: e}
	}
	return e, nil
}

// withoutPosition returns a copy of e without its position.
func withoutPosition(e *sqlerr.Error) *sqlerr.Error {
	c := *e
	c.Position = 0
	return &c
}

func substAll(es []ir.Expr, fn func(ir.Expr) ir.Expr) []ir.Expr {
	out := make([]ir.Expr, len(es))
	for i, e := range es {
		out[i] = fn(e)
	}
	return out
}

func (b *binder) bindDropFunction(s *pg_query.DropStmt) (ir.Statement, error) {
	d := &DropFunction{IfExists: s.MissingOk, Cascade: s.Behavior == pg_query.DropBehavior_DROP_CASCADE, Path: b.path}
	for _, o := range s.Objects {
		owa := o.GetObjectWithArgs()
		name, err := b.functionName(owa.Objname)
		if err != nil {
			return nil, err
		}
		t := FunctionTarget{Name: name, AnyArgs: owa.ArgsUnspecified}
		for _, a := range owa.Objargs {
			at, err := b.bindTypeName(a.GetTypeName())
			if err != nil {
				return nil, err
			}
			t.Args = append(t.Args, at)
		}
		d.Targets = append(d.Targets, t)
	}
	return d, nil
}
