package eval

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// sampleArg returns a valid argument for position i of an overload of fn.
func sampleArg(fn string, i int, t types.T) ir.Expr {
	switch fn {
	case ir.FnExtract, ir.FnDatePart, ir.FnDateTrunc, ir.FnDateTrunc3, ir.FnExtractTZ, ir.FnDatePartTZ:
		if i == 0 {
			return txt("day")
		}
		if i == 2 {
			return txt("Europe/Berlin")
		}
	case ir.FnTimezone:
		if i == 0 && t.Kind == types.Text {
			return txt("Asia/Kolkata")
		}
		if i == 0 {
			return ivl("-03:30")
		}
	case ir.FnTstzToTS, ir.FnTSToTstz, ir.FnTstzOut, ir.FnTstzIn, ir.FnTstzAdd, ir.FnTstzSub, ir.FnToCharTZ, ir.FnToTimestampTZ:
		if i == 0 && fn == ir.FnTstzIn {
			return txt("2020-03-29 02:30")
		}
		if i == 1 && fn == ir.FnToCharTZ {
			return txt("YYYY-MM-DD HH24:MI:SS TZ OF")
		}
		if fn == ir.FnToTimestampTZ && i < 2 {
			return txt([]string{"2021-03-28 02:30", "YYYY-MM-DD HH24:MI"}[i])
		}
		if t.Kind == types.Text {
			return txt("Europe/Berlin")
		}
	case ir.FnLike, ir.FnILike:
		if i == 1 {
			return txt("%l_o")
		}
	case ir.FnSplitPart:
		if i == 1 {
			return txt("l")
		}
	case "regexp_match":
		return txt([]string{"hello", "(l+)(o)", "i"}[i])
	case ir.FnTumbleStart:
		if i > 0 {
			return ivl([]string{"", "00:10:00", "00:01:30"}[i])
		}
	case ir.FnDateBin:
		if i == 0 {
			return ivl("15 minutes")
		}
	case ir.FnToChar:
		if i == 1 && (t.Kind == types.Text) {
			return txt("FM9990.99")
		}
	case ir.FnAsin, ir.FnAcos, ir.FnAsind, ir.FnAcosd, ir.FnAtanh:
		return f8(0.5)
	case ir.FnFactorial:
		return i8(5)
	case ir.FnSetseed:
		return f8(0.5)
	case ir.FnLog10:
		if t.Kind == types.Numeric {
			return num([]string{"2", "8"}[i])
		}
	case ir.FnRegexInstr, ir.FnRegexSubstr, ir.FnRegexCount, ir.FnRegexReplace:
		if t.Kind == types.Int32 {
			return i4(1)
		}
		if t.Kind == types.Text && i >= 3 || fn == ir.FnRegexCount && i == 3 {
			return txt("i")
		}
	case ir.FnSimilarEscape:
		if i == 1 {
			return txt("#")
		}
	case ir.FnRegexLike:
		if i == 2 {
			return txt("i")
		}
	case ir.FnGetByte, ir.FnSetByte, ir.FnGetBit, ir.FnSetBit:
		if i > 0 {
			return &ir.Const{T: t, Value: types.DInt(1)}
		}
	case ir.FnEncode, ir.FnDecode, ir.FnConvertTo, ir.FnConvertFrom:
		if i == 1 {
			return txt(map[string]string{ir.FnEncode: "base64", ir.FnDecode: "hex", ir.FnConvertTo: "UTF8", ir.FnConvertFrom: "UTF8"}[fn])
		}
		if fn == ir.FnDecode {
			return txt("68 65")
		}
	case ir.FnJSONBElem, ir.FnJSONBElemText, "jsonb_array_length", ir.FnJSONBDelete,
		ir.FnJSONBElements, ir.FnJSONBElementsText:
		if t.Kind == types.JSONB {
			return lit(types.JSONBT, `[1, "x", {"a": 2}]`)
		}
	case "jsonb_path_exists", "jsonb_path_query_first", ir.FnJSONBPathQueryArr, ir.FnJSONBPathQuery:
		if t.Kind == types.Text {
			return txt("$.a[*] ? (@ > 1)")
		}
	case "jsonb_insert":
		if t.Kind == types.Array {
			return lit(types.ArrayOf(types.TextT), "{c}")
		}
	case ir.FnToTimestamp, ir.FnToDate:
		if t.Kind == types.Text {
			return txt([]string{"2021-03-04 05:06", "YYYY-MM-DD HH24:MI"}[i])
		}
	}
	switch t.Kind {
	case types.Bool:
		return boolc(true)
	case types.Int16:
		return i2([]int64{7, -2, 3}[i%3])
	case types.Int32:
		return i4([]int64{7, 2, 3}[i%3])
	case types.Int64:
		return i8([]int64{-7, 2, 3}[i%3])
	case types.Numeric:
		return num([]string{"7.5", "-2.25", "3"}[i%3])
	case types.Float32:
		return f4([]float64{7.5, -2.25, 3}[i%3])
	case types.Float64:
		return f8([]float64{7.5, 2.25, 3}[i%3])
	case types.Text:
		return txt([]string{"hello", "lo", "x"}[i%3])
	case types.Date:
		return date([]string{"2020-01-31", "2019-12-25"}[i%2])
	case types.Timestamp:
		return tsc([]string{"2020-01-31 10:00:00", "2019-12-25 01:02:03.5"}[i%2])
	case types.TimestampTZ:
		return tstzc([]string{"2020-01-31 10:00:00+00", "2019-12-25 01:02:03.5+00"}[i%2])
	case types.Interval:
		return ivl([]string{"1 mon 2 days 03:04:05", "-1 day 12:00:00"}[i%2])
	case types.Bytea:
		return &ir.Const{T: t, Value: types.DBytes([]string{"hello", "lo", "x"}[i%3])}
	case types.UUID:
		return lit(t, []string{"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "00000000-0000-0000-0000-000000000001"}[i%2])
	case types.JSONB:
		return lit(types.JSONBT, []string{`{"a": [1, 2], "b": "x"}`, `{"b": 2}`, `[3]`}[i%3])
	case types.Array:
		if t.Elem == types.Text {
			return lit(t, "{a,1}")
		}
	}
	panic("no sample for " + t.String())
}

// TestEveryOverloadHasAKernel evaluates every overload the binder can pick,
// on non-NULL and on NULL inputs, through every evaluation path; a missing
// kernel or a disagreement between paths fails.
func TestEveryOverloadHasAKernel(t *testing.T) {
	overloads := ir.Overloads()
	if len(overloads) < 100 {
		t.Fatalf("only %d overloads", len(overloads))
	}
	for _, o := range overloads {
		nargs := len(o.Args)
		if o.Variadic {
			nargs++ // exercise the repetition
		}
		args := make([]ir.Expr, nargs)
		nulls := make([]ir.Expr, nargs)
		for i := range args {
			at := o.Args[min(i, len(o.Args)-1)]
			args[i] = sampleArg(o.Fn, i, at)
			nulls[i] = null(at)
		}
		e := &ir.Call{Fn: o.Fn, Args: args, T: o.Result}
		if o.Fn == ir.FnSetseed {
			if got, _ := evalScalarText(e, true); got != "" {
				t.Errorf("%s = %s, want the empty string (void)", o.Key(), got)
			}
			continue
		}
		if o.Fn == ir.FnSetConfigRows {
			// set_config over a query's rows fails when evaluated, by design.
			if got, _ := evalScalarText(e, true); !strings.HasPrefix(got, "ERROR 0A000") {
				t.Errorf("%s = %s, want the error 0A000", o.Key(), got)
			}
			continue
		}
		if ir.Volatile(o.Fn) {
			// A new value at each call: only its range can be checked.
			if got, _ := evalScalarText(e, true); o.Result.Kind == types.UUID && len(got) != 36 ||
				o.Result.Kind != types.UUID && (got < "0" || got >= "1") {
				t.Errorf("%s = %s", o.Key(), got)
			}
			continue
		}
		want, _ := evalScalarText(e, true)
		if strings.HasPrefix(want, "ERROR") {
			t.Errorf("%s on samples: %s", o.Key(), want)
			continue
		}
		check(t, e, want)
		ne := &ir.Call{Fn: o.Fn, Args: nulls, T: o.Result}
		wantNull, _ := evalScalarText(ne, true)
		if o.Strict && nargs > 0 && wantNull != "NULL" {
			t.Errorf("%s is strict but gives %s on NULLs", o.Key(), wantNull)
		}
		check(t, ne, wantNull)
	}
}

var allTypes = []types.T{
	types.BoolT, types.Int16T, types.Int32T, types.Int64T, types.NumericT, types.NumericOf(10, 2),
	types.Float32T, types.Float64T, types.TextT, {Kind: types.Text, Width: 4}, types.DateT,
	types.TimestampT, types.TimestampTZT, types.IntervalT,
}

// castSamples are values of t for the cast matrix, including ones that fail
// some casts.
func castSamples(t types.T) []ir.Expr {
	switch t.Kind {
	case types.Bool:
		return []ir.Expr{boolc(true), boolc(false)}
	case types.Int16:
		return []ir.Expr{i2(0), i2(-32768), i2(123)}
	case types.Int32:
		return []ir.Expr{i4(0), i4(-7), i4(2147483647)}
	case types.Int64:
		return []ir.Expr{i8(5), i8(-9223372036854775808), i8(40000)}
	case types.Numeric:
		return []ir.Expr{lit(t, "1.5"), lit(t, "-2.5"), lit(t, "12345678.99")}
	case types.Float32:
		return []ir.Expr{f4(2.5), f4(-1e30), f4(0.1)}
	case types.Float64:
		return []ir.Expr{f8(2.5), f8(1e300), f8(-0.000001)}
	case types.Text:
		return []ir.Expr{&ir.Const{T: t, Value: types.DText("12")}, &ir.Const{T: t, Value: types.DText("abc")}}
	case types.Date:
		return []ir.Expr{date("2020-02-29"), date("1969-12-31")}
	case types.Timestamp:
		return []ir.Expr{tsc("2020-02-29 12:34:56.789"), tsc("1969-12-31 23:59:59.5")}
	case types.TimestampTZ:
		return []ir.Expr{tstzc("2020-02-29 12:34:56.789+00")}
	case types.Interval:
		return []ir.Expr{ivl("1 year 2 mons 3 days 04:05:06.5"), ivl("-1 day")}
	}
	return nil
}

// TestCastMatrix evaluates every cast ir.CastAllowed allows, between every
// pair of types, on sample values (and the text form of every sample into
// every type), through every evaluation path.
func TestCastMatrix(t *testing.T) {
	for _, from := range append(allTypes, types.UnknownT) {
		for _, to := range allTypes {
			if !ir.CastAllowed(from, to) {
				if _, err := Compile(castTo(col(0, from), to)); err == nil {
					t.Errorf("cast %s -> %s compiles but is not allowed", from, to)
				}
				continue
			}
			if from.Kind == types.Unknown {
				check(t, castTo(null(from), to), "NULL")
				continue
			}
			for _, v := range castSamples(from) {
				want, _ := evalScalarText(castTo(v, to), true)
				if strings.HasPrefix(want, "ERROR 42") {
					t.Errorf("cast %s -> %s: %s", from, to, want)
					continue
				}
				check(t, castTo(v, to), want)
			}
			check(t, castTo(null(from), to), "NULL")
		}
	}
	// Text input of every type's samples parses back.
	for _, to := range allTypes {
		for _, v := range castSamples(to) {
			k := v.(*ir.Const)
			text := k.Value.Text(k.T)
			e := castTo(txt(text), to)
			want, _ := evalScalarText(castTo(v, to), true)
			check(t, e, want)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	if _, err := Compile(&ir.Call{Fn: "no_such_fn", Args: nil, T: types.Int32T}); err == nil {
		t.Error("unknown function compiled")
	}
	if _, err := Compile(castTo(col(0, types.DateT), types.IntervalT)); err == nil {
		t.Error("date -> interval cast compiled")
	}
	// An InputRef of the wrong Arrow type is an internal error, not a crash.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := batch(mem, []types.T{types.Int32T}, [][]types.Datum{{types.DInt(1)}}, 1)
	defer rec.Release()
	ev, err := Compile(col(0, types.Int64T))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Eval(&Context{Mem: mem, Strict: true}, rec); err == nil {
		t.Error("type mismatch not detected")
	}
	if _, err := EvalDatum(&Context{Strict: true}, col(0, types.Int32T)); err == nil {
		t.Error("EvalDatum accepted an InputRef")
	}
}
