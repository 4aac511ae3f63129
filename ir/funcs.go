package ir

import "github.com/streamsql/streamsql/types"

// overloads maps a function name to its signatures. The table is the single
// source of truth for what scalar functions exist: the binder resolves calls
// against it and the evaluator must provide a kernel for every entry (a test in
// the evaluator enforces that).
var overloads = map[string][]*Overload{}

// Overloads returns every overload, for evaluators that check their coverage.
func Overloads() []*Overload {
	var all []*Overload
	for _, os := range overloads {
		all = append(all, os...)
	}
	return all
}

// FunctionOverloads returns the overloads of fn, or nil if fn is unknown.
func FunctionOverloads(fn string) []*Overload { return overloads[fn] }

func def(fn string, result types.T, args ...types.T) *Overload {
	o := &Overload{Fn: fn, Args: args, Result: result, Strict: true}
	overloads[fn] = append(overloads[fn], o)
	return o
}

var (
	numberTypes = []types.T{types.Int16T, types.Int32T, types.Int64T, types.NumericT, types.Float32T, types.Float64T}
	// comparableTypes are the types with a total order.
	comparableTypes = []types.T{
		types.BoolT, types.Int16T, types.Int32T, types.Int64T, types.NumericT, types.Float32T,
		types.Float64T, types.TextT, types.DateT, types.TimestampT, types.TimestampTZT, types.IntervalT,
		types.JSONBT,
	}
)

func init() {
	b, i4, f8, txt := types.BoolT, types.Int32T, types.Float64T, types.TextT
	date, ts, tstz, ivl, num := types.DateT, types.TimestampT, types.TimestampTZT, types.IntervalT, types.NumericT

	for _, t := range numberTypes {
		for _, fn := range []string{FnAdd, FnSub, FnMul, FnDiv} {
			def(fn, t, t, t)
		}
		if t.Kind != types.Float32 && t.Kind != types.Float64 {
			def(FnMod, t, t, t)
		}
		if t.IsInteger() {
			for _, fn := range []string{FnBitAnd, FnBitOr, FnBitXor} {
				def(fn, t, t, t)
			}
		}
		def(FnNeg, t, t)
		def(FnAbs, t, t)
	}
	def(FnAdd, date, date, i4)
	def(FnAdd, date, i4, date)
	def(FnSub, date, date, i4)
	def(FnSub, i4, date, date)
	for _, t := range []types.T{ts, tstz} {
		def(FnAdd, t, t, ivl)
		def(FnAdd, t, ivl, t)
		def(FnSub, t, t, ivl)
		def(FnSub, ivl, t, t)
	}
	def(FnAdd, ts, date, ivl)
	def(FnAdd, ts, ivl, date)
	def(FnSub, ts, date, ivl)
	def(FnAdd, ivl, ivl, ivl)
	def(FnSub, ivl, ivl, ivl)
	def(FnMul, ivl, ivl, f8)
	def(FnMul, ivl, f8, ivl)
	def(FnDiv, ivl, ivl, f8)
	def(FnNeg, ivl, ivl)

	for _, t := range comparableTypes {
		for _, fn := range []string{FnEq, FnNe, FnLt, FnLe, FnGt, FnGe} {
			def(fn, b, t, t)
		}
		def(FnIsDistinct, b, t, t).Strict = false
		def(FnIsNotDistinct, b, t, t).Strict = false
		def(FnIsNull, b, t).Strict = false
		def(FnIsNotNull, b, t).Strict = false
		def(FnCoalesce, t, t).Variadic = true
		overloads[FnCoalesce][len(overloads[FnCoalesce])-1].Strict = false
		def(FnNullIf, t, t, t).Strict = false
		g := def(FnGreatest, t, t)
		g.Variadic, g.Strict = true, false
		l := def(FnLeast, t, t)
		l.Variadic, l.Strict = true, false
		def(FnSingleRow, t, types.Int64T, t).Strict = false
	}
	and := def(FnAnd, b, b)
	and.Variadic, and.Strict = true, false
	or := def(FnOr, b, b)
	or.Variadic, or.Strict = true, false
	def(FnNot, b, b)
	def(FnIsTrue, b, b).Strict = false
	def(FnIsFalse, b, b).Strict = false

	def(FnLike, b, txt, txt)
	def(FnILike, b, txt, txt)
	def(FnConcatOp, txt, txt, txt)
	for _, fn := range []string{FnLower, FnUpper, FnReverse, FnInitcap} {
		def(fn, txt, txt)
	}
	for _, fn := range []string{FnTrim, FnLTrim, FnRTrim} {
		def(fn, txt, txt)
		def(fn, txt, txt, txt)
	}
	def(FnLength, i4, txt)
	def(FnOctetLen, i4, txt)
	def(FnSubstr, txt, txt, i4)
	def(FnSubstr, txt, txt, i4, i4)
	def(FnReplace, txt, txt, txt, txt)
	def(FnStrpos, i4, txt, txt)
	def(FnLeft, txt, txt, i4)
	def(FnRight, txt, txt, i4)
	def(FnRepeat, txt, txt, i4)
	def(FnSplitPart, txt, txt, txt, i4)
	textArr := types.ArrayOf(txt)
	def("regexp_match", textArr, txt, txt)
	def("regexp_match", textArr, txt, txt, txt)
	def("string_to_array", textArr, txt, txt).Strict = false
	def("string_to_array", textArr, txt, txt, txt).Strict = false
	def(FnStartsWith, b, txt, txt)
	def(FnLPad, txt, txt, i4)
	def(FnLPad, txt, txt, i4, txt)
	def(FnRPad, txt, txt, i4)
	def(FnRPad, txt, txt, i4, txt)
	c := def(FnConcat, txt, txt)
	c.Variadic, c.Strict = true, false

	for _, t := range []types.T{num, f8} {
		def(FnRound, t, t)
		def(FnTrunc, t, t)
		def(FnFloor, t, t)
		def(FnCeil, t, t)
		def(FnSign, t, t)
	}
	def(FnRound, num, num, i4)
	def(FnTrunc, num, num, i4)
	for _, fn := range []string{FnSqrt, FnExp, FnLn, FnLog10} {
		def(fn, f8, f8)
	}
	def(FnPower, f8, f8, f8)

	for _, t := range []types.T{date, ts, tstz, ivl} {
		def(FnExtract, num, txt, t)
		def(FnDatePart, f8, txt, t)
	}
	def(FnDateTrunc, ts, txt, ts)
	def(FnDateTrunc, tstz, txt, tstz)
	def(FnDateTrunc, ivl, txt, ivl)
	def(FnNow, tstz)
	def(FnToTimestamp, tstz, f8)
	defFormatting()
}
