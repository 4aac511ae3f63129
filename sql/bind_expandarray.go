package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/types"
)

// information_schema._pg_expandarray(a) is the set-returning function that
// pgJDBC's DatabaseMetaData (getPrimaryKeys, getIndexInfo) calls over
// pg_index.indkey: one row (x, n) per element, x the element and n its
// subscript. It binds as unnest over _pg_expandarray_rows(a), the array of
// those rows. An int2vector argument (which streamsql's catalog holds as
// its text, the numbers separated by spaces) is read as int2[] first, as
// PostgreSQL's int2vector is binary-coercible to int2[].

const (
	fnPgExpandArray = "information_schema._pg_expandarray"
	// FnExpandArrayRows is _pg_expandarray_rows(a): the array of the
	// (x, n) rows of _pg_expandarray(a).
	FnExpandArrayRows = "_pg_expandarray_rows"
)

// expandArrayRowT is the row type of _pg_expandarray over elements of type
// elem.
func expandArrayRowT(elem types.T) types.T {
	return types.StructOf([]types.Field{{Name: "x", Type: elem}, {Name: "n", Type: types.Int32T}})
}

// bindExpandArrayRows binds the array _pg_expandarray(args) unnests.
func (b *binder) bindExpandArrayRows(args []Expr, loc int32) (Expr, error) {
	if len(args) == 1 && args[0].Type().Kind == types.Text {
		split := &Call{Fn: "string_to_array", T: types.ArrayOf(types.TextT),
			Args: []Expr{args[0], &Const{Value: types.DText(" "), T: types.TextT}}}
		args = []Expr{&Cast{Arg: split, T: types.ArrayOf(types.Int16T)}}
	}
	return b.bindArrayCall(FnExpandArrayRows, args, loc)
}

func init() {
	arraySRFs[fnPgExpandArray] = FnExpandArrayRows
	arrayFuncs[FnExpandArrayRows] = []arraySig{{args: "a", strict: true,
		result: func(e types.T) types.T { return types.ArrayOf(expandArrayRowT(e)) }}}
}

// expandArrayField maps a row of _pg_expandarray to its field i (x, n), for
// the function's two columns in FROM.
func expandArrayField(i int) func(Expr) Expr {
	return func(row Expr) Expr {
		return &Call{Fn: FnStructField, Args: []Expr{row, &Const{Value: types.DInt(int64(i)), T: types.Int32T}},
			T: row.Type().Fields.At(i).Type}
	}
}

// FnVectorSubscript is vector_subscript(v, i): number i (from 0) of a
// catalog vector (int2vector, oidvector), NULL outside it.
const FnVectorSubscript = "vector_subscript"

// bindVectorSubscript binds v[i] over a catalog vector v.
func (b *binder) bindVectorSubscript(ctx *exprCtx, v Expr, i *pg_query.Node, loc int32) (Expr, error) {
	ie, err := b.bindExpr(ctx, i)
	if err != nil {
		return nil, err
	}
	if ie, err = b.coerce(ie, types.Int32T, loc); err != nil {
		return nil, err
	}
	var e Expr = &Call{Fn: FnVectorSubscript, Args: []Expr{v, ie}, T: types.Int64T}
	if k := v.Type().Elem; k != types.Int64 {
		e = &Cast{Arg: e, T: types.T{Kind: k}}
	}
	return e, nil
}

func init() {
	def(FnVectorSubscript, types.Int64T, types.TextT, types.Int32T)
}
