package planner

import (
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// RangeCond is what a predicate says about one key column, as a tree over
// intervals of its values: a row can match only if the column lies in the
// intersection of And, in the union of Or, or in Leaf. Conditions are
// conservative: every row the predicate keeps lies within, not the other
// way round (exec.KeyRangesOf; the predicate still applies).
type RangeCond struct {
	And, Or []*RangeCond
	Leaf    *RangeBound
}

// RangeBound is the interval of values between two constant expressions of
// the column's type: nil is unbounded, the Incl flags make a bound
// inclusive, and Lower == Upper is a single value (= and IN). Loose marks
// bounds cast to the column's type from the comparison's type (int column
// compared with 2.5): the cast may round, so exec widens the interval by one
// unit of the column's type, and drops a bound whose cast fails.
type RangeBound struct {
	Lower, Upper         ir.Expr
	LowerIncl, UpperIncl bool
	Loose                bool
	// Cast marks bounds that are casts of the compared constants to the
	// column's type (EXPLAIN shows the constants).
	Cast bool
}

// RangedKey returns what pred says about key column key[pinned] of a
// relation (ts its column types), the first one PinnedKey leaves unpinned:
// the conjuncts that compare it with constants (<, <=, >, >=, BETWEEN, =,
// IN, and ORs of those). It returns nil when none does, when every key
// column is pinned, or when the column's key order is not SQL's.
func RangedKey(pred ir.Expr, key []int, ts []types.T, pinned int) *RangeCond {
	if pred == nil || pinned >= len(key) {
		return nil
	}
	col := key[pinned]
	if !rangeable(ts[col]) {
		return nil
	}
	var and []*RangeCond
	for _, c := range splitAnd(pred, nil) {
		if r := rangeOf(c, col, ts[col]); r != nil {
			and = append(and, r)
		}
	}
	switch len(and) {
	case 0:
		return nil
	case 1:
		return and[0]
	}
	return &RangeCond{And: and}
}

// rangeable reports whether ranges of a column of type t may be read in key
// order: the key encoding orders its values as SQL does (NULL aside).
func rangeable(t types.T) bool {
	switch t.Kind {
	case types.Bool, types.Int16, types.Int32, types.Int64, types.Date,
		types.Timestamp, types.TimestampTZ, types.Float32, types.Float64,
		types.Numeric, types.Text, types.Bytea, types.UUID:
		return true
	}
	return false
}

// rangeOf returns the condition e puts on column col (of type t), or nil
// if it puts none that a range expresses.
func rangeOf(e ir.Expr, col int, t types.T) *RangeCond {
	switch x := e.(type) {
	case *ir.Call:
		switch x.Fn {
		case ir.FnAnd:
			var and []*RangeCond
			for _, a := range x.Args {
				if r := rangeOf(a, col, t); r != nil {
					and = append(and, r)
				}
			}
			if len(and) == 0 {
				return nil
			}
			return &RangeCond{And: and}
		case ir.FnOr:
			or := make([]*RangeCond, 0, len(x.Args))
			for _, a := range x.Args {
				r := rangeOf(a, col, t)
				if r == nil {
					return nil // one unbounded branch: the union is everything
				}
				or = append(or, r)
			}
			return &RangeCond{Or: or}
		case ir.FnEq, ir.FnLt, ir.FnLe, ir.FnGt, ir.FnGe:
			if len(x.Args) == 2 {
				return comparisonRange(x.Fn, x.Args[0], x.Args[1], col, t)
			}
		}
	case *ir.InList:
		if x.Negate {
			return nil
		}
		or := make([]*RangeCond, 0, len(x.List))
		for _, k := range x.List {
			r := comparisonRange(ir.FnEq, x.Arg, k, col, t)
			if r == nil {
				return nil
			}
			or = append(or, r)
		}
		return &RangeCond{Or: or}
	}
	return nil
}

// flipped is the comparison with its operands swapped: k < col is col > k.
var flipped = map[string]string{ir.FnEq: ir.FnEq, ir.FnLt: ir.FnGt, ir.FnLe: ir.FnGe, ir.FnGt: ir.FnLt, ir.FnGe: ir.FnLe}

// comparisonRange returns the interval of `a fn b` where one side is column
// col (possibly under an exact cast) and the other a constant, or nil.
func comparisonRange(fn string, a, b ir.Expr, col int, t types.T) *RangeCond {
	loose, ok := keyColumn(a, col, t)
	k := b
	if !ok {
		if loose, ok = keyColumn(b, col, t); !ok {
			return nil
		}
		k, fn = a, flipped[fn]
	}
	if !constantExpr(k) {
		return nil
	}
	kt := k.Type()
	switch {
	case kt == t || kt.Kind == types.Text && t.Kind == types.Text:
	case kt.Kind == types.Numeric && t.Kind == types.Numeric:
		loose = true // another scale: cast it
	case !loose:
		return nil
	}
	cast := loose
	if cast {
		k = &ir.Cast{Arg: k, T: t}
		// A cast between integers is exact (or fails): no rounding.
		loose = !(integerKind(kt.Kind) > 0 && integerKind(t.Kind) > 0)
	}
	r := &RangeBound{Loose: loose, Cast: cast}
	switch fn {
	case ir.FnEq:
		r.Lower, r.Upper, r.LowerIncl, r.UpperIncl = k, k, true, true
	case ir.FnGt, ir.FnGe:
		r.Lower, r.LowerIncl = k, fn == ir.FnGe
	case ir.FnLt, ir.FnLe:
		r.Upper, r.UpperIncl = k, fn == ir.FnLe
	}
	return &RangeCond{Leaf: r}
}

// keyColumn reports whether e is column col (of type t), or that column
// under a cast that maps its values one to one and in order (loose: the
// comparison is in the cast's type).
func keyColumn(e ir.Expr, col int, t types.T) (loose, ok bool) {
	if isColumn(e, col) {
		return false, true
	}
	c, isCast := e.(*ir.Cast)
	if !isCast || !isColumn(c.Arg, col) {
		return false, false
	}
	return true, exactCast(t, c.T)
}

// exactCast reports whether the cast of from to to is injective and
// preserves order, and a cast of to back to from rounds (so that a bound in
// to maps to one in from, one unit wide).
func exactCast(from, to types.T) bool {
	switch f := integerKind(from.Kind); {
	case f > 0:
		switch to.Kind {
		case types.Int16, types.Int32, types.Int64:
			return integerKind(to.Kind) >= f
		case types.Numeric:
			return true
		case types.Float64:
			return f <= 4
		}
	case from.Kind == types.Numeric:
		return to.Kind == types.Numeric && to.EffectiveScale() >= from.EffectiveScale()
	case from.Kind == types.Date:
		return to.Kind == types.Timestamp
	}
	return false
}

// constantExpr reports whether e has no column reference and no volatile
// call, so that a scan may evaluate it once.
func constantExpr(e ir.Expr) bool {
	ok := true
	ir.Walk(e, func(x ir.Expr) bool {
		switch x := x.(type) {
		case *ir.InputRef:
			ok = false
		case *ir.Call:
			if ir.Volatile(x.Fn) {
				ok = false
			}
		}
		return ok
	})
	return ok
}

// explainRange renders a range condition on column name for EXPLAIN.
func explainRange(r *RangeCond, name string) string {
	join := func(parts []*RangeCond, op string) string {
		s := make([]string, len(parts))
		for i, p := range parts {
			s[i] = explainRange(p, name)
			if len(p.And) > 0 || len(p.Or) > 0 {
				s[i] = "(" + s[i] + ")"
			}
		}
		return strings.Join(s, op)
	}
	switch {
	case len(r.And) > 0:
		return join(r.And, " AND ")
	case len(r.Or) > 0:
		return join(r.Or, " OR ")
	}
	l := r.Leaf
	str := func(e ir.Expr) string {
		if c, ok := e.(*ir.Cast); ok && l.Cast {
			e = c.Arg
		}
		return e.String()
	}
	if l.Lower != nil && l.Lower == l.Upper {
		return name + " = " + str(l.Lower)
	}
	var s []string
	if l.Lower != nil {
		op := " > "
		if l.LowerIncl {
			op = " >= "
		}
		s = append(s, name+op+str(l.Lower))
	}
	if l.Upper != nil {
		op := " < "
		if l.UpperIncl {
			op = " <= "
		}
		s = append(s, name+op+str(l.Upper))
	}
	return strings.Join(s, " AND ")
}

// keyRangeSuffix is the EXPLAIN text of a batch scan's key range.
func keyRangeSuffix(n *Scan) string {
	name := n.Relation.Columns[n.Relation.Key[len(n.Lookup)]].Name
	if len(n.Lookup) > 0 {
		return ", range: " + explainRange(n.Range, name)
	}
	return ", key range: " + explainRange(n.Range, name)
}

// narrowScan sets how a batch scan under pred reads its relation: the keys
// pred pins and the range it then allows on the next key column, or else
// the secondary index that narrows it most. An index that pins a column
// beats a key range; a key range beats an index range.
func narrowScan(scan *Scan, pred ir.Expr) {
	rel := scan.Relation
	scan.Lookup = PinnedKey(pred, rel.Key, rel.Types())
	scan.Range = RangedKey(pred, rel.Key, rel.Types(), len(scan.Lookup))
	if len(scan.Lookup) > 0 {
		return
	}
	scan.Index = ChooseIndex(pred, rel)
	switch {
	case scan.Index == nil:
	case scan.Range != nil && len(scan.Index.Eq) == 0:
		scan.Index = nil
	default:
		scan.Range = nil
	}
}

// integerKind is the width in bytes of an integer kind, 0 for other kinds.
func integerKind(k types.Kind) int {
	switch k {
	case types.Int16:
		return 2
	case types.Int32:
		return 4
	case types.Int64:
		return 8
	}
	return 0
}
