package eval

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// SQLSTATEs that sqlerr does not name.
const (
	codeSubstringError   = "22011"
	codeInvalidLogArg    = "2201E"
	codeInvalidPowerArg  = "2201F"
	codeProgramLimit     = "54000"
	maxTextResultBytes   = 1 << 30
	errMsgLengthTooLarge = "requested length too large"
)

var (
	errNegativeSubstr = sqlerr.New(codeSubstringError, "negative substring length not allowed")
	errFieldZero      = sqlerr.New(sqlerr.InvalidParameterValue, "field position must not be zero")
	errTooLarge       = sqlerr.New(codeProgramLimit, errMsgLengthTooLarge)
)

func init() {
	txt, i4 := types.TextT, types.Int32T
	strFn := func(fn string, args []types.T, k scalarFn) { reg(fn, args, fixed(k)) }

	strFn(ir.FnLike, ts(txt, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		m, err := k.likeFor(a[1].S, false)
		if err != nil {
			return types.Null, err
		}
		return types.DBool(m.match(a[0].S)), nil
	})
	strFn(ir.FnILike, ts(txt, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		m, err := k.likeFor(a[1].S, true)
		if err != nil {
			return types.Null, err
		}
		return types.DBool(m.match(a[0].S)), nil
	})
	strFn(ir.FnConcatOp, ts(txt, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		buf := append(append(k.buf[:0], a[0].S...), a[1].S...)
		return k.textResult(buf), nil
	})
	strFn(ir.FnLower, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return k.textResult(appendMapped(k.buf[:0], a[0].S, unicode.ToLower)), nil
	})
	strFn(ir.FnUpper, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return k.textResult(appendMapped(k.buf[:0], a[0].S, unicode.ToUpper)), nil
	})
	strFn(ir.FnReverse, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s := a[0].S
		buf := k.buf[:0]
		for i := len(s); i > 0; {
			r, sz := utf8.DecodeLastRuneInString(s[:i])
			i -= sz
			if r == utf8.RuneError && sz == 1 {
				buf = append(buf, s[i])
				continue
			}
			buf = utf8.AppendRune(buf, r)
		}
		return k.textResult(buf), nil
	})
	strFn(ir.FnInitcap, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		buf := k.buf[:0]
		inWord := false
		for _, r := range a[0].S {
			if inWord {
				buf = utf8.AppendRune(buf, unicode.ToLower(r))
			} else {
				buf = utf8.AppendRune(buf, unicode.ToUpper(r))
			}
			inWord = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		return k.textResult(buf), nil
	})
	for _, fn := range []string{ir.FnTrim, ir.FnLTrim, ir.FnRTrim} {
		left, right := fn != ir.FnRTrim, fn != ir.FnLTrim
		strFn(fn, ts(txt), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DText(trimChars(a[0].S, " ", left, right)), nil
		})
		strFn(fn, ts(txt, txt), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return types.DText(trimChars(a[0].S, a[1].S, left, right)), nil
		})
	}
	strFn(ir.FnLength, ts(txt), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInt(int64(utf8.RuneCountInString(a[0].S))), nil
	})
	reg(ir.FnOctetLen, ts(txt), octetLength)
	strFn(ir.FnSubstr, ts(txt, i4), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return substr(a[0].S, a[1].I, -1, false)
	})
	strFn(ir.FnSubstr, ts(txt, i4, i4), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return substr(a[0].S, a[1].I, a[2].I, true)
	})
	strFn(ir.FnReplace, ts(txt, txt, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s, from, to := a[0].S, a[1].S, a[2].S
		if from == "" || !strings.Contains(s, from) {
			return types.DText(s), nil
		}
		buf := k.buf[:0]
		for {
			i := strings.Index(s, from)
			if i < 0 {
				break
			}
			buf = append(append(buf, s[:i]...), to...)
			s = s[i+len(from):]
		}
		return k.textResult(append(buf, s...)), nil
	})
	strFn(ir.FnStrpos, ts(txt, txt), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		i := strings.Index(a[0].S, a[1].S)
		if i < 0 {
			return types.DInt(0), nil
		}
		return types.DInt(int64(utf8.RuneCountInString(a[0].S[:i])) + 1), nil
	})
	strFn(ir.FnLeft, ts(txt, i4), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s, n := a[0].S, a[1].I
		if n < 0 {
			n += int64(utf8.RuneCountInString(s))
			if n < 0 {
				n = 0
			}
		}
		return types.DText(s[:runeOffset(s, n)]), nil
	})
	strFn(ir.FnRight, ts(txt, i4), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s, n := a[0].S, a[1].I
		count := int64(utf8.RuneCountInString(s))
		skip := count - n
		if n < 0 {
			skip = -n
		}
		if skip < 0 {
			skip = 0
		}
		return types.DText(s[runeOffset(s, skip):]), nil
	})
	strFn(ir.FnRepeat, ts(txt, i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		s, n := a[0].S, a[1].I
		if n <= 0 || s == "" {
			return types.DText(""), nil
		}
		if int64(len(s))*n > maxTextResultBytes {
			return types.Null, errTooLarge
		}
		buf := k.buf[:0]
		for ; n > 0; n-- {
			buf = append(buf, s...)
		}
		return k.textResult(buf), nil
	})
	strFn(ir.FnSplitPart, ts(txt, txt, i4), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return splitPart(a[0].S, a[1].S, a[2].I)
	})
	strFn(ir.FnStartsWith, ts(txt, txt), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DBool(strings.HasPrefix(a[0].S, a[1].S)), nil
	})
	for _, fn := range []string{ir.FnLPad, ir.FnRPad} {
		left := fn == ir.FnLPad
		strFn(fn, ts(txt, i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return pad(k, a[0].S, a[1].I, " ", left)
		})
		strFn(fn, ts(txt, i4, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return pad(k, a[0].S, a[1].I, a[2].S, left)
		})
	}
	strFn(ir.FnConcat, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		buf := k.buf[:0]
		for _, d := range a {
			if !d.Null {
				buf = append(buf, d.S...)
			}
		}
		return k.textResult(buf), nil
	})
}

