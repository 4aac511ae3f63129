package ir

import (
	"github.com/streamsql/streamsql/types"
)

// Set-returning functions that are unnest over an array function: each
// call binds as unnest(array call), in FROM and in the select list
// (sql/bind_unnest.go), and takes the function's name as its column name.
//
//	regexp_split_to_table(s, pattern [, flags]) = unnest(regexp_split_to_array(...))
//
// regexp_matches(s, pattern [, flags]) returns one text[] per match (all of
// them with the g flag, else the first): it is unnest over the ordinals of
// the matches, regexp_match_ordinals(...), each ordinal k then mapped to
// regexp_match_nth(s, pattern, flags, k), as arrays of arrays do not exist.
var ArraySRFs = map[string]string{
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

func init() {
	txt := types.TextT
	def(FnRegexSplitToArray, types.ArrayOf(txt), txt, txt)
	def(FnRegexSplitToArray, types.ArrayOf(txt), txt, txt, txt)
	def(FnRegexMatchOrdinals, types.ArrayOf(types.Int32T), txt, txt)
	def(FnRegexMatchOrdinals, types.ArrayOf(types.Int32T), txt, txt, txt)
	def(FnRegexMatchNth, types.ArrayOf(txt), txt, txt, txt, types.Int32T)
}

// FnSetseed is setseed(x), which seeds the session's random().
const FnSetseed = "setseed"

func init() {
	def(FnSetseed, types.TextT, types.Float64T)
}
