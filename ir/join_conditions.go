package ir

import (
	"github.com/streamsql/streamsql/types"
)

// Conjuncts splits an AND tree into its conjuncts.
func Conjuncts(e Expr) []Expr {
	if e == nil {
		return nil
	}
	if c, ok := e.(*Call); ok && c.Fn == FnAnd {
		var out []Expr
		for _, a := range c.Args {
			out = append(out, Conjuncts(a)...)
		}
		return out
	}
	return []Expr{e}
}

// SideOf reports which inputs of a join an expression over the
// concatenated columns references: bit 0 the left (columns < nl), bit 1 the
// right.
func SideOf(e Expr, nl int) int {
	sides := 0
	Walk(e, func(x Expr) bool {
		if ref, ok := x.(*InputRef); ok {
			if ref.Index < nl {
				sides |= 1
			} else {
				sides |= 2
			}
		}
		return true
	})
	return sides
}

// ShiftRefs returns e with every column reference moved by delta.
func ShiftRefs(e Expr, delta int) Expr {
	return Rewrite(e, func(x Expr) Expr {
		if ref, ok := x.(*InputRef); ok {
			return &InputRef{Index: ref.Index + delta, T: ref.T, Name: ref.Name}
		}
		return x
	})
}

// KeyCompatible reports whether an equality between values of types a and b
// can be a hash join key: the types are identical (so their values encode
// alike) and equal values have equal key encodings, which intervals do not
// ('1 mon' = '30 days').
func KeyCompatible(a, b types.T) bool {
	return types.Identical(a, b) && a.Kind != types.Interval
}
