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

// KeyRanges returns the key ranges of a relation's state that hold every row
// of a scan whose predicate pins the first key columns to constants (see
// planner.PinnedKey; key are the key columns' indexes, ts the relation's
// column types). ok is false when nothing is pinned, or the first column's
// constants fail to evaluate (the scan then reads everything, and the
// predicate reports the error). The ranges are sorted and disjoint; rows in
// them must still be checked against the predicate.
func KeyRanges(pinned [][]sql.Expr, key []int, ts []types.T) (ranges []KeyRange, ok bool) {
	if len(pinned) == 0 {
		return nil, false
	}
	prefixes := [][]byte{nil}
	for p, consts := range pinned {
		t := ts[key[p]]
		vals, ok := constValues(consts)
		if !ok {
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
				next = append(next, state.AppendKeyDatum(slices.Clip(pre), t, v))
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

// constValues evaluates constant expressions, dropping NULLs (= NULL matches
// no row); ok is false if one fails.
func constValues(es []sql.Expr) (vals []types.Datum, ok bool) {
	ectx := &eval.Context{Strict: true}
	for _, e := range es {
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