// appendMapped appends s with every rune mapped by f (ASCII fast path).
func appendMapped(buf []byte, s string, f func(rune) rune) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			buf = append(buf, byte(f(rune(c))))
			i++
			continue
		}
		r, sz := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && sz == 1 {
			buf = append(buf, c)
		} else {
			buf = utf8.AppendRune(buf, f(r))
		}
		i += sz
	}
	return buf
}

// trimChars removes the characters of set from the ends of s.
func trimChars(s, set string, left, right bool) string {
	if set == "" {
		return s
	}
	in := func(r rune) bool { return strings.ContainsRune(set, r) }
	if len(set) > 16 {
		// A long set: look characters up instead of scanning set for each.
		var ascii [utf8.RuneSelf]bool
		var other map[rune]bool
		for _, r := range set {
			if r < utf8.RuneSelf {
				ascii[r] = true
			} else {
				if other == nil {
					other = map[rune]bool{}
				}
				other[r] = true
			}
		}
		in = func(r rune) bool {
			if r < utf8.RuneSelf {
				return ascii[r]
			}
			return other[r]
		}
	}
	if left {
		s = strings.TrimLeftFunc(s, in)
	}
	if right {
		s = strings.TrimRightFunc(s, in)
	}
	return s
}

// runeOffset returns the byte offset of the n-th character of s (len(s) if s
// is shorter).
func runeOffset(s string, n int64) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// substr is PostgreSQL's text_substring: characters from position start
// (1-based; positions before 1 count but yield nothing) for count characters.
func substr(s string, start, count int64, hasCount bool) (types.Datum, *sqlerr.Error) {
	s1 := max(start, 1)
	if !hasCount {
		return types.DText(s[runeOffset(s, s1-1):]), nil
	}
	if count < 0 {
		return types.Null, errNegativeSubstr
	}
	end := start + count // both are int32 range: no overflow in int64
	if end <= s1 {
		return types.DText(""), nil
	}
	from := runeOffset(s, s1-1)
	to := from + runeOffset(s[from:], end-s1)
	return types.DText(s[from:to]), nil
}

