package ir

import "github.com/streamsql/streamsql/types"

// String functions beyond those of funcs.go, with PostgreSQL's signatures.
// Regular expressions are RE2's (Go's regexp) with PostgreSQL's flags; see
// the evaluator for what of PostgreSQL's ARE syntax is refused.
const (
	// FnRegexMatch is text ~ pattern; FnRegexIMatch is text ~* pattern. The
	// negated operators are NOT of these.
	FnRegexMatch  = "regex_match"
	FnRegexIMatch = "regex_imatch"
	// FnSimilarEscape is similar_to_escape(pattern [, escape]): the regular
	// expression that a SIMILAR TO pattern means (x SIMILAR TO p is
	// x ~ similar_to_escape(p), as in PostgreSQL).
	FnSimilarEscape = "similar_to_escape"
	FnRegexReplace  = "regexp_replace"
	FnRegexCount    = "regexp_count"
	FnRegexInstr    = "regexp_instr"
	FnRegexLike     = "regexp_like"
	FnRegexSubstr   = "regexp_substr"

	FnFormat        = "format"    // format(fmt, args...): %s %I %L %%, positions n$, widths
	FnConcatWS      = "concat_ws" // concat_ws(sep, args...): NULL arguments are skipped
	FnTranslate     = "translate"
	FnASCII         = "ascii"
	FnChr           = "chr"
	FnQuoteIdent    = "quote_ident"
	FnQuoteLiteral  = "quote_literal"
	FnQuoteNullable = "quote_nullable" // quote_literal, or NULL as the text NULL
	FnMD5           = "md5"
	FnToHex         = "to_hex"
	FnOverlay       = "overlay" // overlay(s PLACING r FROM start [FOR count])
	FnBitLength     = "bit_length"
)

func init() {
	b, i4, i8, txt := types.BoolT, types.Int32T, types.Int64T, types.TextT
	def(FnRegexMatch, b, txt, txt)
	def(FnRegexIMatch, b, txt, txt)
	def(FnSimilarEscape, txt, txt)
	def(FnSimilarEscape, txt, txt, txt)
	def(FnRegexReplace, txt, txt, txt, txt)
	def(FnRegexReplace, txt, txt, txt, txt, txt)
	def(FnRegexReplace, txt, txt, txt, txt, i4)
	def(FnRegexReplace, txt, txt, txt, txt, i4, i4)
	def(FnRegexReplace, txt, txt, txt, txt, i4, i4, txt)
	def(FnRegexCount, i4, txt, txt)
	def(FnRegexCount, i4, txt, txt, i4)
	def(FnRegexCount, i4, txt, txt, i4, txt)
	def(FnRegexInstr, i4, txt, txt)
	def(FnRegexInstr, i4, txt, txt, i4)
	def(FnRegexInstr, i4, txt, txt, i4, i4)
	def(FnRegexInstr, i4, txt, txt, i4, i4, i4)
	def(FnRegexInstr, i4, txt, txt, i4, i4, i4, txt)
	def(FnRegexInstr, i4, txt, txt, i4, i4, i4, txt, i4)
	def(FnRegexLike, b, txt, txt)
	def(FnRegexLike, b, txt, txt, txt)
	def(FnRegexSubstr, txt, txt, txt)
	def(FnRegexSubstr, txt, txt, txt, i4)
	def(FnRegexSubstr, txt, txt, txt, i4, i4)
	def(FnRegexSubstr, txt, txt, txt, i4, i4, txt)
	def(FnRegexSubstr, txt, txt, txt, i4, i4, txt, i4)

	def(FnFormat, txt, txt)
	f := def(FnFormat, txt, txt, txt)
	f.Variadic, f.Strict = true, false
	cw := def(FnConcatWS, txt, txt, txt)
	cw.Variadic, cw.Strict = true, false
	def(FnTranslate, txt, txt, txt, txt)
	def(FnASCII, i4, txt)
	def(FnChr, txt, i4)
	def(FnQuoteIdent, txt, txt)
	def(FnQuoteLiteral, txt, txt)
	def(FnQuoteNullable, txt, txt).Strict = false
	def(FnMD5, txt, txt)
	def(FnToHex, txt, i4)
	def(FnToHex, txt, i8)
	def(FnOverlay, txt, txt, txt, i4)
	def(FnOverlay, txt, txt, txt, i4, i4)
	def(FnBitLength, i4, txt)
}
