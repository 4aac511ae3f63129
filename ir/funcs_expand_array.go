package ir

import (
	"github.com/streamsql/streamsql/types"
)

const (
	FnPgExpandArray = "information_schema._pg_expandarray"
	// FnExpandArrayRows is _pg_expandarray_rows(a): the array of the
	// (x, n) rows of _pg_expandarray(a).
	FnExpandArrayRows = "_pg_expandarray_rows"
)

// expandArrayRowT is the row type of _pg_expandarray over elements of type
// elem.
func expandArrayRowT(elem types.T) types.T {
	return types.StructOf([]types.Field{{Name: "x", Type: elem}, {Name: "n", Type: types.Int32T}})
}

func init() {
	ArraySRFs[FnPgExpandArray] = FnExpandArrayRows
	ArrayFuncs[FnExpandArrayRows] = []ArraySig{{Args: "a", strict: true,
		Result: func(e types.T) types.T { return types.ArrayOf(expandArrayRowT(e)) }}}
}

// FnVectorSubscript is vector_subscript(v, i): number i (from 0) of a
// catalog vector (int2vector, oidvector), NULL outside it.
const FnVectorSubscript = "vector_subscript"

func init() {
	def(FnVectorSubscript, types.Int64T, types.TextT, types.Int32T)
}
