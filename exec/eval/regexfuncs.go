package eval

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Regular expressions are Go's regexp (RE2) reading PostgreSQL's flags and
// the ARE escapes RE2 lacks (\y, \Y, \Z). What RE2 cannot do is refused
// with 2201B (invalid_regular_expression): back references (\1 in a
// pattern), lookahead and lookbehind, \m, \M, [[:<:]] and [[:>:]]. Matching
// is leftmost-longest, as PostgreSQL's for patterns without non-greedy
// quantifiers; a pattern with one (*? +? ?? {}?) is matched leftmost-first,
// quantifier by quantifier, where PostgreSQL gives the whole pattern the
// greediness of its first quantifier. In newline-sensitive mode a negated
// bracket expression still matches a newline. With a start position past 1
// the search sees the text from there on (^ and \y match at the start
// position), and an empty match right after another is not counted.

const codeInvalidRegex = "2201B"

// reFlags are PostgreSQL's regular expression options.
type reFlags struct {
	global, icase, literal, expanded bool
	// mode is "s" (the default: . matches newline, ^ $ only at the ends),
	// "n" (newline-sensitive), "p" (partial) or "w" (inverse partial).
	mode byte
}

// parseReFlags reads flags for function fn; global is refused unless
// allowGlobal.
func parseReFlags(flags, fn string, allowGlobal bool) (reFlags, *sqlerr.Error) {
	f := reFlags{mode: 's'}
	for _, c := range flags {
		switch c {
		case 'g':
			if !allowGlobal {
				return f, sqlerr.New(sqlerr.InvalidParameterValue, "%s() does not support the \"global\" option", fn)
			}
			f.global = true
		case 'i':
			f.icase = true
		case 'c':
			f.icase = false
		case 'q':
			f.literal = true
		case 'x':
			f.expanded = true
		case 'e':
		case 'n', 'm':
			f.mode = 'n'
		case 's', 'p', 'w':
			f.mode = byte(c)
		case 'b':
			return f, sqlerr.Unsupported("basic regular expressions (flag \"b\")")
		default:
			return f, sqlerr.New(sqlerr.InvalidParameterValue, "invalid regular expression option: \"%c\"", c)
		}
	}
	return f, nil
}

// regexCache is the last compiled pattern of a kctx.
type regexCache struct {
	pat   string
	flags reFlags
	re    *regexp.Regexp
}

// regexFor compiles pat under flags, reusing the last compiled one.
func (k *kctx) regexFor(pat string, f reFlags) (*regexp.Regexp, *sqlerr.Error) {
	c := &k.re
	if c.re != nil && c.pat == pat && c.flags == f {
		return c.re, nil
	}
	re, err := compileRegex(pat, f)
	if err != nil {
		return nil, err
	}
	*c = regexCache{pat: strings.Clone(pat), flags: f, re: re}
	return re, nil
}

func compileRegex(pat string, f reFlags) (*regexp.Regexp, *sqlerr.Error) {
	var src string
	if f.literal {
		src = regexp.QuoteMeta(pat)
	} else {
		var err *sqlerr.Error
		if src, err = translateARE(pat, f.expanded); err != nil {
			return nil, err
		}
	}
	var prefix strings.Builder
	prefix.WriteString("(?")
	if f.icase {
		prefix.WriteByte('i')
	}
	switch f.mode {
	case 's':
		prefix.WriteByte('s')
	case 'n':
		prefix.WriteByte('m')
	case 'w':
		prefix.WriteString("ms")
	}
	prefix.WriteByte(')')
	p := prefix.String()
	if p == "(?)" {
		p = ""
	}
	re, err := regexp.Compile(p + src)
	if err != nil {
		msg := err.Error()
		if se, ok := err.(*syntax.Error); ok {
			msg = string(se.Code) + ": " + se.Expr
			switch se.Code {
			case syntax.ErrInvalidPerlOp, syntax.ErrInvalidEscape:
				msg += " (back references, lookahead and lookbehind are not supported)"
			}
		}
		return nil, sqlerr.New(codeInvalidRegex, "invalid regular expression: %s", msg)
	}
	if !nonGreedy(src) {
		re.Longest()
	}
	return re, nil
}

// nonGreedy reports whether src has a non-greedy quantifier.
func nonGreedy(src string) bool {
	for i := 1; i < len(src); i++ {
		if src[i] == '?' && strings.IndexByte("*+?}", src[i-1]) >= 0 && (i < 2 || src[i-2] != '\\') {
			return true
		}
	}
	return false
}

