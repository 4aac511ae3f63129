package eval

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// inNode is x [NOT] IN (list). Constant elements go into a set built once
// at compile time; other elements are compared row by row with the
// vectorized equality. NULL semantics: NULL if x is NULL, or if nothing
// matched and some element is NULL.
type inNode struct {
	arg    node
	t      types.T
	negate bool
	set    *constSet
	others []inOther
}

// inOther is a non-constant element, compared at type wt (the argument
// is cast to wt first when castArg).
type inOther struct {
	el      node
	wt      types.T
	castArg bool
}

// constSet is the set of the constant elements, keyed by kind.
type constSet struct {
	hasNull bool
	ints    map[int64]struct{}
	small   []int64 // ints, when there are few of them
	floats  map[float64]struct{}
	hasNaN  bool
	strs    map[string]struct{}
	decs    map[decimal128.Num]struct{}
	spans   map[i128]struct{}
	bools   [2]bool
}

const smallSet = 8

func compileIn(e *ir.InList) (node, error) {
	if e.Arg.Type().Kind == types.JSONB {
		return compileJSONBIn(e)
	}
	arg, err := compile(e.Arg)
	if err != nil {
		return nil, err
	}
	t := e.Arg.Type()
	n := &inNode{arg: arg, t: t, negate: e.Negate, set: &constSet{}}
	var consts []types.Datum
	for _, el := range e.List {
		en, err := compile(el)
		if err != nil {
			return nil, err
		}
		if k, ok := asConst(en); ok {
			if k.d.Null {
				n.set.hasNull = true
				continue
			}
			if t.Kind == types.Numeric {
				// Bring the constant to the argument's scale; one that
				// cannot be represented there equals no value of it.
				d, ok := numConvert(el.Type(), k.d.Dec, t)
				if !ok || numCompareTypes(t, d, el.Type(), k.d.Dec) != 0 {
					continue
				}
				consts = append(consts, types.DNumeric(d))
				continue
			}
			consts = append(consts, k.d)
			continue
		}
		o := inOther{el: en, wt: t}
		if t.Kind == types.Numeric && (t.HasTypmod != el.Type().HasTypmod || t.EffectiveScale() != el.Type().EffectiveScale()) {
			// Numerics of different scales: compare both as unconstrained
			// numerics.
			o.wt = types.NumericT
			o.castArg = t.HasTypmod
			if o.el, err = compileCast(en, o.wt); err != nil {
				return nil, err
			}
		}
		n.others = append(n.others, o)
	}
	n.set.build(t, consts)
	if _, ok := asConst(arg); ok && len(n.others) == 0 {
		// Fully constant: fold.
		k, _ := asConst(arg)
		return &constNode{t: types.BoolT, d: n.scalar(k.d)}, nil
	}
	return n, nil
}

func (s *constSet) build(t types.T, ds []types.Datum) {
	switch t.Kind {
	case types.Bool:
		for _, d := range ds {
			s.bools[d.I&1] = true
		}
	case types.Int16, types.Int32, types.Int64, types.Date, types.Timestamp, types.TimestampTZ:
		s.ints = map[int64]struct{}{}
		for _, d := range ds {
			s.ints[d.I] = struct{}{}
		}
		if len(s.ints) <= smallSet {
			for v := range s.ints {
				s.small = append(s.small, v)
			}
		}
	case types.Float32, types.Float64:
		s.floats = map[float64]struct{}{}
		for _, d := range ds {
			if math.IsNaN(d.F) {
				s.hasNaN = true
				continue
			}
			s.floats[d.F+0] = struct{}{} // -0 and 0 are one key
		}
	case types.Text, types.Bytea, types.UUID:
		s.strs = map[string]struct{}{}
		for _, d := range ds {
			s.strs[d.S] = struct{}{}
		}
	case types.Numeric:
		s.decs = map[decimal128.Num]struct{}{}
		for _, d := range ds {
			s.decs[numSetKey(t, d.Dec)] = struct{}{}
		}
	case types.Interval:
		s.spans = map[i128]struct{}{}
		for _, d := range ds {
			s.spans[intervalSpan(d.Ivl.ToArrow())] = struct{}{}
		}
	}
}

// scalar evaluates the IN over the constants for one value (constant
// folding and EvalDatum-free paths).
func (n *inNode) scalar(d types.Datum) types.Datum {
	if d.Null {
		return types.Null
	}
	found := false
	s := n.set
	switch n.t.Kind {
	case types.Bool:
		found = s.bools[d.I&1]
	case types.Int16, types.Int32, types.Int64, types.Date, types.Timestamp, types.TimestampTZ:
		_, found = s.ints[d.I]
	case types.Float32, types.Float64:
		if math.IsNaN(d.F) {
			found = s.hasNaN
		} else {
			_, found = s.floats[d.F]
		}
	case types.Text, types.Bytea, types.UUID:
		_, found = s.strs[d.S]
	case types.Numeric:
		_, found = s.decs[numSetKey(n.t, d.Dec)]
	case types.Interval:
		_, found = s.spans[intervalSpan(d.Ivl.ToArrow())]
	}
	switch {
	case found:
		return types.DBool(!n.negate)
	case s.hasNull:
		return types.Null
	}
	return types.DBool(n.negate)
}

