package sql

import (
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// byteaConcat reports whether l || r is bytea || bytea (an untyped literal
// taking bytea from the other side), which is not converted to text.
func byteaConcat(l, r ir.Expr) bool {
	lk, rk := l.Type().Kind, r.Type().Kind
	return (lk == types.Bytea || lk == types.Unknown) && (rk == types.Bytea || rk == types.Unknown) && lk != rk ||
		lk == types.Bytea && rk == types.Bytea
}

// noMinMax reports whether aggregate fn is min or max over bytea or uuid,
// which PostgreSQL does not define.
func noMinMax(fn string, t types.T) bool {
	switch t.Kind {
	case types.Bytea, types.UUID, types.Struct, types.Map, types.JSONB:
		// min and max of these do not exist, as in PostgreSQL.
		return fn == ir.AggMin || fn == ir.AggMax
	}
	return false
}
