package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// information_schema._pg_expandarray(a) is the set-returning function that
// pgJDBC's DatabaseMetaData (getPrimaryKeys, getIndexInfo) calls over
// pg_index.indkey: one row (x, n) per element, x the element and n its
// subscript. It binds as unnest over _pg_expandarray_rows(a), the array of
// those rows. An int2vector argument (which streamsql's catalog holds as
// its text, the numbers separated by spaces) is read as int2[] first, as
// PostgreSQL's int2vector is binary-coercible to int2[].

// bindExpandArrayRows binds the array _pg_expandarray(args) unnests.
func (b *binder) bindExpandArrayRows(args []ir.Expr, loc int32) (ir.Expr, error) {
	if len(args) == 1 && args[0].Type().Kind == types.Text {
		split := &ir.Call{Fn: "string_to_array", T: types.ArrayOf(types.TextT),
			Args: []ir.Expr{args[0], &ir.Const{Value: types.DText(" "), T: types.TextT}}}
		args = []ir.Expr{&ir.Cast{Arg: split, T: types.ArrayOf(types.Int16T)}}
	}
	return b.bindArrayCall(ir.FnExpandArrayRows, args, loc)
}

// expandArrayField maps a row of _pg_expandarray to its field i (x, n), for
// the function's two columns in FROM.
func expandArrayField(i int) func(ir.Expr) ir.Expr {
	return func(row ir.Expr) ir.Expr {
		return &ir.Call{Fn: ir.FnStructField, Args: []ir.Expr{row, &ir.Const{Value: types.DInt(int64(i)), T: types.Int32T}},
			T: row.Type().Fields.At(i).Type}
	}
}

// bindVectorSubscript binds v[i] over a catalog vector v.
func (b *binder) bindVectorSubscript(ctx *exprCtx, v ir.Expr, i *pg_query.Node, loc int32) (ir.Expr, error) {
	ie, err := b.bindExpr(ctx, i)
	if err != nil {
		return nil, err
	}
	if ie, err = b.coerce(ie, types.Int32T, loc); err != nil {
		return nil, err
	}
	var e ir.Expr = &ir.Call{Fn: ir.FnVectorSubscript, Args: []ir.Expr{v, ie}, T: types.Int64T}
	if k := v.Type().Elem; k != types.Int64 {
		e = &ir.Cast{Arg: e, T: types.T{Kind: k}}
	}
	return e, nil
}
