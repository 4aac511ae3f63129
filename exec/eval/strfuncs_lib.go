package eval

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// SQLSTATEs of the string functions.
const (
	codeNullNotAllowed = "22004"
	codeInvalidEscape  = "22025"
)

var (
	errChrZero     = sqlerr.New(codeProgramLimit, "null character not permitted")
	errChrNegative = sqlerr.New(sqlerr.InvalidParameterValue, "character number must be positive")
	errFewArgs     = sqlerr.New(sqlerr.InvalidParameterValue, "too few arguments for format()")
	errNullIdent   = sqlerr.New(codeNullNotAllowed, "null values cannot be formatted as an SQL identifier")
	errEscape      = sqlerr.New(codeInvalidEscape, "invalid escape string").WithHint("Escape string must be empty or one character.")
)

func init() {
	txt, i4, i8 := types.TextT, types.Int32T, types.Int64T
	strFn := func(fn string, args []types.T, k scalarFn) { reg(fn, args, fixed(k)) }
	strFn(ir.FnConcatWS, ts(txt, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if a[0].Null {
			return types.Null, nil
		}
		buf, first := k.buf[:0], true
		for _, d := range a[1:] {
			if d.Null {
				continue
			}
			if !first {
				buf = append(buf, a[0].S...)
			}
			buf, first = append(buf, d.S...), false
		}
		return k.textResult(buf), nil
	})
	strFn(ir.FnFormat, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return format(k, a[0].S, nil)
	})
	strFn(ir.FnFormat, ts(txt, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if a[0].Null {
			return types.Null, nil
		}
		return format(k, a[0].S, a[1:])
	})
	strFn(ir.FnTranslate, ts(txt, txt, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return k.textResult(translate(k.buf[:0], a[0].S, a[1].S, a[2].S)), nil
	})
	strFn(ir.FnASCII, ts(txt), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		r, _ := utf8.DecodeRuneInString(a[0].S)
		if a[0].S == "" {
			r = 0
		}
		return types.DInt(int64(r)), nil
	})
	strFn(ir.FnChr, ts(i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		c := a[0].I
		switch {
		case c == 0:
			return types.Null, errChrZero
		case c < 0:
			return types.Null, errChrNegative
		case c > utf8.MaxRune:
			return types.Null, sqlerr.New(codeProgramLimit, "requested character too large for encoding: %d", c)
		case c >= 0xD800 && c <= 0xDFFF:
			return types.Null, sqlerr.New(codeProgramLimit, "requested character not valid for encoding: %d", c)
		}
		return k.textResult(utf8.AppendRune(k.buf[:0], rune(c))), nil
	})
	strFn(ir.FnQuoteIdent, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return k.textResult(appendIdent(k.buf[:0], a[0].S)), nil
	})
	strFn(ir.FnQuoteLiteral, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return k.textResult(appendLiteral(k.buf[:0], a[0].S)), nil
	})
	strFn(ir.FnQuoteNullable, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		if a[0].Null {
			return types.DText("NULL"), nil
		}
		return k.textResult(appendLiteral(k.buf[:0], a[0].S)), nil
	})
	strFn(ir.FnMD5, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		sum := md5.Sum([]byte(a[0].S))
		return k.textResult(hex.AppendEncode(k.buf[:0], sum[:])), nil
	})
	strFn(ir.FnToHex, ts(i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return k.textResult(strconv.AppendUint(k.buf[:0], uint64(uint32(a[0].I)), 16)), nil
	})
	strFn(ir.FnToHex, ts(i8), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return k.textResult(strconv.AppendUint(k.buf[:0], uint64(a[0].I), 16)), nil
	})
	strFn(ir.FnOverlay, ts(txt, txt, i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return overlay(k, a[0].S, a[1].S, a[2].I, int64(utf8.RuneCountInString(a[1].S)))
	})
	strFn(ir.FnOverlay, ts(txt, txt, i4, i4), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return overlay(k, a[0].S, a[1].S, a[2].I, a[3].I)
	})
	strFn(ir.FnBitLength, ts(txt), func(_ *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		return types.DInt(int64(len(a[0].S)) * 8), nil
	})
}

// translate replaces each character of s found in from by the character at
// the same position of to, or drops it when to is shorter.
func translate(buf []byte, s, from, to string) []byte {
	toRunes := []rune(to)
	for _, r := range s {
		pos := -1
		i := 0
		for _, f := range from {
			if f == r {
				pos = i
				break
			}
			i++
		}
		switch {
		case pos < 0:
			buf = utf8.AppendRune(buf, r)
		case pos < len(toRunes):
			buf = utf8.AppendRune(buf, toRunes[pos])
		}
	}
	return buf
}

// overlay is overlay(s PLACING r FROM start FOR count): substr(s, 1,
// start-1) || r || substr(s, start+count).
func overlay(k *kctx, s, r string, start, count int64) (types.Datum, *sqlerr.Error) {
	head, err := substr(s, 1, start-1, true)
	if err != nil {
		return types.Null, err
	}
	tail, _ := substr(s, start+count, -1, false)
	return k.textResult(append(append(append(k.buf[:0], head.S...), r...), tail.S...)), nil
}