// translateARE rewrites PostgreSQL ARE escapes into RE2's: \y and \Y are
// word boundaries, \Z the end of the text; \m and \M are refused. With
// expanded, blanks and # comments outside brackets are dropped.
func translateARE(pat string, expanded bool) (string, *sqlerr.Error) {
	if !expanded && !strings.ContainsAny(pat, `\`) {
		return pat, nil
	}
	var b strings.Builder
	inBracket := false
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch {
		case c == '\\' && i+1 < len(pat):
			i++
			switch n := pat[i]; {
			case inBracket:
				b.WriteByte('\\')
				b.WriteByte(n)
			case n == 'y':
				b.WriteString(`\b`)
			case n == 'Y':
				b.WriteString(`\B`)
			case n == 'Z':
				b.WriteString(`\z`)
			case n == 'm' || n == 'M':
				return "", sqlerr.New(codeInvalidRegex, "invalid regular expression: \\%c is not supported (use \\y)", n)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
		case c == '[' && !inBracket:
			inBracket = true
			b.WriteByte(c)
			// A ] right after [ or [^ is a literal.
			if i+1 < len(pat) && pat[i+1] == '^' {
				i++
				b.WriteByte('^')
			}
			if i+1 < len(pat) && pat[i+1] == ']' {
				i++
				b.WriteString(`\]`)
			}
		case c == '[' && inBracket && i+1 < len(pat) && (pat[i+1] == ':' || pat[i+1] == '.' || pat[i+1] == '='):
			// A class name [:alpha:] inside a bracket.
			end := strings.Index(pat[i+2:], string(pat[i+1])+"]")
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			b.WriteString(pat[i : i+2+end+2])
			i += 2 + end + 1
		case c == ']' && inBracket:
			inBracket = false
			b.WriteByte(c)
		case expanded && !inBracket && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'):
		case expanded && !inBracket && c == '#':
			for i+1 < len(pat) && pat[i+1] != '\n' {
				i++
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// startOffset returns the byte offset of the start'th character of s (1 is
// the first), or -1 if s is shorter; start < 1 is an error.
func startOffset(s string, start int64) (int, *sqlerr.Error) {
	if start < 1 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"start\": %d", start)
	}
	if start == 1 {
		return 0, nil
	}
	off := runeOffset(s, start-1)
	if off == len(s) && int64(utf8.RuneCountInString(s)) < start-1 {
		return -1, nil
	}
	return off, nil
}

func positiveParam(name string, v int64) *sqlerr.Error {
	if v <= 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": %d", name, v)
	}
	return nil
}

// regexArgs are the optional arguments of the regexp_ functions, with
// PostgreSQL's defaults.
type regexArgs struct {
	start, n, endOpt, sub int64
	flags                 string
}

// matchesFrom returns the submatch indexes of the matches of re in s from
// byte offset off, up to limit (-1: all), as offsets into s.
func matchesFrom(re *regexp.Regexp, s string, off, limit int) [][]int {
	ms := re.FindAllStringSubmatchIndex(s[off:], limit)
	if off > 0 {
		for _, m := range ms {
			for j := range m {
				if m[j] >= 0 {
					m[j] += off
				}
			}
		}
	}
	return ms
}

// charPos is the 1-based character position of byte offset b of s.
func charPos(s string, b int) int64 { return int64(utf8.RuneCountInString(s[:b])) + 1 }

func regexCount(k *kctx, s, pat string, o regexArgs) (types.Datum, *sqlerr.Error) {
	f, err := parseReFlags(o.flags, ir.FnRegexCount, false)
	if err != nil {
		return types.Null, err
	}
	re, err := k.regexFor(pat, f)
	if err != nil {
		return types.Null, err
	}
	off, err := startOffset(s, o.start)
	if err != nil || off < 0 {
		return types.DInt(0), err
	}
	return types.DInt(int64(len(re.FindAllStringIndex(s[off:], -1)))), nil
}

// nthMatch finds the n'th match from start for regexp_instr and
// regexp_substr; nil if there is none.
func nthMatch(k *kctx, fn, s, pat string, o regexArgs) ([]int, *sqlerr.Error) {
	f, err := parseReFlags(o.flags, fn, false)
	if err != nil {
		return nil, err
	}
	re, err := k.regexFor(pat, f)
	if err != nil {
		return nil, err
	}
	off, err := startOffset(s, o.start)
	if err != nil {
		return nil, err
	}
	if err := positiveParam("n", o.n); err != nil {
		return nil, err
	}
	if o.sub < 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"subexpr\": %d", o.sub)
	}
	if off < 0 || o.sub > int64(re.NumSubexp()) {
		return nil, nil
	}
	ms := matchesFrom(re, s, off, int(min(o.n, int64(len(s)+1))))
	if int64(len(ms)) < o.n {
		return nil, nil
	}
	m := ms[o.n-1]
	if m[2*o.sub] < 0 {
		return nil, nil
	}
	return m[2*o.sub : 2*o.sub+2], nil
}

func regexInstr(k *kctx, s, pat string, o regexArgs) (types.Datum, *sqlerr.Error) {
	if o.endOpt != 0 && o.endOpt != 1 {
		return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"endoption\": %d", o.endOpt)
	}
	m, err := nthMatch(k, ir.FnRegexInstr, s, pat, o)
	if err != nil || m == nil {
		return types.DInt(0), err
	}
	return types.DInt(charPos(s, m[o.endOpt])), nil
}

func regexSubstr(k *kctx, s, pat string, o regexArgs) (types.Datum, *sqlerr.Error) {
	m, err := nthMatch(k, ir.FnRegexSubstr, s, pat, o)
	if err != nil || m == nil {
		return types.Null, err
	}
	return types.DText(s[m[0]:m[1]]), nil
}

// regexReplace replaces the n'th match from start (all of them when n is 0
// or the g flag is given) by repl, where \1..\9 are groups, \& the match and
// \\ a backslash.
func regexReplace(k *kctx, s, pat, repl string, o regexArgs) (types.Datum, *sqlerr.Error) {
	f, err := parseReFlags(o.flags, ir.FnRegexReplace, true)
	if err != nil {
		return types.Null, err
	}
	re, err := k.regexFor(pat, f)
	if err != nil {
		return types.Null, err
	}
	off, err := startOffset(s, o.start)
	if err != nil {
		return types.Null, err
	}
	if o.n < 0 {
		return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"n\": %d", o.n)
	}
	if off < 0 {
		return types.DText(s), nil
	}
	all := f.global || o.n == 0
	limit := -1
	if !all {
		limit = int(min(o.n, int64(len(s)+1)))
	}
	ms := matchesFrom(re, s, off, limit)
	if !all {
		if int64(len(ms)) < o.n {
			return types.DText(s), nil
		}
		ms = ms[o.n-1:]
	}
	if len(ms) == 0 {
		return types.DText(s), nil
	}
	buf := k.buf[:0]
	prev := 0
	for _, m := range ms {
		buf = append(buf, s[prev:m[0]]...)
		buf = appendReplacement(buf, s, repl, m)
		prev = m[1]
	}
	return k.textResult(append(buf, s[prev:]...)), nil
}

func appendReplacement(buf []byte, s, repl string, m []int) []byte {
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' || i+1 == len(repl) {
			buf = append(buf, c)
			continue
		}
		switch n := repl[i+1]; {
		case n >= '1' && n <= '9':
			g := int(n - '0')
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				buf = append(buf, s[m[2*g]:m[2*g+1]]...)
			}
			i++
		case n == '&':
			buf = append(buf, s[m[0]:m[1]]...)
			i++
		case n == '\\':
			buf = append(buf, '\\')
			i++
		default:
			buf = append(buf, '\\')
		}
	}
	return buf
}

// similarToRegex is PostgreSQL's similar_to_escape: the ARE a SIMILAR TO
// pattern means, anchored at both ends: % is .*, _ is ., ( opens a
// non-capturing group, . ^ $ are literals, and esc quotes the next
// character (esc is empty for none).
func similarToRegex(buf []byte, pat, esc string) ([]byte, *sqlerr.Error) {
	var e rune = -1
	if esc != "" {
		r, sz := utf8.DecodeRuneInString(esc)
		if sz != len(esc) {
			return nil, errEscape
		}
		e = r
	}
	buf = append(buf, "^(?:"...)
	afterEscape, inBracket := false, false
	for _, r := range pat {
		switch {
		case afterEscape:
			if r == '"' {
				return nil, sqlerr.Unsupported("escape-double-quote in SIMILAR TO outside SUBSTRING")
			}
			buf = append(buf, '\\')
			buf = utf8.AppendRune(buf, r)
			afterEscape = false
		case r == e:
			afterEscape = true
		case inBracket:
			if r == '\\' {
				buf = append(buf, '\\')
			}
			buf = utf8.AppendRune(buf, r)
			if r == ']' {
				inBracket = false
			}
		case r == '[':
			inBracket = true
			buf = append(buf, '[')
		case r == '%':
			buf = append(buf, ".*"...)
		case r == '_':
			buf = append(buf, '.')
		case r == '(':
			buf = append(buf, "(?:"...)
		case r == '\\' || r == '.' || r == '^' || r == '$':
			buf = append(buf, '\\')
			buf = utf8.AppendRune(buf, r)
		default:
			buf = utf8.AppendRune(buf, r)
		}
	}
	return append(buf, ")$"...), nil
}

func init() {
	txt, i4 := types.TextT, types.Int32T
	strFn := func(fn string, args []types.T, k scalarFn) { reg(fn, args, fixed(k)) }
	match := func(icase bool) scalarFn {
		return func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			re, err := k.regexFor(a[1].S, reFlags{icase: icase, mode: 's'})
			if err != nil {
				return types.Null, err
			}
			return types.DBool(re.MatchString(a[0].S)), nil
		}
	}
	strFn(ir.FnRegexMatch, ts(txt, txt), match(false))
	strFn(ir.FnRegexIMatch, ts(txt, txt), match(true))
	like := func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		flags := ""
		if len(a) > 2 {
			flags = a[2].S
		}
		f, err := parseReFlags(flags, ir.FnRegexLike, false)
		if err != nil {
			return types.Null, err
		}
		re, err := k.regexFor(a[1].S, f)
		if err != nil {
			return types.Null, err
		}
		return types.DBool(re.MatchString(a[0].S)), nil
	}
	strFn(ir.FnRegexLike, ts(txt, txt), like)
	strFn(ir.FnRegexLike, ts(txt, txt, txt), like)
	strFn(ir.FnSimilarEscape, ts(txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		buf, err := similarToRegex(k.buf[:0], a[0].S, `\`)
		if err != nil {
			return types.Null, err
		}
		return k.textResult(buf), nil
	})
	strFn(ir.FnSimilarEscape, ts(txt, txt), func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		buf, err := similarToRegex(k.buf[:0], a[0].S, a[1].S)
		if err != nil {
			return types.Null, err
		}
		return k.textResult(buf), nil
	})

	// The optional trailing arguments, by position, of each function.
	type optArg func(o *regexArgs, d types.Datum)
	start := func(o *regexArgs, d types.Datum) { o.start = d.I }
	nth := func(o *regexArgs, d types.Datum) { o.n = d.I }
	endOpt := func(o *regexArgs, d types.Datum) { o.endOpt = d.I }
	flags := func(o *regexArgs, d types.Datum) { o.flags = d.S }
	sub := func(o *regexArgs, d types.Datum) { o.sub = d.I }
	opts := func(fixedArgs int, a []types.Datum, setters []optArg, o regexArgs) regexArgs {
		for i, d := range a[fixedArgs:] {
			setters[i](&o, d)
		}
		return o
	}
	def := regexArgs{start: 1, n: 1}
	type variant struct {
		args    []types.T
		setters []optArg
	}
	for _, v := range []variant{
		{ts(txt, txt), nil},
		{ts(txt, txt, i4), []optArg{start}},
		{ts(txt, txt, i4, txt), []optArg{start, flags}},
	} {
		setters := v.setters
		strFn(ir.FnRegexCount, v.args, func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return regexCount(k, a[0].S, a[1].S, opts(2, a, setters, def))
		})
	}
	for _, v := range []variant{
		{ts(txt, txt), nil},
		{ts(txt, txt, i4), []optArg{start}},
		{ts(txt, txt, i4, i4), []optArg{start, nth}},
		{ts(txt, txt, i4, i4, i4), []optArg{start, nth, endOpt}},
		{ts(txt, txt, i4, i4, i4, txt), []optArg{start, nth, endOpt, flags}},
		{ts(txt, txt, i4, i4, i4, txt, i4), []optArg{start, nth, endOpt, flags, sub}},
	} {
		setters := v.setters
		strFn(ir.FnRegexInstr, v.args, func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return regexInstr(k, a[0].S, a[1].S, opts(2, a, setters, def))
		})
	}
	for _, v := range []variant{
		{ts(txt, txt), nil},
		{ts(txt, txt, i4), []optArg{start}},
		{ts(txt, txt, i4, i4), []optArg{start, nth}},
		{ts(txt, txt, i4, i4, txt), []optArg{start, nth, flags}},
		{ts(txt, txt, i4, i4, txt, i4), []optArg{start, nth, flags, sub}},
	} {
		setters := v.setters
		strFn(ir.FnRegexSubstr, v.args, func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return regexSubstr(k, a[0].S, a[1].S, opts(2, a, setters, def))
		})
	}
	for _, v := range []variant{
		{ts(txt, txt, txt), nil},
		{ts(txt, txt, txt, txt), []optArg{flags}},
		{ts(txt, txt, txt, i4), []optArg{start}},
		{ts(txt, txt, txt, i4, i4), []optArg{start, nth}},
		{ts(txt, txt, txt, i4, i4, txt), []optArg{start, nth, flags}},
	} {
		setters := v.setters
		strFn(ir.FnRegexReplace, v.args, func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
			return regexReplace(k, a[0].S, a[1].S, a[2].S, opts(3, a, setters, def))
		})
	}
}
