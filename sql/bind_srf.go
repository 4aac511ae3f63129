package sql

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/types"
)

// Set-returning functions that are unnest over an array function: each
// call binds as unnest(array call), in FROM and in the select list
// (bind_unnest.go), and takes the function's name as its column name.
//
//	regexp_split_to_table(s, pattern [, flags]) = unnest(regexp_split_to_array(...))
//
// regexp_matches(s, pattern [, flags]) returns one text[] per match (all of
// them with the g flag, else the first): it is unnest over the ordinals of
// the matches, regexp_match_ordinals(...), each ordinal k then mapped to
// regexp_match_nth(s, pattern, flags, k), as arrays of arrays do not exist.
var arraySRFs = map[string]string{
	"regexp_split_to_table": FnRegexSplitToArray,
	"regexp_matches":        FnRegexMatchOrdinals,
}

// The functions behind regexp_matches.
const (
	FnRegexMatchOrdinals = "regexp_match_ordinals"
	FnRegexMatchNth      = "regexp_match_nth"
)

// FnRegexSplitToArray is regexp_split_to_array(s, pattern [, flags]).
const FnRegexSplitToArray = "regexp_split_to_array"

// srfArray returns the array whose elements set-returning function fn
// returns for args, and, if the function's values are not those elements,
// the function that maps an element to the value.
func (b *binder) srfArray(fn string, args []Expr, loc int32) (Expr, func(Expr) Expr, error) {
	if fn == fnPgExpandArray {
		arr, err := b.bindExpandArrayRows(args, loc)
		return arr, nil, err
	}
	arr, err := b.resolveCall(arraySRFs[fn], args, loc)
	if err != nil || fn != "regexp_matches" {
		return arr, nil, err
	}
	conv := append([]Expr(nil), arr.(*Call).Args...)
	if len(conv) == 2 {
		conv = append(conv, &Const{Value: types.DText(""), T: types.TextT})
	}
	return arr, func(k Expr) Expr {
		return &Call{Fn: FnRegexMatchNth, Args: append(append([]Expr(nil), conv...), k), T: types.ArrayOf(types.TextT)}
	}, nil
}

func init() {
	txt := types.TextT
	def(FnRegexSplitToArray, types.ArrayOf(txt), txt, txt)
	def(FnRegexSplitToArray, types.ArrayOf(txt), txt, txt, txt)
	def(FnRegexMatchOrdinals, types.ArrayOf(types.Int32T), txt, txt)
	def(FnRegexMatchOrdinals, types.ArrayOf(types.Int32T), txt, txt, txt)
	def(FnRegexMatchNth, types.ArrayOf(txt), txt, txt, txt, types.Int32T)
}

// seriesOf types generate_series(start, stop [, step]) as PostgreSQL's
// overloads do: over integers (int, or bigint if an argument is), numeric
// (if an argument is), or timestamp and timestamptz with an interval step
// (timestamptz if start or stop is one, or a date).
func (b *binder) seriesOf(args []Expr, loc int32) (*GenerateSeries, error) {
	kinds := map[types.Kind]bool{}
	for _, a := range args {
		kinds[a.Type().Kind] = true
	}
	var t, step types.T
	switch {
	case len(args) == 3 && (kinds[types.Interval] || kinds[types.Timestamp] || kinds[types.TimestampTZ] || kinds[types.Date]):
		t, step = types.TimestampT, types.IntervalT
		for _, a := range args[:2] {
			if k := a.Type().Kind; k == types.TimestampTZ || k == types.Date {
				t = types.TimestampTZT
			}
		}
		if args[0].Type().Kind == types.Unknown && args[1].Type().Kind == types.Unknown {
			return nil, b.errAt(loc, notUnique("generate_series", args))
		}
	case kinds[types.Numeric]:
		t, step = types.NumericT, types.NumericT
	default:
		t, step = types.Int32T, types.Int32T
		for _, a := range args {
			switch a.Type().Kind {
			case types.Int64:
				t, step = types.Int64T, types.Int64T
			case types.Int16, types.Int32, types.Unknown:
			default:
				return nil, b.errAt(loc, noSuchFunction("generate_series", args))
			}
		}
	}
	conv := make([]Expr, len(args))
	for i, a := range args {
		want := t
		if i == 2 {
			want = step
		}
		var err error
		if conv[i], err = b.coerce(a, want, loc); err != nil {
			return nil, b.errAt(loc, noSuchFunction("generate_series", args))
		}
	}
	gs := &GenerateSeries{Start: conv[0], Stop: conv[1], Col: Column{Name: "generate_series", Type: t}}
	if t.Kind == types.TimestampTZ {
		gs.Zone = b.zoneName()
	}
	switch {
	case len(conv) == 3:
		gs.Step = conv[2]
	case t.Kind == types.Timestamp || t.Kind == types.TimestampTZ:
		return nil, b.errAt(loc, noSuchFunction("generate_series", args))
	default:
		one, err := b.castTo(&Const{Value: types.DText("1"), T: types.UnknownT}, t, loc, false)
		if err != nil {
			return nil, err
		}
		gs.Step = one
	}
	return gs, nil
}

