package eval

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/types"
)

// Bytea and uuid columns are Arrow Binary columns: the same offsets and data
// layout as text's String columns, so strView reads them and strOut builds
// them (with its data type set to Binary).

// varBytes is a column of variable-length values: *array.String or
// *array.Binary.
type varBytes interface {
	arrow.Array
	ValueOffsets() []int32
}

// isVarBytes reports whether col is a String or Binary column.
func isVarBytes(col arrow.Array) bool {
	id := col.DataType().ID()
	return id == arrow.STRING || id == arrow.BINARY
}

// newBinOut is newStrOut for a Binary column.
func newBinOut(mem memory.Allocator, n, dataHint int) *strOut {
	o := newStrOut(mem, n, dataHint)
	o.dt = arrow.BinaryTypes.Binary
	return o
}

// newVarOut returns the builder of a column of t, text, bytea or uuid.
func newVarOut(mem memory.Allocator, t types.T, n, dataHint int) *strOut {
	if t.Kind == types.Bytea || t.Kind == types.UUID {
		return newBinOut(mem, n, dataHint)
	}
	return newStrOut(mem, n, dataHint)
}
