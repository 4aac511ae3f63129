package exec

import (
	"bytes"
	"slices"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// indexRanges returns the ranges of index entry keys holding every entry a
// lookup may find; ok is false when the lookup narrows nothing (the index
// is then not worth reading).
func indexRanges(l *planner.IndexLookup, ts []types.T) (ranges []KeyRange, ok bool) {
	cols := l.Index.Columns
	prefixes, n := keyPrefixes(l.Eq, cols, ts)
	var lower, upper types.Datum
	var haveLower, haveUpper bool
	if n == len(l.Eq) && l.Ranged() {
		ectx := &eval.Context{Strict: true}
		if l.Lower != nil {
			if d, err := eval.EvalDatum(ectx, l.Lower); err == nil {
				if d.Null {
					return []KeyRange{}, true // col > NULL holds for no row
				}
				lower, haveLower = d, true
			}
		}
		if l.Upper != nil {
			if d, err := eval.EvalDatum(ectx, l.Upper); err == nil {
				if d.Null {
					return []KeyRange{}, true
				}
				upper, haveUpper = d, true
			}
		}
	}
	if n == 0 && !haveLower && !haveUpper {
		return nil, false
	}
	ranges = []KeyRange{}
	for _, pre := range prefixes {
		kr := KeyRange{Lower: pre, Upper: state.PrefixEnd(pre)}
		if haveLower {
			b := state.AppendKeyDatum(slices.Clip(pre), ts[cols[n]], lower)
			if !l.LowerIncl {
				b = state.PrefixEnd(b)
			}
			kr.Lower = b
		}
		if haveUpper {
			b := state.AppendKeyDatum(slices.Clip(pre), ts[cols[n]], upper)
			if l.UpperIncl {
				b = state.PrefixEnd(b)
			}
			kr.Upper = b
		}
		if kr.Upper != nil && bytes.Compare(kr.Lower, kr.Upper) >= 0 {
			continue
		}
		ranges = append(ranges, kr)
	}
	return ranges, true
}

// IndexRowRanges reads index l of rel (its entries from r) and returns the
// key ranges of the rows the lookup finds, sorted and disjoint, one per
// row; ok is false when the lookup narrows nothing and the whole table must
// be read. The rows must still be checked against the predicate.
func IndexRowRanges(r interface {
	NewIter(lower, upper []byte) (*state.Iter, error)
}, l *planner.IndexLookup, rel *catalog.Relation) (rows []KeyRange, ok bool, err error) {
	ts := rel.Types()
	ranges, ok := indexRanges(l, ts)
	if !ok {
		return nil, false, nil
	}
	rows = []KeyRange{}
	if len(ranges) == 0 {
		return rows, true, nil
	}
	it, err := r.NewIter(ranges[0].Lower, ranges[0].Upper)
	if err != nil {
		return nil, false, err
	}
	defer it.Close()
	var keys [][]byte
	for i, kr := range ranges {
		if i > 0 {
			it.SetBounds(kr.Lower, kr.Upper)
		}
		for valid := it.First(); valid; valid = it.Next() {
			rest := it.Key()
			for _, c := range l.Index.Columns {
				if _, rest, err = state.DecodeKeyDatum(rest, ts[c]); err != nil {
					return nil, false, err
				}
			}
			keys = append(keys, slices.Clone(rest))
		}
		if err := it.Error(); err != nil {
			return nil, false, err
		}
	}
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	for _, k := range keys {
		rows = append(rows, KeyRange{Lower: k, Upper: state.PrefixEnd(k)})
	}
	return rows, true, nil
}