// splitPart is split_part with PostgreSQL 14's negative field numbers.
func splitPart(s, delim string, n int64) (types.Datum, *sqlerr.Error) {
	if n == 0 {
		return types.Null, errFieldZero
	}
	if s == "" {
		return types.DText(""), nil
	}
	if delim == "" {
		if n == 1 || n == -1 {
			return types.DText(s), nil
		}
		return types.DText(""), nil
	}
	if n > 0 {
		for ; n > 1; n-- {
			i := strings.Index(s, delim)
			if i < 0 {
				return types.DText(""), nil
			}
			s = s[i+len(delim):]
		}
		if i := strings.Index(s, delim); i >= 0 {
			s = s[:i]
		}
		return types.DText(s), nil
	}
	for ; n < -1; n++ {
		i := strings.LastIndex(s, delim)
		if i < 0 {
			return types.DText(""), nil
		}
		s = s[:i]
	}
	if i := strings.LastIndex(s, delim); i >= 0 {
		s = s[i+len(delim):]
	}
	return types.DText(s), nil
}

// pad is lpad/rpad: s is cut to length characters, then filled up to length
// with repetitions of fill (nothing if fill is empty).
func pad(k *kctx, s string, length int64, fill string, left bool) (types.Datum, *sqlerr.Error) {
	if length <= 0 {
		return types.DText(""), nil
	}
	slen := int64(utf8.RuneCountInString(s))
	if slen >= length {
		return types.DText(s[:runeOffset(s, length)]), nil
	}
	if fill == "" {
		return types.DText(s), nil
	}
	need := length - slen
	if need*int64(utf8.UTFMax) > maxTextResultBytes {
		return types.Null, errTooLarge
	}
	buf := k.buf[:0]
	if !left {
		buf = append(buf, s...)
	}
	for need > 0 {
		for _, r := range fill {
			if need == 0 {
				break
			}
			buf = utf8.AppendRune(buf, r)
			need--
		}
	}
	if left {
		buf = append(buf, s...)
	}
	return k.textResult(buf), nil
}

func init() {
	num, f8, i4 := types.NumericT, types.Float64T, types.Int32T
	floatFn := func(fn string, f func(x float64) (float64, *sqlerr.Error)) {
		reg(fn, ts(f8), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			r, err := f(a[0].F)
			return types.DFloat(r), err
		}))
	}
	floatFn(ir.FnRound, func(x float64) (float64, *sqlerr.Error) { return math.RoundToEven(x), nil })
	floatFn(ir.FnTrunc, func(x float64) (float64, *sqlerr.Error) { return math.Trunc(x), nil })
	floatFn(ir.FnFloor, func(x float64) (float64, *sqlerr.Error) { return math.Floor(x), nil })
	floatFn(ir.FnCeil, func(x float64) (float64, *sqlerr.Error) { return math.Ceil(x), nil })
	floatFn(ir.FnSign, func(x float64) (float64, *sqlerr.Error) {
		switch {
		case x > 0:
			return 1, nil
		case x < 0:
			return -1, nil
		}
		return 0, nil
	})
	floatFn(ir.FnSqrt, func(x float64) (float64, *sqlerr.Error) {
		if x < 0 {
			return 0, sqlerr.New(codeInvalidPowerArg, "cannot take square root of a negative number")
		}
		return math.Sqrt(x), nil
	})
	floatFn(ir.FnExp, func(x float64) (float64, *sqlerr.Error) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if math.IsInf(x, -1) {
				return 0, nil
			}
			return x, nil
		}
		r := math.Exp(x)
		switch {
		case math.IsInf(r, 0):
			return 0, errFloatOverflow
		case r == 0:
			return 0, errFloatUnderflow
		}
		return r, nil
	})
	logFn := func(f func(float64) float64) func(x float64) (float64, *sqlerr.Error) {
		return func(x float64) (float64, *sqlerr.Error) {
			switch {
			case x == 0:
				return 0, sqlerr.New(codeInvalidLogArg, "cannot take logarithm of zero")
			case x < 0:
				return 0, sqlerr.New(codeInvalidLogArg, "cannot take logarithm of a negative number")
			}
			return f(x), nil
		}
	}
	floatFn(ir.FnLn, logFn(math.Log))
	floatFn(ir.FnLog10, logFn(math.Log10))
	reg(ir.FnPower, ts(f8, f8), fixed(func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		r, err := power(a[0].F, a[1].F)
		return types.DFloat(r), err
	}))

	numFn := func(fn string, mode roundMode) {
		reg(fn, ts(num), func(args []types.T, _ types.T) scalarFn {
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
				r, ok := dynRoundTo(a[0].Dec, 0, mode)
				if !ok {
					return types.Null, errNumericOverflow
				}
				return types.DNumeric(r), nil
			}
		})
	}
	numFn(ir.FnRound, roundHalfAway)
	numFn(ir.FnTrunc, roundTrunc)
	numFn(ir.FnFloor, roundFloor)
	numFn(ir.FnCeil, roundCeil)
	for _, fn := range []string{ir.FnRound, ir.FnTrunc} {
		mode := roundHalfAway
		if fn == ir.FnTrunc {
			mode = roundTrunc
		}
		reg(fn, ts(num, i4), func(args []types.T, _ types.T) scalarFn {
			return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
				r, ok := dynRoundTo(a[0].Dec, a[1].I, mode)
				if !ok {
					return types.Null, errNumericOverflow
				}
				return types.DNumeric(r), nil
			}
		})
	}
	reg(ir.FnSign, ts(num), func(args []types.T, _ types.T) scalarFn {
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			m, _ := types.UnpackNumeric(a[0].Dec)
			return types.DNumeric(dynInt(int64(m.Sign()))), nil
		}
	})
}

