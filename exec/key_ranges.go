package exec

import (
	"bytes"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
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
func KeyRanges(pinned [][]ir.Expr, key []int, ts []types.T) (ranges []KeyRange, ok bool) {
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
func keyPrefixes(pinned [][]ir.Expr, key []int, ts []types.T) (prefixes [][]byte, n int) {
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
func constValues(es []ir.Expr) (vals []types.Datum, ok bool) {
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

// KeyRangesOf is KeyRanges narrowed by the condition a scan's predicate
// puts on the key column after the pinned ones (planner.RangedKey; nil for
// none): within each pinned prefix, only the intervals of that column it
// allows. ectx evaluates the condition's constants; a bound that fails to
// evaluate is dropped (the predicate reports the error on the rows read).
// ok is false when nothing narrows the scan. The ranges are sorted and
// disjoint, and the rows in them must still be checked against the
// predicate.
func KeyRangesOf(ectx *eval.Context, pinned [][]ir.Expr, cond *planner.RangeCond, key []int, ts []types.T) (ranges []KeyRange, ok bool) {
	prefixes, n := keyPrefixes(pinned, key, ts)
	if cond == nil || n < len(pinned) || n >= len(key) {
		return KeyRanges(pinned, key, ts)
	}
	spans, bounded := condSpans(ectx, cond, ts[key[n]])
	if !bounded || len(prefixes)*len(spans) > maxKeyRanges {
		return KeyRanges(pinned, key, ts)
	}
	ranges = make([]KeyRange, 0, len(prefixes)*len(spans))
	for _, pre := range prefixes {
		for _, s := range spans {
			kr := KeyRange{Lower: append(slices.Clip(pre), s.Lower...)}
			if s.Upper != nil {
				kr.Upper = append(slices.Clip(pre), s.Upper...)
			} else {
				kr.Upper = state.PrefixEnd(pre)
			}
			ranges = append(ranges, kr)
		}
	}
	return ranges, true
}

// valuesStart is the smallest encoding of a non-NULL key value: intervals
// start there when unbounded below, as no comparison holds for NULL.
var valuesStart = []byte{0x01}

// condSpans returns the intervals of encodings of one key column (of type
// t) that hold every value cond allows, sorted and disjoint; an interval's
// nil Upper is the end of the column's values. bounded is false when cond
// allows every value.
func condSpans(ectx *eval.Context, cond *planner.RangeCond, t types.T) (spans []KeyRange, bounded bool) {
	switch {
	case len(cond.And) > 0:
		for _, c := range cond.And {
			s, ok := condSpans(ectx, c, t)
			if !ok {
				continue
			}
			if bounded {
				spans = intersectSpans(spans, s)
			} else {
				spans, bounded = s, true
			}
		}
		return spans, bounded
	case len(cond.Or) > 0:
		for _, c := range cond.Or {
			s, ok := condSpans(ectx, c, t)
			if !ok {
				return nil, false
			}
			spans = unionSpans(spans, s)
		}
		return spans, true
	}
	return boundSpan(ectx, cond.Leaf, t)
}

// boundSpan returns the interval of encodings of the values within r.
func boundSpan(ectx *eval.Context, r *planner.RangeBound, t types.T) (spans []KeyRange, bounded bool) {
	s := KeyRange{Lower: valuesStart}
	if r.Lower != nil {
		d, incl, ok := boundValue(ectx, r.Lower, r.LowerIncl, r.Loose, t, -1)
		switch {
		case ok && d.Null:
			return []KeyRange{}, true // col > NULL holds for no row
		case ok:
			s.Lower = state.AppendKeyDatum(nil, t, d)
			if !incl {
				s.Lower = state.PrefixEnd(s.Lower)
			}
			bounded = true
		}
	}
	if r.Upper != nil {
		d, incl, ok := boundValue(ectx, r.Upper, r.UpperIncl, r.Loose, t, +1)
		switch {
		case ok && d.Null:
			return []KeyRange{}, true
		case ok:
			s.Upper = state.AppendKeyDatum(nil, t, d)
			if incl {
				s.Upper = state.PrefixEnd(s.Upper)
			}
			bounded = true
		}
	}
	if !bounded {
		return nil, false
	}
	if s.Upper != nil && bytes.Compare(s.Lower, s.Upper) >= 0 {
		return []KeyRange{}, true
	}
	return []KeyRange{s}, true
}

// boundValue evaluates a bound of type t; a loose one is widened by one
// unit away from the interval (dir -1 for a lower bound, +1 for an upper
// one) and made inclusive. ok is false when the bound must be dropped.
func boundValue(ectx *eval.Context, e ir.Expr, incl, loose bool, t types.T, dir int64) (d types.Datum, inclusive, ok bool) {
	d, err := eval.EvalDatum(ectx, e)
	if err != nil {
		return d, false, false
	}
	if !loose || d.Null {
		return d, incl, true
	}
	switch t.Kind {
	case types.Int16, types.Int32, types.Int64, types.Date:
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		switch t.Kind {
		case types.Int16:
			lo, hi = math.MinInt16, math.MaxInt16
		case types.Int32, types.Date:
			lo, hi = math.MinInt32, math.MaxInt32
		}
		if dir < 0 && d.I <= lo || dir > 0 && d.I >= hi {
			return d, false, false
		}
		d.I += dir
	case types.Numeric:
		d.Dec = d.Dec.Add(decimal128.FromI64(dir))
	default:
		return d, false, false
	}
	return d, true, true
}

// unionSpans merges two sorted, disjoint interval lists.
func unionSpans(a, b []KeyRange) []KeyRange {
	all := append(slices.Clone(a), b...)
	slices.SortFunc(all, func(x, y KeyRange) int { return bytes.Compare(x.Lower, y.Lower) })
	out := make([]KeyRange, 0, len(all))
	for _, s := range all {
		if n := len(out); n > 0 && (out[n-1].Upper == nil || bytes.Compare(s.Lower, out[n-1].Upper) <= 0) {
			if out[n-1].Upper != nil && (s.Upper == nil || bytes.Compare(s.Upper, out[n-1].Upper) > 0) {
				out[n-1].Upper = s.Upper
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// intersectSpans intersects two sorted, disjoint interval lists.
func intersectSpans(a, b []KeyRange) []KeyRange {
	out := []KeyRange{}
	for i, j := 0, 0; i < len(a) && j < len(b); {
		lo := a[i].Lower
		if bytes.Compare(b[j].Lower, lo) > 0 {
			lo = b[j].Lower
		}
		hi, ai := a[i].Upper, true
		if hi == nil || b[j].Upper != nil && bytes.Compare(b[j].Upper, hi) < 0 {
			hi, ai = b[j].Upper, false
		}
		if hi == nil || bytes.Compare(lo, hi) < 0 {
			out = append(out, KeyRange{Lower: lo, Upper: hi})
		}
		if ai {
			i++
		} else {
			j++
		}
	}
	return out
}
