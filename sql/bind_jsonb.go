package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// jsonbOnlyOperators are the operators that exist only for jsonb, so they
// bind as jsonb operators whatever their operand types.
var jsonbOnlyOperators = map[string]bool{
	"->": true, "->>": true, "#>": true, "#>>": true, "?": true, "?|": true, "?&": true, "#-": true,
}

// jsonAliases are the json spellings of jsonb functions: json values are
// jsonb values in streamsql (docs/sql.md).
var jsonAliases = map[string]string{
	"json_build_object": ir.FnJSONBBuildObject, "json_build_array": ir.FnJSONBBuildArray, "to_json": ir.FnToJSONB,
	"json_typeof": "jsonb_typeof", "json_array_length": "jsonb_array_length",
	"json_strip_nulls": "jsonb_strip_nulls", "json_extract_path": "jsonb_extract_path",
	"json_extract_path_text": "jsonb_extract_path_text",
	"json_each":              "jsonb_each", "json_each_text": "jsonb_each_text",
	"json_array_elements": "jsonb_array_elements", "json_array_elements_text": "jsonb_array_elements_text",
	"json_object_keys": "jsonb_object_keys", "json_agg": "jsonb_agg", "json_object_agg": "jsonb_object_agg",
}

// JSONAlias returns the jsonb function a json function name stands for, or
// name itself.
func JSONAlias(name string) string {
	if a, ok := jsonAliases[name]; ok {
		return a
	}
	return name
}

// bindJSONBOperator binds a binary operator over jsonb, or returns nil if
// op is not a jsonb operator for these operands.
func (b *binder) bindJSONBOperator(op string, l, r ir.Expr, loc int32) (ir.Expr, error) {
	fn, ok := jsonbOperators[op]
	if !ok {
		return nil, nil
	}
	lt, rt := l.Type(), r.Type()
	if !jsonbOnlyOperators[op] && lt.Kind != types.JSONB && rt.Kind != types.JSONB {
		return nil, nil
	}
	if (op == "||" || op == "@>" || op == "<@") && (lt.Kind == types.Array || rt.Kind == types.Array) {
		return nil, nil
	}
	if op == "->" || op == "->>" || op == "-" {
		// The text key is preferred for an untyped literal: '{"a":1}'::jsonb -> 'a'.
		r = b.defaultType(r)
		if rt = r.Type(); rt.IsInteger() {
			if op == "->" {
				fn = ir.FnJSONBElem
			} else if op == "->>" {
				fn = ir.FnJSONBElemText
			}
		}
	}
	e, err := b.resolveCall(fn, []ir.Expr{l, r}, loc)
	if err != nil {
		if sqlerr.Code(err) == sqlerr.UndefinedFunction {
			return nil, b.errAt(loc, sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", lt, op, rt).
				WithHint("No operator matches the given name and argument types. You might need to add explicit type casts."))
		}
		return nil, err
	}
	return e, nil
}

// bindJSONBPolyCall types a call of jsonb_build_object, jsonb_build_array
// or to_jsonb: untyped literals are text, every other argument keeps its
// type.
func (b *binder) bindJSONBPolyCall(fn string, args []ir.Expr, loc int32) (ir.Expr, error) {
	switch fn {
	case ir.FnToJSONB:
		if len(args) != 1 {
			return nil, b.errAt(loc, noSuchFunction(fn, args))
		}
		if args[0].Type().Kind == types.Unknown {
			if c, ok := args[0].(*ir.Const); !ok || !c.Value.Null {
				return nil, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch,
					"could not determine polymorphic type because input has type unknown"))
			}
		}
	case ir.FnJSONBBuildObject:
		if len(args)%2 != 0 {
			return nil, b.errAt(loc, sqlerr.New(sqlerr.InvalidParameterValue, "argument list must have even number of elements").
				WithHint("The arguments of %s() must consist of alternating keys and values.", fn))
		}
	}
	conv := make([]ir.Expr, len(args))
	for i, a := range args {
		conv[i] = b.defaultType(a)
		if c, ok := conv[i].(*ir.Const); ok && c.T.Kind == types.Unknown {
			conv[i] = &ir.Const{Value: types.Null, T: types.TextT}
		}
	}
	return &ir.Call{Fn: fn, Args: conv, T: types.JSONBT}, nil
}

// The jsonb set-returning functions are unnest over arrays that scalar
// functions make of the jsonb value: jsonb_array_elements(j) is
// unnest(elements of j), jsonb_each(j) unnest(keys of j, values of j),
// zipped. They run where unnest runs: in FROM, LATERAL, ROWS FROM and
// (the one-column ones) the select list, in views too.

// jsonbSRF is one jsonb set-returning function: the array functions it
// unnests and the names of its columns. named columns keep their names
// under a table alias (PostgreSQL's OUT parameters).
type jsonbSRF struct {
	fns   []string
	cols  []string
	named bool
	args  int // the number of arguments if not 1
}

var jsonbSRFs = map[string]jsonbSRF{
	"jsonb_array_elements":      {fns: []string{ir.FnJSONBElements}, cols: []string{"value"}, named: true},
	"jsonb_array_elements_text": {fns: []string{ir.FnJSONBElementsText}, cols: []string{"value"}, named: true},
	"jsonb_object_keys":         {fns: []string{ir.FnJSONBKeys}, cols: []string{"jsonb_object_keys"}},
	"jsonb_each":                {fns: []string{ir.FnJSONBEachKeys, ir.FnJSONBEachValues}, cols: []string{"key", "value"}, named: true},
	"jsonb_each_text":           {fns: []string{ir.FnJSONBEachKeys, ir.FnJSONBEachText}, cols: []string{"key", "value"}, named: true},
	"jsonb_path_query":          {fns: []string{ir.FnJSONBPathQuery}, cols: []string{"jsonb_path_query"}, args: 2},
}

// isSetReturning reports whether name (after json aliases) is a
// set-returning function: unnest or a jsonb one.
func isSetReturning(name string) bool {
	_, ok := jsonbSRFs[name]
	return ok || name == fnUnnest
}

// bindJSONBSRF binds the arguments of jsonb set-returning function name
// into the arrays to unnest and their column names.
func (b *binder) bindJSONBSRF(name string, args []ir.Expr, loc int32) ([]ir.Expr, jsonbSRF, error) {
	srf := jsonbSRFs[name]
	if len(args) != max(srf.args, 1) {
		return nil, srf, b.errAt(loc, noSuchFunction(name, args))
	}
	var arrays []ir.Expr
	for _, fn := range srf.fns {
		e, err := b.resolveCall(fn, args, loc)
		if err != nil {
			if sqlerr.Code(err) == sqlerr.UndefinedFunction {
				return nil, srf, b.errAt(loc, noSuchFunction(name, args))
			}
			return nil, srf, err
		}
		arrays = append(arrays, e)
	}
	return arrays, srf, nil
}

// bindJSONBSubscript binds j['key'] and j[n] (PostgreSQL 14's jsonb
// subscripting, for reading): -> with a text or an integer subscript.
func (b *binder) bindJSONBSubscript(ctx *exprCtx, j ir.Expr, sub *pg_query.Node, loc int32) (ir.Expr, error) {
	s, err := b.bindExpr(ctx, sub)
	if err != nil {
		return nil, err
	}
	s = b.defaultType(s)
	fn := ir.FnJSONBField
	if s.Type().IsInteger() {
		fn = ir.FnJSONBElem
	}
	return b.resolveCall(fn, []ir.Expr{j, s}, loc)
}