// power is PostgreSQL's dpow.
func power(x, y float64) (float64, *sqlerr.Error) {
	switch {
	case math.IsNaN(x):
		if math.IsNaN(y) || y != 0 {
			return math.NaN(), nil
		}
		return 1, nil
	case math.IsNaN(y):
		if x != 1 {
			return math.NaN(), nil
		}
		return 1, nil
	case x == 0 && y < 0:
		return 0, sqlerr.New(codeInvalidPowerArg, "zero raised to a negative power is undefined")
	case x < 0 && math.Floor(y) != y:
		return 0, sqlerr.New(codeInvalidPowerArg, "a negative number raised to a non-integer power yields a complex result")
	case math.IsInf(y, 0):
		ax := math.Abs(x)
		switch {
		case ax == 1:
			return 1, nil
		case y > 0:
			if ax > 1 {
				return y, nil
			}
			return 0, nil
		default:
			if ax > 1 {
				return 0, nil
			}
			return -y, nil
		}
	case math.IsInf(x, 0):
		if y == 0 {
			return 1, nil
		}
		if x > 0 {
			if y > 0 {
				return x, nil
			}
			return 0, nil
		}
		odd := y == math.Floor(y) && y*0.5 != math.Floor(y*0.5)
		if y > 0 {
			if odd {
				return x, nil
			}
			return -x, nil
		}
		if odd {
			return math.Copysign(0, -1), nil
		}
		return 0, nil
	}
	r := math.Pow(x, y)
	switch {
	case math.IsInf(r, 0):
		return 0, errFloatOverflow
	case r == 0 && x != 0:
		return 0, errFloatUnderflow
	}
	return r, nil
}

// octetLength is octet_length(text). A character(n) value is stored without
// its trailing blanks (types.T.Bpchar), and PostgreSQL counts them: the
// padding up to n characters is added back.
func octetLength(args []types.T, _ types.T) scalarFn {
	if t := args[0]; t.Bpchar && t.Width > 0 {
		width := int64(t.Width)
		return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			pad := max(width-int64(utf8.RuneCountInString(a[0].S)), 0)
			return types.DInt(int64(len(a[0].S)) + pad), nil
		}
	}
	return func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInt(int64(len(a[0].S))), nil
	}
}