// appendLiteral appends s quoted as a string literal: quotes doubled, and
// with backslashes doubled in an E” literal.
func appendLiteral(buf []byte, s string) []byte {
	if strings.IndexByte(s, '\\') >= 0 {
		buf = append(buf, 'E')
	}
	buf = append(buf, '\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' || c == '\\' {
			buf = append(buf, c)
		}
		buf = append(buf, c)
	}
	return append(buf, '\'')
}

// appendIdent appends s as an identifier, quoted unless it is lower-case
// letters, digits, underscores and dollars (not first) and not a keyword
// that needs quoting.
func appendIdent(buf []byte, s string) []byte {
	safe := s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] == '_')
	for i := 0; safe && i < len(s); i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '$'
	}
	if safe && !reservedWord(s) {
		return append(buf, s...)
	}
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			buf = append(buf, '"')
		}
		buf = append(buf, s[i])
	}
	return append(buf, '"')
}

// reservedWord reports whether s is a keyword that quote_ident quotes.
func reservedWord(s string) bool { return reservedKeywords[s] }

// format is PostgreSQL's format(): %[n$][-][width]{s,I,L} and %%, where
// width may be * or *n$ (an argument; negative means left-aligned).
func format(k *kctx, f string, args []types.Datum) (types.Datum, *sqlerr.Error) {
	buf := k.buf[:0]
	next := 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			buf = append(buf, f[i])
			continue
		}
		i++
		if i >= len(f) {
			return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "unterminated format() type specifier").
				WithHint("For a single \"%%\" use \"%%%%\".")
		}
		if f[i] == '%' {
			buf = append(buf, '%')
			continue
		}
		spec, j, err := parseFormatSpec(f, i, args, &next)
		if err != nil {
			return types.Null, err
		}
		i = j
		arg := spec.arg
		if arg >= len(args) {
			return types.Null, errFewArgs
		}
		next = arg + 1
		d := args[arg]
		var val []byte
		switch f[i] {
		case 's':
			if !d.Null {
				val = []byte(d.S)
			}
		case 'I':
			if d.Null {
				return types.Null, errNullIdent
			}
			val = appendIdent(nil, d.S)
		case 'L':
			if d.Null {
				val = []byte("NULL")
			} else {
				val = appendLiteral(nil, d.S)
			}
		}
		buf = appendPadded(buf, val, spec.width, spec.left)
	}
	return k.textResult(buf), nil
}

type formatSpec struct {
	arg   int
	width int
	left  bool
}

// parseFormatSpec reads the specifier after a % at f[i:]; it returns the
// spec and the index of its type letter. next is the next implicit argument.
func parseFormatSpec(f string, i int, args []types.Datum, next *int) (formatSpec, int, *sqlerr.Error) {
	sp := formatSpec{arg: -1}
	num := func() (int, bool) {
		j := i
		for i < len(f) && f[i] >= '0' && f[i] <= '9' {
			i++
		}
		if j == i {
			return 0, false
		}
		n, err := strconv.Atoi(f[j:i])
		return n, err == nil
	}
	argPos := func(n int) (int, *sqlerr.Error) {
		if n == 0 {
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "format specifies argument 0, but arguments are numbered from 1")
		}
		return n - 1, nil
	}
	// n$ selects the argument.
	start := i
	if n, ok := num(); ok && i < len(f) && f[i] == '$' {
		p, err := argPos(n)
		if err != nil {
			return sp, i, err
		}
		sp.arg = p
		i++
	} else {
		i = start
	}
	if i < len(f) && f[i] == '-' {
		sp.left = true
		i++
	}
	if i < len(f) && f[i] == '*' {
		i++
		wArg := *next
		start := i
		if n, ok := num(); ok && i < len(f) && f[i] == '$' {
			p, err := argPos(n)
			if err != nil {
				return sp, i, err
			}
			wArg = p
			i++
		} else {
			i = start
		}
		if wArg >= len(args) {
			return sp, i, errFewArgs
		}
		*next = wArg + 1
		if d := args[wArg]; !d.Null {
			w, err := strconv.Atoi(strings.TrimSpace(d.S))
			if err != nil {
				return sp, i, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type integer: \"%s\"", d.S)
			}
			if w < 0 {
				sp.left, w = true, -w
			}
			sp.width = w
		}
	} else if n, ok := num(); ok {
		sp.width = n
	}
	if i >= len(f) {
		return sp, i, sqlerr.New(sqlerr.InvalidParameterValue, "unterminated format() type specifier").
			WithHint("For a single \"%%\" use \"%%%%\".")
	}
	switch f[i] {
	case 's', 'I', 'L':
	default:
		r, _ := utf8.DecodeRuneInString(f[i:])
		return sp, i, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized format() type specifier \"%c\"", r).
			WithHint("For a single \"%%\" use \"%%%%\".")
	}
	if sp.arg < 0 {
		sp.arg = *next
	}
	return sp, i, nil
}

// appendPadded appends val padded with spaces to width characters.
func appendPadded(buf, val []byte, width int, left bool) []byte {
	pad := width - utf8.RuneCount(val)
	if !left {
		for ; pad > 0; pad-- {
			buf = append(buf, ' ')
		}
	}
	buf = append(buf, val...)
	for ; pad > 0; pad-- {
		buf = append(buf, ' ')
	}
	return buf
}
