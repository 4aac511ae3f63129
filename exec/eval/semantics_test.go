package eval

import (
	"math"
	"testing"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

type exprCase struct {
	e    ir.Expr
	want string
}

func runCases(t *testing.T, cases []exprCase) {
	t.Helper()
	for _, c := range cases {
		check(t, c.e, c.want)
	}
}

const (
	eRange   = "ERROR 22003"
	eDivZero = "ERROR 22012"
	eDTRange = "ERROR 22008"
)

func TestArithmeticIntegers(t *testing.T) {
	add, sub, mul, div, mod := ir.FnAdd, ir.FnSub, ir.FnMul, ir.FnDiv, ir.FnMod
	runCases(t, []exprCase{
		{call(add, i4(2), i4(3)), "5"},
		{call(add, i4(math.MaxInt32), i4(1)), eRange},
		{call(add, i2(32767), i2(1)), eRange},
		{call(sub, i2(-32768), i2(1)), eRange},
		{call(add, i8(math.MaxInt64), i8(1)), eRange},
		{call(sub, i8(math.MinInt64), i8(1)), eRange},
		{call(sub, i8(0), i8(math.MinInt64)), eRange},
		{call(sub, i4(5), i4(7)), "-2"},
		{call(mul, i2(200), i2(200)), eRange},
		{call(mul, i4(46341), i4(46341)), eRange},
		{call(mul, i4(-46340), i4(46340)), "-2147395600"},
		{call(mul, i8(3037000500), i8(3037000500)), eRange},
		{call(mul, i8(-3037000499), i8(3037000499)), "-9223372030926249001"},
		{call(mul, i8(math.MinInt64), i8(-1)), eRange},
		{call(mul, i8(math.MinInt64), i8(1)), "-9223372036854775808"},
		{call(div, i4(-7), i4(2)), "-3"},
		{call(div, i4(7), i4(-2)), "-3"},
		{call(div, i4(1), i4(0)), eDivZero},
		{call(div, i2(-32768), i2(-1)), eRange},
		{call(div, i4(math.MinInt32), i4(-1)), eRange},
		{call(div, i8(math.MinInt64), i8(-1)), eRange},
		{call(div, i8(10), i8(-1)), "-10"},
		{call(mod, i4(7), i4(-3)), "1"},
		{call(mod, i4(-7), i4(3)), "-1"},
		{call(mod, i4(1), i4(0)), eDivZero},
		{call(mod, i4(math.MinInt32), i4(-1)), "0"},
		{call(mod, i8(math.MinInt64), i8(-1)), "0"},
		{call(ir.FnNeg, i4(math.MinInt32)), eRange},
		{call(ir.FnNeg, i2(5)), "-5"},
		{call(ir.FnAbs, i2(-32768)), eRange},
		{call(ir.FnAbs, i8(-5)), "5"},
		{call(add, i4(1), null(types.Int32T)), "NULL"},
	})
}

func TestArithmeticFloats(t *testing.T) {
	add, sub, mul, div := ir.FnAdd, ir.FnSub, ir.FnMul, ir.FnDiv
	inf, nan := math.Inf(1), math.NaN()
	runCases(t, []exprCase{
		{call(add, f8(0.1), f8(0.2)), "0.30000000000000004"},
		{call(add, f4(0.1), f4(0.2)), "0.3"},
		{call(div, f8(1), f8(0)), eDivZero},
		{call(div, f8(0), f8(0)), eDivZero},
		{call(div, f8(nan), f8(0)), "NaN"},
		{call(div, f8(1), f8(3)), "0.3333333333333333"},
		{call(mul, f8(1e308), f8(10)), eRange},
		{call(mul, f8(1e-300), f8(1e-300)), eRange},
		{call(mul, f8(0), f8(1e-300)), "0"},
		{call(mul, f4(3.4e38), f4(10)), eRange},
		{call(div, f8(1e-300), f8(1e300)), eRange},
		{call(add, f8(inf), f8(1)), "Infinity"},
		{call(sub, f8(inf), f8(inf)), "NaN"},
		{call(mul, f8(inf), f8(0)), "NaN"},
		{call(div, f8(1), f8(inf)), "0"},
		{call(ir.FnNeg, f8(1.5)), "-1.5"},
		{call(ir.FnAbs, f4(-2.5)), "2.5"},
		{call(add, f8(1e308), f8(1e308)), eRange},
	})
}

func TestArithmeticNumeric(t *testing.T) {
	add, sub, mul, div, mod := ir.FnAdd, ir.FnSub, ir.FnMul, ir.FnDiv, ir.FnMod
	n102 := types.NumericOf(10, 2)
	runCases(t, []exprCase{
		{call(add, num("1.5"), num("2.25")), "3.75"},
		{call(sub, num("1.5"), num("2.25")), "-0.75"},
		{call(div, num("1"), num("3")), "0.33333333333333333333"},
		{call(div, num("2"), num("3")), "0.66666666666666666667"},
		{call(div, num("-2"), num("3")), "-0.66666666666666666667"},
		{call(div, num("10"), num("4")), "2.5000000000000000"},
		{call(div, num("0"), num("3")), "0.00000000000000000000"},
		{call(add, num("1.5"), num("1")), "2.5"},
		{call(mul, num("2.50"), num("2.0")), "5.000"},
		{call(sub, num("2.50"), num("0.5")), "2.00"},
		{call(mod, num("7.50"), num("2")), "1.50"},
		{call(div, num("1"), num("0")), eDivZero},
		{call(mod, num("5"), num("0")), eDivZero},
		{call(mod, num("5.5"), num("2")), "1.5"},
		{call(mod, num("-5.5"), num("2")), "-1.5"},
		{call(mul, num("1.000001"), num("1.000001")), "1.000002000001"},
		{call(mul, num("0.0000005"), num("0.000001")), "0.0000000000005"},
		{call(mul, num("-0.0000005"), num("0.000001")), "-0.0000000000005"},
		{call(mul, num("99999999999999999999999999"), num("10")), "999999999999999999999999990"},
		// 36 significant digits: beyond them fraction digits round away, and
		// an integer part of more digits overflows.
		{call(mul, num("999999999999999999999999999999999999"), num("10")), eRange},
		{call(add, num("999999999999999999999999999999999999"), num("1")), eRange},
		{call(mul, num("1234567890123456789.123456789"), num("1234567890.123456789")), "1524157875323883675171467786.26733731"},
		{call(add, num("99999999999999999999999999"), num("1")), "100000000000000000000000000"},
		{call(mul, num("12345678901234.5"), num("-1000000000000")), "-12345678901234500000000000.0"},
		{call(mul, num("123456789012345.5"), num("-1000000000000")), "-123456789012345500000000000.0"},
		{call(div, num("12345678901234567890"), num("0.0001")), "123456789012345678900000.0000"},
		{call(div, num("1"), num("123456789012345678")), "0.000000000000000008100000072900000723"},
		{call(div, num("7"), num("123456789012345678.9")), "0.000000000000000056700000510300004644"},
		{call(div, num("98765432109876543210.5"), num("12345678901234567.89")), "8000.0000729000006634"},
		{call(add, lit(n102, "1.25"), num("1")), "2.25"},
		{call(mul, lit(n102, "1.25"), lit(n102, "2.00")), "2.5000"},
		{call(ir.FnNeg, num("1.5")), "-1.5"},
		{call(ir.FnAbs, num("-1.5")), "1.5"},
	})
}

func TestComparisons(t *testing.T) {
	eq, ne, lt, le, gt, ge := ir.FnEq, ir.FnNe, ir.FnLt, ir.FnLe, ir.FnGt, ir.FnGe
	nan, inf := math.NaN(), math.Inf(1)
	runCases(t, []exprCase{
		{call(eq, f8(nan), f8(nan)), "t"},
		{call(gt, f8(nan), f8(inf)), "t"},
		{call(lt, f8(1), f8(nan)), "t"},
		{call(ne, f8(nan), f8(1)), "t"},
		{call(ge, f8(nan), f8(nan)), "t"},
		{call(lt, f4(nan), f4(1)), "f"},
		{call(eq, f8(math.Copysign(0, -1)), f8(0)), "t"},
		{call(lt, txt("a"), txt("b")), "t"},
		{call(lt, txt("B"), txt("a")), "t"},
		{call(gt, txt("é"), txt("z")), "t"},
		{call(le, txt("ab"), txt("ab")), "t"},
		{call(lt, txt("ab"), txt("abc")), "t"},
		{call(eq, ivl("1 mon"), ivl("30 days")), "t"},
		{call(eq, ivl("1 day"), ivl("24 hours")), "t"},
		{call(lt, ivl("1 day"), ivl("25 hours")), "t"},
		{call(gt, ivl("-1 day"), ivl("-2 days")), "t"},
		{call(eq, num("1.5"), lit(types.NumericOf(10, 2), "1.50")), "t"},
		{call(lt, lit(types.NumericOf(38, 0), "12345678901234567890123456789012345678"), num("1")), "f"},
		{call(lt, num("1.5"), num("1.500000000001")), "t"},
		{call(lt, num("-2"), num("1")), "t"},
		{call(lt, boolc(false), boolc(true)), "t"},
		{call(eq, boolc(true), boolc(true)), "t"},
		{call(ge, boolc(false), boolc(true)), "f"},
		{call(lt, date("2020-01-01"), date("2020-01-02")), "t"},
		{call(gt, tsc("2020-01-01 00:00:01"), tsc("2020-01-01")), "t"},
		{call(le, tstzc("2020-01-01 00:00:00+01"), tstzc("2019-12-31 23:00:00")), "t"},
		{call(lt, i2(-1), i2(1)), "t"},
		{call(ne, i8(5), i8(5)), "f"},
		{call(eq, i4(1), null(types.Int32T)), "NULL"},
		{call(ir.FnIsDistinct, null(types.Int32T), i4(1)), "t"},
		{call(ir.FnIsDistinct, null(types.Int32T), null(types.Int32T)), "f"},
		{call(ir.FnIsNotDistinct, null(types.TextT), null(types.TextT)), "t"},
		{call(ir.FnIsNotDistinct, txt("a"), txt("a")), "t"},
		{call(ir.FnIsDistinct, f8(nan), f8(nan)), "f"},
		{call(ir.FnIsDistinct, num("1"), lit(types.NumericOf(5, 1), "1.0")), "f"},
	})
}

func TestLogic(t *testing.T) {
	and, or := ir.FnAnd, ir.FnOr
	nb := null(types.BoolT)
	divZero := call(ir.FnEq, call(ir.FnDiv, i4(1), i4(0)), i4(1))
	runCases(t, []exprCase{
		{call(and, nb, boolc(false)), "f"},
		{call(and, boolc(false), nb), "f"},
		{call(and, nb, boolc(true)), "NULL"},
		{call(and, boolc(true), boolc(true), boolc(true)), "t"},
		{call(and, boolc(true), nb, boolc(false)), "f"},
		{call(or, nb, boolc(true)), "t"},
		{call(or, nb, boolc(false)), "NULL"},
		{call(or, boolc(false), boolc(false), boolc(true)), "t"},
		{call(ir.FnNot, nb), "NULL"},
		{call(ir.FnNot, boolc(true)), "f"},
		{call(ir.FnIsTrue, nb), "f"},
		{call(ir.FnIsFalse, boolc(false)), "t"},
		{call(ir.FnIsFalse, nb), "f"},
		{call(ir.FnIsNull, null(types.TextT)), "t"},
		{call(ir.FnIsNotNull, txt("")), "t"},
		{call(ir.FnIsNull, i4(0)), "f"},
		// Left-to-right laziness, as PostgreSQL.
		{call(and, boolc(false), divZero), "f"},
		{call(or, boolc(true), divZero), "t"},
		{call(and, divZero, boolc(false)), eDivZero},
		{call(and, call(ir.FnNe, i4(0), i4(0)), call(ir.FnGt, call(ir.FnDiv, i4(1), i4(0)), i4(1))), "f"},
	})
}

func TestConditionals(t *testing.T) {
	i4n := null(types.Int32T)
	zero := i4(0)
	caseDiv := &ir.Case{
		Whens: []ir.When{{Cond: call(ir.FnNe, zero, i4(0)), Then: call(ir.FnDiv, i4(1), zero)}},
		Else:  i4(5), T: types.Int32T,
	}
	caseMulti := &ir.Case{
		Whens: []ir.When{
			{Cond: call(ir.FnGt, i4(3), i4(5)), Then: txt("big")},
			{Cond: call(ir.FnGt, i4(3), i4(1)), Then: txt("mid")},
		},
		Else: txt("small"), T: types.TextT,
	}
	caseNull := &ir.Case{
		Whens: []ir.When{{Cond: call(ir.FnGt, i4n, i4(1)), Then: i4(1)}},
		Else:  null(types.Int32T), T: types.Int32T,
	}
	caseNum := &ir.Case{
		Whens: []ir.When{{Cond: boolc(true), Then: lit(types.NumericOf(10, 2), "1.25")}},
		Else:  num("2"), T: types.NumericT,
	}
	caseBool := &ir.Case{
		Whens: []ir.When{{Cond: call(ir.FnLt, f8(1), f8(2)), Then: call(ir.FnIsNull, i4n)}},
		Else:  boolc(false), T: types.BoolT,
	}
	runCases(t, []exprCase{
		{caseDiv, "5"},
		{caseMulti, "mid"},
		{caseNull, "NULL"},
		{caseNum, "1.25"},
		{caseBool, "t"},
		{call(ir.FnCoalesce, i4n, i4(2), call(ir.FnDiv, i4(1), zero)), "2"},
		{call(ir.FnCoalesce, i4n, i4n), "NULL"},
		{call(ir.FnCoalesce, null(types.TextT), txt("x")), "x"},
		{call(ir.FnCoalesce, null(types.IntervalT), ivl("1 day")), "1 day"},
		{call(ir.FnCoalesce, null(types.BoolT), boolc(false)), "f"},
		{call(ir.FnNullIf, i4(1), i4(1)), "NULL"},
		{call(ir.FnNullIf, i4(1), i4(2)), "1"},
		{call(ir.FnNullIf, i4n, i4(2)), "NULL"},
		{call(ir.FnGreatest, i4(1), i4n, i4(3)), "3"},
		{call(ir.FnLeast, i4(1), i4n, i4(3)), "1"},
		{call(ir.FnLeast, i4n, i4n), "NULL"},
		{call(ir.FnGreatest, f8(1), f8(math.NaN())), "NaN"},
		{call(ir.FnGreatest, txt("a"), txt("b")), "b"},
		// The value of a scalar subquery from the count of its rows and
		// their value: several rows are an error.
		{call(ir.FnSingleRow, i8(1), txt("x")), "x"},
		{call(ir.FnSingleRow, i8(0), i4n), "NULL"},
		{call(ir.FnSingleRow, i8(1), i4n), "NULL"},
		{call(ir.FnSingleRow, i8(2), i4(7)), "ERROR 21000"},
		{call(ir.FnSingleRow, null(types.Int64T), ivl("1 day")), "1 day"},
	})
}

func inList(x ir.Expr, negate bool, list ...ir.Expr) *ir.InList {
	return &ir.InList{Arg: x, List: list, Negate: negate}
}

func TestInList(t *testing.T) {
	i4n := null(types.Int32T)
	runCases(t, []exprCase{
		{inList(i4(1), false, i4(1), i4(2)), "t"},
		{inList(i4(3), false, i4(1), i4n), "NULL"},
		{inList(i4(1), false, i4(1), i4n), "t"},
		{inList(i4n, false, i4(1)), "NULL"},
		{inList(i4(1), true, i4(2), i4(3)), "t"},
		{inList(i4(1), true, i4(2), i4n), "NULL"},
		{inList(i4(2), true, i4(2), i4n), "f"},
		{inList(i8(9), false, i8(1), i8(2), i8(3), i8(4), i8(5), i8(6), i8(7), i8(8), i8(9), i8(10)), "t"},
		{inList(i2(11), false, i2(1), i2(2), i2(3), i2(4), i2(5), i2(6), i2(7), i2(8), i2(9), i2(10)), "f"},
		{inList(f8(math.NaN()), false, f8(math.NaN())), "t"},
		{inList(f8(math.Copysign(0, -1)), false, f8(0)), "t"},
		{inList(f4(1.5), false, f4(2), f4(1.5)), "t"},
		{inList(txt("b"), false, txt("a"), txt("b")), "t"},
		{inList(txt("c"), false, txt("a"), txt("b")), "f"},
		{inList(num("1.5"), false, lit(types.NumericOf(10, 2), "1.50")), "t"},
		{inList(lit(types.NumericOf(10, 2), "1.50"), false, num("1.5")), "t"},
		{inList(lit(types.NumericOf(10, 1), "1.5"), false, num("1.55")), "f"},
		{inList(ivl("1 mon"), false, ivl("30 days")), "t"},
		{inList(boolc(true), false, boolc(false)), "f"},
		{inList(date("2020-01-01"), false, date("2020-01-01")), "t"},
		{inList(tsc("2020-01-01"), true, tsc("2020-01-02")), "t"},
		// Non-constant elements are compared with equality.
		{inList(i4(3), false, call(ir.FnAdd, i4(1), i4(2))), "t"},
	})
}

func TestLike(t *testing.T) {
	like := func(s, p string) ir.Expr { return call(ir.FnLike, txt(s), txt(p)) }
	ilike := func(s, p string) ir.Expr { return call(ir.FnILike, txt(s), txt(p)) }
	runCases(t, []exprCase{
		{like("abc", "a%"), "t"},
		{like("abc", "_b_"), "t"},
		{like("abc", "a_"), "f"},
		{like("a%c", `a\%c`), "t"},
		{like("abc", `a\%c`), "f"},
		{like(`a\c`, `a\\c`), "t"},
		{like("abc", "%"), "t"},
		{like("", "%"), "t"},
		{like("", "_"), "f"},
		{like("", ""), "t"},
		{like("abc", `abc\`), "ERROR 22025"},
		{like("foobar", "%oba%"), "t"},
		{like("foxbar", "%oba%"), "f"},
		{like("héllo", "h_llo"), "t"},
		{like("aXbXc", "%X%X%"), "t"},
		{like("ab", "%a%b%c"), "f"},
		{like("mississippi", "%iss%ppi"), "t"},
		{like("mississippi", "m%iss%i_"), "f"},
		{like("abc", "ABC"), "f"},
		{like("abc", "%%c"), "t"},
		{ilike("ABC", "a%c"), "t"},
		{ilike("ÀBC", "àb_"), "t"},
		{ilike("abc", "%B%"), "t"},
		{call(ir.FnLike, null(types.TextT), txt("a")), "NULL"},
	})
}

func TestStringFunctions(t *testing.T) {
	tn := null(types.TextT)
	runCases(t, []exprCase{
		{call(ir.FnConcatOp, txt("a"), txt("b")), "ab"},
		{call(ir.FnConcatOp, txt("a"), tn), "NULL"},
		{call(ir.FnLower, txt("ÀBC")), "àbc"},
		{call(ir.FnUpper, txt("abcé")), "ABCÉ"},
		{call(ir.FnLength, txt("héllo")), "5"},
		{call(ir.FnOctetLen, txt("héllo")), "6"},
		{call(ir.FnSubstr, txt("hello"), i4(2)), "ello"},
		{call(ir.FnSubstr, txt("hello"), i4(2), i4(3)), "ell"},
		{call(ir.FnSubstr, txt("hello"), i4(0), i4(3)), "he"},
		{call(ir.FnSubstr, txt("hello"), i4(-1), i4(3)), "h"},
		{call(ir.FnSubstr, txt("hello"), i4(-5), i4(3)), ""},
		{call(ir.FnSubstr, txt("hello"), i4(2), i4(-1)), "ERROR 22011"},
		{call(ir.FnSubstr, txt("hello"), i4(10)), ""},
		{call(ir.FnSubstr, txt("hello"), i4(-3)), "hello"},
		{call(ir.FnSubstr, txt("héllo"), i4(2), i4(2)), "él"},
		{call(ir.FnSubstr, txt("hello"), i4(2), i4(math.MaxInt32)), "ello"},
		{call(ir.FnTrim, txt("  x  ")), "x"},
		{call(ir.FnTrim, txt("\tx ")), "\tx"},
		{call(ir.FnLTrim, txt("xxyx"), txt("x")), "yx"},
		{call(ir.FnRTrim, txt("xyxx"), txt("x")), "xy"},
		{call(ir.FnTrim, txt("xyx"), txt("xy")), ""},
		{call(ir.FnLTrim, txt("  a ")), "a "},
		{call(ir.FnReplace, txt("abcabc"), txt("b"), txt("XY")), "aXYcaXYc"},
		{call(ir.FnReplace, txt("abc"), txt(""), txt("X")), "abc"},
		{call(ir.FnStrpos, txt("hello"), txt("ll")), "3"},
		{call(ir.FnStrpos, txt("héllo"), txt("l")), "3"},
		{call(ir.FnStrpos, txt("a"), txt("")), "1"},
		{call(ir.FnStrpos, txt("a"), txt("b")), "0"},
		{call(ir.FnLeft, txt("hello"), i4(2)), "he"},
		{call(ir.FnLeft, txt("hello"), i4(-2)), "hel"},
		{call(ir.FnLeft, txt("hi"), i4(5)), "hi"},
		{call(ir.FnLeft, txt("hi"), i4(-5)), ""},
		{call(ir.FnRight, txt("hello"), i4(2)), "lo"},
		{call(ir.FnRight, txt("hello"), i4(-2)), "llo"},
		{call(ir.FnRight, txt("hi"), i4(-5)), ""},
		{call(ir.FnRight, txt("hi"), i4(5)), "hi"},
		{call(ir.FnRepeat, txt("ab"), i4(3)), "ababab"},
		{call(ir.FnRepeat, txt("ab"), i4(0)), ""},
		{call(ir.FnRepeat, txt("ab"), i4(-1)), ""},
		{call(ir.FnRepeat, txt("ab"), i4(math.MaxInt32)), "ERROR 54000"},
		{call(ir.FnSplitPart, txt("a,b,c"), txt(","), i4(2)), "b"},
		{call(ir.FnSplitPart, txt("a,b,c"), txt(","), i4(-1)), "c"},
		{call(ir.FnSplitPart, txt("a,b,c"), txt(","), i4(-3)), "a"},
		{call(ir.FnSplitPart, txt("a,b,c"), txt(","), i4(4)), ""},
		{call(ir.FnSplitPart, txt("a,b,c"), txt(","), i4(-4)), ""},
		{call(ir.FnSplitPart, txt("a,,b"), txt(","), i4(2)), ""},
		{call(ir.FnSplitPart, txt("a<>b<>c"), txt("<>"), i4(3)), "c"},
		{call(ir.FnSplitPart, txt("a,b"), txt(","), i4(0)), "ERROR 22023"},
		{call(ir.FnSplitPart, txt("abc"), txt(""), i4(1)), "abc"},
		{call(ir.FnSplitPart, txt("abc"), txt(""), i4(-1)), "abc"},
		{call(ir.FnSplitPart, txt("abc"), txt(""), i4(2)), ""},
		{call(ir.FnSplitPart, txt(""), txt(","), i4(1)), ""},
		{call(ir.FnStartsWith, txt("hello"), txt("he")), "t"},
		{call(ir.FnStartsWith, txt("hello"), txt("lo")), "f"},
		{call(ir.FnLPad, txt("hi"), i4(5)), "   hi"},
		{call(ir.FnLPad, txt("hi"), i4(5), txt("xy")), "xyxhi"},
		{call(ir.FnLPad, txt("hello"), i4(2)), "he"},
		{call(ir.FnRPad, txt("hi"), i4(5), txt("xy")), "hixyx"},
		{call(ir.FnRPad, txt("hello"), i4(2), txt("x")), "he"},
		{call(ir.FnLPad, txt("hi"), i4(-1)), ""},
		{call(ir.FnLPad, txt("hi"), i4(5), txt("")), "hi"},
		{call(ir.FnRPad, txt("é"), i4(3), txt("ü")), "éüü"},
		{call(ir.FnLPad, txt("x"), i4(math.MaxInt32)), "ERROR 54000"},
		{call(ir.FnConcat, txt("a"), tn, txt("b")), "ab"},
		{call(ir.FnConcat, tn, tn), ""},
		{call(ir.FnInitcap, txt("hello wORLD foo-bar x1y")), "Hello World Foo-Bar X1y"},
		{call(ir.FnReverse, txt("héllo")), "olléh"},
	})
}

func TestMathFunctions(t *testing.T) {
	nan := math.NaN()
	runCases(t, []exprCase{
		{call(ir.FnRound, f8(2.5)), "2"},
		{call(ir.FnRound, f8(3.5)), "4"},
		{call(ir.FnRound, f8(-2.5)), "-2"},
		{call(ir.FnRound, num("2.5")), "3"},
		{call(ir.FnRound, num("-2.5")), "-3"},
		{call(ir.FnRound, num("0.5")), "1"},
		{call(ir.FnRound, num("1234.5678"), i4(-2)), "1200"},
		{call(ir.FnRound, num("1250"), i4(-2)), "1300"},
		{call(ir.FnRound, num("-1250"), i4(-2)), "-1300"},
		{call(ir.FnRound, num("5"), i4(-1)), "10"},
		{call(ir.FnRound, num("1.2345"), i4(2)), "1.23"},
		{call(ir.FnRound, num("1.235"), i4(2)), "1.24"},
		{call(ir.FnRound, num("1.235"), i4(20)), "1.23500000000000000000"},
		{call(ir.FnRound, num("1.235"), i4(-50)), "0"},
		{call(ir.FnTrunc, num("-1.99")), "-1"},
		{call(ir.FnTrunc, num("1.999"), i4(2)), "1.99"},
		{call(ir.FnTrunc, num("199"), i4(-2)), "100"},
		{call(ir.FnTrunc, f8(-1.7)), "-1"},
		{call(ir.FnFloor, num("-1.5")), "-2"},
		{call(ir.FnFloor, num("1.5")), "1"},
		{call(ir.FnFloor, num("-2")), "-2"},
		{call(ir.FnCeil, num("-1.5")), "-1"},
		{call(ir.FnCeil, num("1.2")), "2"},
		{call(ir.FnFloor, f8(-1.5)), "-2"},
		{call(ir.FnCeil, f8(1.2)), "2"},
		{call(ir.FnSign, num("-3")), "-1"},
		{call(ir.FnSign, num("0")), "0"},
		{call(ir.FnSign, f8(0)), "0"},
		{call(ir.FnSign, f8(2.5)), "1"},
		{call(ir.FnSqrt, f8(4)), "2"},
		{call(ir.FnSqrt, f8(-1)), "ERROR 2201F"},
		{call(ir.FnLn, f8(0)), "ERROR 2201E"},
		{call(ir.FnLn, f8(-1)), "ERROR 2201E"},
		{call(ir.FnLn, f8(1)), "0"},
		{call(ir.FnLog10, f8(100)), "2"},
		{call(ir.FnLog10, f8(0)), "ERROR 2201E"},
		{call(ir.FnExp, f8(0)), "1"},
		{call(ir.FnExp, f8(1000)), eRange},
		{call(ir.FnExp, f8(-1000)), eRange},
		{call(ir.FnExp, f8(math.Inf(-1))), "0"},
		{call(ir.FnPower, f8(2), f8(10)), "1024"},
		{call(ir.FnPower, f8(0), f8(-1)), "ERROR 2201F"},
		{call(ir.FnPower, f8(-8), f8(1.0/3)), "ERROR 2201F"},
		{call(ir.FnPower, f8(-2), f8(3)), "-8"},
		{call(ir.FnPower, f8(nan), f8(0)), "1"},
		{call(ir.FnPower, f8(1), f8(nan)), "1"},
		{call(ir.FnPower, f8(10), f8(400)), eRange},
		{call(ir.FnPower, f8(0.5), f8(math.Inf(1))), "0"},
	})
}

func TestDateTime(t *testing.T) {
	add, sub := ir.FnAdd, ir.FnSub
	runCases(t, []exprCase{
		{call(add, date("2020-01-31"), i4(1)), "2020-02-01"},
		{call(add, i4(1), date("2020-02-28")), "2020-02-29"},
		{call(sub, date("2020-03-01"), i4(1)), "2020-02-29"},
		{call(sub, date("2020-03-01"), date("2020-02-01")), "29"},
		{call(sub, date("2020-02-01"), date("2020-03-01")), "-29"},
		{call(add, date("5874897-12-31"), i4(1)), eDTRange},
		{call(add, tsc("2020-01-31 10:00"), ivl("1 mon")), "2020-02-29 10:00:00"},
		{call(add, tsc("2019-01-31"), ivl("1 mon")), "2019-02-28 00:00:00"},
		{call(add, tsc("2020-01-01"), ivl("1 mon 1 day 1 hour")), "2020-02-02 01:00:00"},
		{call(add, tsc("2020-01-01"), ivl("-1 year")), "2019-01-01 00:00:00"},
		{call(add, ivl("1 day"), tsc("2020-01-01")), "2020-01-02 00:00:00"},
		{call(sub, tsc("2020-03-31"), ivl("1 mon")), "2020-02-29 00:00:00"},
		{call(sub, tsc("2020-01-01"), ivl("1.5 hours")), "2019-12-31 22:30:00"},
		{call(add, tsc("2020-01-01"), ivl("10 seconds")), "2020-01-01 00:00:10"},
		{call(add, tstzc("2020-01-01 00:00:00+00"), ivl("1 day")), "2020-01-02 00:00:00+00"},
		{call(sub, tstzc("2020-03-31 00:00:00+00"), ivl("1 mon")), "2020-02-29 00:00:00+00"},
		{call(add, tsc("294247-01-09"), ivl("1 day")), eDTRange},
		{call(add, tsc("294247-01-08"), ivl("1 day")), "294247-01-09 00:00:00"},
		{call(add, tsc("294246-12-31"), ivl("1 year")), eDTRange},
		{call(add, tsc("294247-01-09 23:59:59"), ivl("10 seconds")), eDTRange},
		{call(sub, tsc("4714-11-24 BC"), ivl("1 day")), eDTRange},
		{call(sub, tsc("4714-11-25 BC"), ivl("1 day")), "4714-11-24 00:00:00 BC"},
		{call(sub, tsc("2020-01-02 01:00"), tsc("2020-01-01")), "1 day 01:00:00"},
		{call(sub, tsc("2020-01-01"), tsc("2020-01-02 01:00")), "-1 days -01:00:00"},
		{call(sub, tsc("2020-03-01"), tsc("2020-01-01")), "60 days"},
		{call(sub, tstzc("2020-01-01 12:00:00+00"), tstzc("2020-01-01 00:00:00+00")), "12:00:00"},
		{call(add, date("2020-01-31"), ivl("1 mon")), "2020-02-29 00:00:00"},
		{call(add, ivl("2 hours"), date("2020-01-31")), "2020-01-31 02:00:00"},
		{call(sub, date("2020-01-01"), ivl("1 hour")), "2019-12-31 23:00:00"},
		{call(add, ivl("1 day"), ivl("1 hour")), "1 day 01:00:00"},
		{call(sub, ivl("1 day"), ivl("1 hour")), "1 day -01:00:00"},
		{call(add, ivl("2147483647 days"), ivl("1 day")), eDTRange},
		{call(ir.FnMul, ivl("1 mon"), f8(1.5)), "1 mon 15 days"},
		{call(ir.FnMul, f8(1.5), ivl("1 day")), "1 day 12:00:00"},
		{call(ir.FnMul, ivl("1 hour"), f8(-0.5)), "-00:30:00"},
		{call(ir.FnMul, ivl("1 day"), f8(1e20)), eDTRange},
		{call(ir.FnDiv, ivl("1 hour"), f8(2)), "00:30:00"},
		{call(ir.FnDiv, ivl("1 mon"), f8(2)), "15 days"},
		{call(ir.FnDiv, ivl("1 mon"), f8(7)), "4 days 06:51:25.6896"},
		{call(ir.FnDiv, ivl("1 day"), f8(0)), eDivZero},
		{call(ir.FnNeg, ivl("1 day 01:00")), "-1 days -01:00:00"},
		{call(ir.FnNow), "2021-06-15 12:34:56.789+00"},
		{call(ir.FnToTimestamp, f8(0)), "1970-01-01 00:00:00+00"},
		{call(ir.FnToTimestamp, f8(1.5)), "1970-01-01 00:00:01.5+00"},
		{call(ir.FnToTimestamp, f8(-1)), "1969-12-31 23:59:59+00"},
		{call(ir.FnToTimestamp, f8(math.NaN())), eDTRange},
		{call(ir.FnToTimestamp, f8(1e20)), eDTRange},
	})
}

func TestExtract(t *testing.T) {
	ex := func(f string, src ir.Expr) ir.Expr { return call(ir.FnExtract, txt(f), src) }
	dp := func(f string, src ir.Expr) ir.Expr { return call(ir.FnDatePart, txt(f), src) }
	ts := tsc("2020-02-03 04:05:06.5")
	runCases(t, []exprCase{
		{ex("year", ts), "2020"},
		{ex("YEARS", ts), "2020"},
		{ex("month", ts), "2"},
		{ex("day", ts), "3"},
		{ex("hour", ts), "4"},
		{ex("minute", ts), "5"},
		{ex("second", ts), "6.500000"},
		{ex("milliseconds", ts), "6500.000"},
		{ex("microseconds", ts), "6500000"},
		{ex("dow", ts), "1"},
		{ex("isodow", tsc("2020-02-09")), "7"},
		{ex("dow", tsc("2020-02-09")), "0"},
		{ex("doy", ts), "34"},
		{ex("week", tsc("2021-01-03")), "53"},
		{ex("isoyear", tsc("2021-01-03")), "2020"},
		{ex("week", tsc("2020-12-31")), "53"},
		{ex("week", tsc("2019-12-30")), "1"},
		{ex("isoyear", tsc("2019-12-30")), "2020"},
		{ex("quarter", ts), "1"},
		{ex("quarter", tsc("2020-12-31")), "4"},
		{ex("decade", ts), "202"},
		{ex("century", tsc("2000-12-31")), "20"},
		{ex("century", tsc("2001-01-01")), "21"},
		{ex("millennium", tsc("2001-01-01")), "3"},
		{ex("millennium", tsc("2000-01-01")), "2"},
		{ex("year", tsc("0044-03-15 BC")), "-44"},
		{ex("century", tsc("0044-03-15 BC")), "-1"},
		{ex("decade", tsc("0044-03-15 BC")), "-5"},
		{ex("epoch", tsc("1970-01-02")), "86400.000000"},
		{ex("epoch", tsc("1969-12-31 23:59:59.5")), "-0.500000"},
		{ex("epoch", tstzc("1970-01-01 01:00:00+01")), "0.000000"},
		{ex("timezone", tstzc("2020-01-01")), "0"},
		{ex("timezone", ts), "ERROR 0A000"},
		{ex("julian", tsc("2020-01-01 12:00")), "2458850.50000000000000000000"},
		{ex("foo", ts), "ERROR 22023"},
		{ex("year", date("2020-02-03")), "2020"},
		{ex("doy", date("2020-12-31")), "366"},
		{ex("epoch", date("1970-01-02")), "86400"},
		{ex("julian", date("2020-01-01")), "2458850"},
		{ex("hour", date("2020-01-01")), "ERROR 0A000"},
		{ex("hour", ivl("1 day 25:30:00")), "25"},
		{ex("minute", ivl("1 day 25:30:00")), "30"},
		{ex("second", ivl("00:01:02.5")), "2.500000"},
		{ex("hour", ivl("-01:30:00")), "-1"},
		{ex("minute", ivl("-01:30:00")), "-30"},
		{ex("day", ivl("1 mon 3 days")), "3"},
		{ex("month", ivl("14 mons")), "2"},
		{ex("year", ivl("14 mons")), "1"},
		{ex("quarter", ivl("7 mons")), "3"},
		{ex("epoch", ivl("1 day")), "86400.000000"},
		{ex("epoch", ivl("1 mon")), "2592000.000000"},
		{ex("epoch", ivl("1 year")), "31557600.000000"},
		{ex("epoch", ivl("-1.5 seconds")), "-1.500000"},
		{ex("dow", ivl("1 day")), "ERROR 0A000"},
		{ex("century", ivl("250 years")), "2"},
		{dp("hour", date("2020-01-01")), "0"},
		{dp("second", ts), "6.5"},
		{dp("epoch", ts), "1580702706.5"},
		{dp("foo", ts), "ERROR 22023"},
	})
}

func TestDateTrunc(t *testing.T) {
	dt := func(f string, src ir.Expr) ir.Expr { return call(ir.FnDateTrunc, txt(f), src) }
	ts := tsc("2020-05-14 10:11:12.123456")
	runCases(t, []exprCase{
		{dt("microseconds", ts), "2020-05-14 10:11:12.123456"},
		{dt("milliseconds", ts), "2020-05-14 10:11:12.123"},
		{dt("second", ts), "2020-05-14 10:11:12"},
		{dt("minute", ts), "2020-05-14 10:11:00"},
		{dt("hour", ts), "2020-05-14 10:00:00"},
		{dt("day", ts), "2020-05-14 00:00:00"},
		{dt("week", tsc("2020-02-06 10:00")), "2020-02-03 00:00:00"},
		{dt("week", tsc("2020-02-09 10:00")), "2020-02-03 00:00:00"},
		{dt("month", ts), "2020-05-01 00:00:00"},
		{dt("quarter", ts), "2020-04-01 00:00:00"},
		{dt("year", ts), "2020-01-01 00:00:00"},
		{dt("decade", tsc("2024-06-01")), "2020-01-01 00:00:00"},
		{dt("century", ts), "2001-01-01 00:00:00"},
		{dt("century", tsc("2000-06-01")), "1901-01-01 00:00:00"},
		{dt("millennium", ts), "2001-01-01 00:00:00"},
		{dt("second", tsc("1969-12-31 23:59:59.5")), "1969-12-31 23:59:59"},
		{dt("DAY", tstzc("2020-05-14 10:11:12+00")), "2020-05-14 00:00:00+00"},
		{dt("dow", ts), "ERROR 0A000"},
		{dt("foo", ts), "ERROR 22023"},
		{dt("hour", ivl("1 day 02:30:00")), "1 day 02:00:00"},
		{dt("month", ivl("1 year 2 mons 3 days")), "1 year 2 mons"},
		{dt("year", ivl("1 year 2 mons 3 days")), "1 year"},
		{dt("quarter", ivl("1 year 5 mons")), "1 year 3 mons"},
		{dt("decade", ivl("15 years")), "10 years"},
		{dt("milliseconds", ivl("00:00:01.234567")), "00:00:01.234"},
		{dt("minute", ivl("-01:30:30")), "-01:30:00"},
		{dt("week", ivl("1 day")), "ERROR 0A000"},
		{dt("foo", ivl("1 day")), "ERROR 22023"},
	})
}

func TestCasts(t *testing.T) {
	i2t, i4t, i8t := types.Int16T, types.Int32T, types.Int64T
	f4t, f8t, nt := types.Float32T, types.Float64T, types.NumericT
	vc3 := types.T{Kind: types.Text, Width: 3}
	runCases(t, []exprCase{
		{castTo(f8(2.5), i4t), "2"},
		{castTo(f8(3.5), i4t), "4"},
		{castTo(f8(-2.5), i4t), "-2"},
		{castTo(f8(2147483647.5), i4t), eRange},
		{castTo(f8(2147483647.4), i4t), "2147483647"},
		{castTo(f8(-2147483648.4), i4t), "-2147483648"},
		{castTo(f8(math.NaN()), i8t), eRange},
		{castTo(f8(9.3e18), i8t), eRange},
		{castTo(f4(32767.4), i2t), "32767"},
		{castTo(f4(40000), i2t), eRange},
		{castTo(num("2.5"), i4t), "3"},
		{castTo(num("-2.5"), i4t), "-3"},
		{castTo(num("2147483647.5"), i4t), eRange},
		{castTo(num("99999999999999999999"), i8t), eRange},
		{castTo(i8(40000), i2t), eRange},
		{castTo(i8(-32768), i2t), "-32768"},
		{castTo(i4(7), i8t), "7"},
		{castTo(i8(math.MaxInt64), f8t), "9.223372036854776e+18"},
		{castTo(i4(16777217), f4t), "1.6777216e+07"},
		{castTo(i4(7), nt), "7"},
		{castTo(i8(math.MaxInt64), types.NumericOf(21, 2)), "9223372036854775807.00"},
		{castTo(i8(math.MaxInt64), types.NumericOf(20, 2)), eRange},
		{castTo(i8(math.MaxInt64), types.NumericOf(18, 0)), eRange},
		{castTo(f8(0.1), nt), "0.1"},
		{castTo(f8(1e20), nt), "100000000000000000000"},
		{castTo(f8(1e30), nt), "1000000000000000000000000000000"},
		{castTo(f8(1e40), nt), eRange},
		{castTo(f8(0.1), nt), "0.1"},
		{castTo(f8(1.5e-7), nt), "0.00000015"},
		{castTo(f8(1.0000000000000002), nt), "1"},
		{castTo(f8(123456789.123456789), nt), "123456789.123457"},
		{castTo(f4(0.1), nt), "0.1"},
		{castTo(f8(math.NaN()), nt), "ERROR 0A000"},
		{castTo(f8(1.5e-13), nt), "0.00000000000015"},
		{castTo(f8(5e-13), nt), "0.0000000000005"},
		{castTo(num("1.5"), f8t), "1.5"},
		{castTo(num("0.1"), f4t), "0.1"},
		{castTo(num("123456789012345678901234.5"), f8t), "1.2345678901234569e+23"},
		{castTo(num("123.456"), types.NumericOf(5, 2)), "123.46"},
		{castTo(num("1234.5"), types.NumericOf(5, 2)), eRange},
		{castTo(num("-0.005"), types.NumericOf(5, 2)), "-0.01"},
		{castTo(lit(types.NumericOf(10, 4), "1.2345"), types.NumericOf(10, 2)), "1.23"},
		{castTo(lit(types.NumericOf(10, 4), "1.2345"), nt), "1.2345"},
		{castTo(f8(1e39), f4t), eRange},
		{castTo(f8(1e-50), f4t), eRange},
		{castTo(f8(math.Inf(1)), f4t), "Infinity"},
		{castTo(f4(1.5), f8t), "1.5"},
		{castTo(txt(" 42 "), i4t), "42"},
		{castTo(txt("abc"), i4t), "ERROR 22P02"},
		{castTo(txt("99999"), i2t), eRange},
		{castTo(txt("1.5"), nt), "1.5"},
		{castTo(txt("yes"), types.BoolT), "t"},
		{castTo(txt("2020-02-30"), types.DateT), eDTRange},
		{castTo(txt("1 day"), types.IntervalT), "1 day"},
		{castTo(txt("2020-01-01 10:00+02"), types.TimestampTZT), "2020-01-01 08:00:00+00"},
		{castTo(i4(42), types.TextT), "42"},
		{castTo(boolc(true), types.TextT), "true"},
		{castTo(boolc(false), types.TextT), "false"},
		{castTo(f8(0.1), types.TextT), "0.1"},
		{castTo(num("1.50"), types.TextT), "1.50"},
		{castTo(date("2020-01-01"), types.TextT), "2020-01-01"},
		{castTo(ivl("1 day 01:00"), types.TextT), "1 day 01:00:00"},
		{castTo(txt("abcdef"), vc3), "abc"},
		{castTo(txt("ab"), vc3), "ab"},
		{castTo(txt("héllo"), vc3), "hél"},
		{castTo(i4(12345), vc3), "123"},
		{castTo(boolc(false), vc3), "fal"},
		{castTo(boolc(true), i4t), "1"},
		{castTo(i4(0), types.BoolT), "f"},
		{castTo(i4(5), types.BoolT), "t"},
		{castTo(date("2020-01-01"), types.TimestampT), "2020-01-01 00:00:00"},
		{castTo(date("2020-01-01"), types.TimestampTZT), "2020-01-01 00:00:00+00"},
		{castTo(date("5874897-01-01"), types.TimestampT), eDTRange},
		{castTo(tsc("1969-12-31 23:00"), types.DateT), "1969-12-31"},
		{castTo(tstzc("2020-01-01 23:00+00"), types.DateT), "2020-01-01"},
		{castTo(tstzc("2020-01-01 23:00+00"), types.TimestampT), "2020-01-01 23:00:00"},
		{castTo(tsc("2020-01-01 23:00"), types.TimestampTZT), "2020-01-01 23:00:00+00"},
		{castTo(null(types.UnknownT), i4t), "NULL"},
		// Assignment casts to varchar(n) do not truncate.
		{&ir.Cast{Arg: txt("abcdef"), T: vc3, Assignment: true}, "ERROR 22001"},
		{&ir.Cast{Arg: txt("abc   "), T: vc3, Assignment: true}, "abc"},
		{&ir.Cast{Arg: txt("ab"), T: vc3, Assignment: true}, "ab"},
		{&ir.Cast{Arg: i4(12345), T: vc3, Assignment: true}, "ERROR 22001"},
		{&ir.Cast{Arg: i4(123), T: vc3, Assignment: true}, "123"},
		{&ir.Cast{Arg: f8(2.5), T: i4t, Assignment: true}, "2"},
		{castTo(null(types.Int32T), types.TextT), "NULL"},
	})
}

// TestAssignmentCasts checks the cast that stores a value in a varchar(n)
// column: too long is an error unless only spaces are cut.
func TestAssignmentCasts(t *testing.T) {
	vc3 := types.T{Kind: types.Text, Width: 3}
	assign := func(e ir.Expr) *ir.Cast { return &ir.Cast{Arg: e, T: vc3, Assignment: true} }
	runCases(t, []exprCase{
		{assign(txt("abc")), "abc"},
		{assign(txt("ab")), "ab"},
		{assign(txt("abcd")), "ERROR 22001"},
		{assign(txt("abc   ")), "abc"},
		{assign(txt("héllo")), "ERROR 22001"},
		{assign(i4(123)), "123"},
		{assign(i4(12345)), "ERROR 22001"},
		{assign(lit(types.T{Kind: types.Text, Width: 2}, "ab")), "ab"},
		{assign(lit(types.T{Kind: types.Text, Width: 5}, "abcde")), "ERROR 22001"},
		{assign(null(types.TextT)), "NULL"},
	})
}

func TestNumericResultTypes(t *testing.T) {
	// A call typed numeric(p,s) by the binder gets its result converted.
	e := &ir.Call{Fn: ir.FnAdd, Args: []ir.Expr{num("1.005"), num("1")}, T: types.NumericOf(10, 2)}
	check(t, e, "2.01")
	e = &ir.Call{Fn: ir.FnExtract, Args: []ir.Expr{txt("second"), tsc("2020-01-01 00:00:01.25")}, T: types.NumericOf(10, 1)}
	check(t, e, "1.3")
}
