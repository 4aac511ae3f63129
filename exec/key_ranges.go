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
	prefixes, n := keyPrefixes(pinned, key, ts)
	if n == 0 {
		return nil, false
	}
	for _, pre := range prefixes {
		ranges = append(ranges, KeyRange{Lower: pre, Upper: state.PrefixEnd(pre)})
	}
	return ranges, true
}

// keyPrefixes returns the sorted, distinct key prefixes of the first n
// pinned columns (key are their indexes, ts the relation's column types):
// every combination of their constants. n stops short of len(pinned) at a
// column whose constants fail to evaluate or that would make more than
// maxKeyRanges prefixes; with n = 0 the only prefix is the empty one.
func keyPrefixes(pinned [][]sql.Expr, key []int, ts []types.T) (prefixes [][]byte, n int) {
	prefixes = [][]byte{nil}
	for p, consts := range pinned {
		t := ts[key[p]]
		vals, ok := constValues(consts)
		if !ok || len(prefixes)*len(vals) > maxKeyRanges {
			break
		}
		next := make([][]byte, 0, len(prefixes)*len(vals))
		for _, pre := range prefixes {
			for _, v := range vals {
				next = append(next, state.AppendKeyDatum(slices.Clip(pre), t, v))
			}
		}
		prefixes = next
		n++
	}
	slices.SortFunc(prefixes, bytes.Compare)
	prefixes = slices.CompactFunc(prefixes, bytes.Equal)
	return prefixes, n
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