// bindGenerateSubscripts binds generate_subscripts(array, dim [, reverse])
// in FROM: the subscripts of dimension dim, array_lower to array_upper, or
// back with reverse.
func (b *binder) bindGenerateSubscripts(rf *pg_query.RangeFunction, f *pg_query.FuncCall) (Rel, *scope, error) {
	const fn = "generate_subscripts"
	args, err := b.bindExprs(&exprCtx{clause: "FROM"}, f.Args)
	if err != nil {
		return nil, nil, err
	}
	if len(args) < 2 || len(args) > 3 || args[0].Type().Kind != types.Array {
		return nil, nil, b.errAt(f.Location, noSuchFunction(fn, args))
	}
	dim, err := b.coerce(args[1], types.Int32T, f.Location)
	if err != nil {
		return nil, nil, b.errAt(f.Location, noSuchFunction(fn, args))
	}
	lower, err := b.bindArrayCall("array_lower", []Expr{args[0], dim}, f.Location)
	if err != nil {
		return nil, nil, err
	}
	upper, err := b.bindArrayCall("array_upper", []Expr{args[0], dim}, f.Location)
	if err != nil {
		return nil, nil, err
	}
	i4 := types.Int32T
	gs := &GenerateSeries{Start: lower, Stop: upper, Step: &Const{Value: types.DInt(1), T: i4}, Col: Column{Name: fn, Type: i4}}
	if len(args) == 3 {
		rev, err := b.coerce(args[2], types.BoolT, f.Location)
		if err != nil {
			return nil, nil, b.errAt(f.Location, noSuchFunction(fn, args))
		}
		pick := func(yes, no Expr) Expr {
			return &Case{T: i4, Whens: []When{{Cond: rev, Then: yes}}, Else: no}
		}
		// A NULL reverse yields no rows, as the strict function does.
		gs.Start = &Case{T: i4, Whens: []When{{Cond: &Call{Fn: FnIsNull, T: types.BoolT, Args: []Expr{rev}}, Then: &Const{Value: types.Null, T: i4}}},
			Else: pick(upper, lower)}
		gs.Stop = pick(lower, upper)
		gs.Step = pick(&Const{Value: types.DInt(-1), T: i4}, &Const{Value: types.DInt(1), T: i4})
	}
	return b.seriesScope(rf, f, gs)
}

// FnSetseed is setseed(x), which seeds the session's random().
const FnSetseed = "setseed"

func init() {
	def(FnSetseed, types.TextT, types.Float64T)
}

// mapElements maps the element columns of u (after its first n columns)
// that have an element function to the function's value.
func mapElements(u Rel, n int, elems []func(Expr) Expr) Rel {
	mapped := false
	for _, f := range elems {
		mapped = mapped || f != nil
	}
	if !mapped {
		return u
	}
	cols := append([]Column(nil), u.Columns()...)
	exprs := make([]Expr, len(cols))
	for i, c := range cols {
		exprs[i] = &InputRef{Index: i, T: c.Type, Name: c.Name}
		if k := i - n; k >= 0 && k < len(elems) && elems[k] != nil {
			exprs[i] = elems[k](exprs[i])
			cols[i].Type = exprs[i].Type()
		}
	}
	return &Project{Input: u, Exprs: exprs, Cols: cols}
}