func (n *inNode) typ() types.T { return types.BoolT }

func (n *inNode) eval(c *ectx, rec arrow.RecordBatch) (arrow.Array, error) {
	col, err := n.arg.eval(c, rec)
	if err != nil {
		return nil, err
	}
	defer col.Release()
	found := allocBits(c.mem, c.n, false)
	f := found.Bytes()
	s := n.set
	switch n.t.Kind {
	case types.Bool:
		bm, off := boolBits(col)
		for i := 0; i < c.n; i++ {
			v := bm[(off+i)>>3]>>((off+i)&7)&1 != 0
			f[i>>3] |= b2u((v && s.bools[1]) || (!v && s.bools[0])) << (i & 7)
		}
	case types.Int16:
		inInts(f, fixedVals[int16](col), s)
	case types.Int32, types.Date:
		inInts(f, fixedVals[int32](col), s)
	case types.Int64, types.Timestamp, types.TimestampTZ:
		inInts(f, fixedVals[int64](col), s)
	case types.Float32:
		inFloats(f, fixedVals[float32](col), s)
	case types.Float64:
		inFloats(f, fixedVals[float64](col), s)
	case types.Text, types.Bytea, types.UUID:
		v := viewOf(col)
		if len(s.strs) > 0 {
			for i := 0; i < c.n; i++ {
				_, ok := s.strs[v.at(i)]
				f[i>>3] |= b2u(ok) << (i & 7)
			}
		}
	case types.Numeric:
		if len(s.decs) > 0 {
			for i, x := range fixedVals[decimal128.Num](col) {
				_, ok := s.decs[numSetKey(n.t, x)]
				f[i>>3] |= b2u(ok) << (i & 7)
			}
		}
	case types.Interval:
		if len(s.spans) > 0 {
			for i, x := range fixedVals[arrow.MonthDayNanoInterval](col) {
				_, ok := s.spans[intervalSpan(x)]
				f[i>>3] |= b2u(ok) << (i & 7)
			}
		}
	}
	// sawNull: some element is NULL at the row.
	nb := (c.n + 7) >> 3
	sawNull := make([]byte, nb)
	if s.hasNull {
		for i := range sawNull {
			sawNull[i] = 0xff
		}
	}
	for _, o := range n.others {
		a := colNode(n.arg, col)
		if o.castArg {
			if a, err = compileCast(a, o.wt); err != nil {
				found.Release()
				return nil, err
			}
		}
		sub := &cmpNode{t: o.wt, a: a, b: o.el, op: opEq}
		vals, valid, err := sub.compute(c, rec)
		if err != nil {
			found.Release()
			return nil, err
		}
		vb := vals.Bytes()
		var eb []byte
		if valid != nil {
			eb = valid.Bytes()
		}
		for i := 0; i < nb; i++ {
			ok := byte(0xff)
			if eb != nil {
				ok = eb[i]
			}
			f[i] |= vb[i] & ok
			sawNull[i] |= ^ok
		}
		vals.Release()
		if valid != nil {
			valid.Release()
		}
	}
	// Result: NULL if the argument is NULL or (no match and a NULL seen).
	argValid := validBitsCopy(col, c.n)
	validBuf := allocBits(c.mem, c.n, false)
	vb := validBuf.Bytes()
	for i := 0; i < nb; i++ {
		vb[i] = argValid[i] & (f[i] | ^sawNull[i])
		if n.negate {
			f[i] = ^f[i]
		}
	}
	clearPadding(vb, c.n)
	clearPadding(f, c.n)
	return makeArray(arrow.FixedWidthTypes.Boolean, c.n, validBuf, found), nil
}

func inInts[T integer](f []byte, vals []T, s *constSet) {
	switch {
	case len(s.ints) == 0:
	case s.small != nil:
		small := s.small
		for i, v := range vals {
			x := int64(v)
			hit := false
			for _, k := range small {
				hit = hit || x == k
			}
			f[i>>3] |= b2u(hit) << (i & 7)
		}
	default:
		for i, v := range vals {
			_, ok := s.ints[int64(v)]
			f[i>>3] |= b2u(ok) << (i & 7)
		}
	}
}

func inFloats[T float](f []byte, vals []T, s *constSet) {
	for i, v := range vals {
		x := float64(v)
		var ok bool
		if x != x {
			ok = s.hasNaN
		} else if len(s.floats) > 0 {
			_, ok = s.floats[x]
		}
		f[i>>3] |= b2u(ok) << (i & 7)
	}
}

// numSetKey is the set key of numeric slot x of type t: unconstrained values
// without trailing zeros, so that 1.5 finds 1.50.
func numSetKey(t types.T, x decimal128.Num) decimal128.Num {
	if t.DynamicNumeric() {
		return types.NormalizeNumeric(x)
	}
	return x
}
