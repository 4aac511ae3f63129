package exec

import (
	"bytes"
	"slices"

	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// maxKeyRanges bounds the ranges keyRanges derives (IN lists multiply).
const maxKeyRanges = 4096

// KeyRanges returns the key ranges of a table's state that hold every row
// matching where, when where pins a prefix of the key: an AND of conjuncts
// among which `keycol = constant` or `keycol IN (constants)` for the first
// key columns. ok is false when it does not (the whole table must be read).
// The ranges are sorted and disjoint; rows in them must still be checked
// against where.
func KeyRanges(where sql.Expr, key []int, ts []types.T) (ranges []KeyRange, ok bool) {
	if where == nil || len(key) == 0 {
		return nil, false
	}
	var conjuncts []sql.Expr
	var split func(e sql.Expr)
	split = func(e sql.Expr) {
		if c, ok := e.(*sql.Call); ok && c.Fn == sql.FnAnd {
			for _, a := range c.Args {
				split(a)
			}
			return
		}
		conjuncts = append(conjuncts, e)
	}
	split(where)

	prefixes := [][]byte{nil}
	for p, col := range key {
		vals, found := pinnedValues(conjuncts, col, ts[col])
		if !found {
			if p == 0 {
				return nil, false
			}
			break
		}
		if len(prefixes)*len(vals) > maxKeyRanges {
			break
		}
		next := make([][]byte, 0, len(prefixes)*len(vals))
		for _, pre := range prefixes {
			for _, v := range vals {
				next = append(next, state.AppendKeyDatum(slices.Clip(pre), ts[col], v))
			}
		}
		prefixes = next
	}
	slices.SortFunc(prefixes, bytes.Compare)
	prefixes = slices.CompactFunc(prefixes, bytes.Equal)
	for _, pre := range prefixes {
		ranges = append(ranges, KeyRange{Lower: pre, Upper: state.PrefixEnd(pre)})
	}
	return ranges, true
}

// pinnedValues returns the non-NULL values that a conjunct allows for column
// col (of type t), if one pins it to constants. A NULL allows no row.
func pinnedValues(conjuncts []sql.Expr, col int, t types.T) ([]types.Datum, bool) {
	for _, c := range conjuncts {
		var consts []sql.Expr
		switch x := c.(type) {
		case *sql.Call:
			if x.Fn != sql.FnEq || len(x.Args) != 2 {
				continue
			}
			switch {
			case isColumn(x.Args[0], col):
				consts = x.Args[1:]
			case isColumn(x.Args[1], col):
				consts = x.Args[:1]
			}
		case *sql.InList:
			if !x.Negate && isColumn(x.Arg, col) {
				consts = x.List
			}
		}
		if consts == nil {
			continue
		}
		vals, ok := constValues(consts, t)
		if ok {
			return vals, true
		}
	}
	return nil, false
}

// sameKeyType reports whether values of type a encode as keys of type b:
// equal types, or texts of any width.
func sameKeyType(a, b types.T) bool {
	return a == b || a.Kind == types.Text && b.Kind == types.Text
}

func isColumn(e sql.Expr, col int) bool {
	r, ok := e.(*sql.InputRef)
	return ok && r.Index == col
}

// constValues evaluates constant expressions of type t; ok is false if one
// is not constant, has another type or fails (the scan then reports the
// failure as usual).
func constValues(es []sql.Expr, t types.T) (vals []types.Datum, ok bool) {
	ectx := &eval.Context{Strict: true}
	for _, e := range es {
		if !sameKeyType(e.Type(), t) || hasInputRef(e) {
			return nil, false
		}
		d, err := eval.EvalDatum(ectx, e)
		if err != nil {
			return nil, false
		}
		if !d.Null {
			vals = append(vals, d)
		}
	}
	return vals, true
}

func hasInputRef(e sql.Expr) bool {
	found := false
	sql.Walk(e, func(x sql.Expr) bool {
		if _, ok := x.(*sql.InputRef); ok {
			found = true
		}
		return !found
	})
	return found
}
