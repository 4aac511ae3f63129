package eval

import (
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// regexSplit is regexp_split_to_array(s, pattern [, flags]): s split at
// every match of pattern, as PostgreSQL splits: a zero-length match at the
// start or the end of s, or right after the previous match, does not split
// (so an empty pattern splits s into its characters).
func regexSplit(args []types.T, _ types.T) scalarFn {
	return func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		flags := ""
		if len(a) == 3 {
			flags = a[2].S
		}
		f, err := parseReFlags(flags, ir.FnRegexSplitToArray, false)
		if err != nil {
			return types.Null, err
		}
		re, err := k.regexFor(a[1].S, f)
		if err != nil {
			return types.Null, err
		}
		s := a[0].S
		var out []types.Datum
		from, prevEnd := 0, 0
		for _, m := range re.FindAllStringIndex(s, -1) {
			if m[0] < len(s) && m[1] > prevEnd {
				out = append(out, types.DText(strings.Clone(s[from:m[0]])))
				from = m[1]
			}
			prevEnd = m[1]
		}
		out = append(out, types.DText(strings.Clone(s[from:])))
		return types.DArray(out), nil
	}
}

func init() {
	tt := []types.T{types.TextT, types.TextT}
	reg(ir.FnRegexSplitToArray, tt, regexSplit)
	reg(ir.FnRegexSplitToArray, append(tt, types.TextT), regexSplit)
}

// regexMatches returns the matches of regexp_matches(s, pattern, flags):
// every match with the g flag, else the first.
func regexMatches(k *kctx, s, pat, flags string) ([][]int, *sqlerr.Error) {
	f, err := parseReFlags(flags, "regexp_matches", true)
	if err != nil {
		return nil, err
	}
	re, err := k.regexFor(pat, f)
	if err != nil {
		return nil, err
	}
	n := 1
	if f.global {
		n = -1
	}
	return re.FindAllStringSubmatchIndex(s, n), nil
}

// regexMatchOrdinals is regexp_match_ordinals(s, pattern [, flags]): the
// ordinals 1..n of the n matches of regexp_matches.
func regexMatchOrdinals(args []types.T, _ types.T) scalarFn {
	return func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		flags := ""
		if len(a) == 3 {
			flags = a[2].S
		}
		ms, err := regexMatches(k, a[0].S, a[1].S, flags)
		if err != nil {
			return types.Null, err
		}
		out := make([]types.Datum, len(ms))
		for i := range ms {
			out[i] = types.DInt(int64(i + 1))
		}
		return types.DArray(out), nil
	}
}

// regexMatchNth is regexp_match_nth(s, pattern, flags, k): match k of
// regexp_matches, its capture groups (or the whole match without groups).
func regexMatchNth(args []types.T, _ types.T) scalarFn {
	return func(k *kctx, a []types.Datum) (types.Datum, *sqlerr.Error) {
		ms, err := regexMatches(k, a[0].S, a[1].S, a[2].S)
		if err != nil {
			return types.Null, err
		}
		n := int(a[3].I)
		if n < 1 || n > len(ms) {
			return types.Null, nil
		}
		s, m := a[0].S, ms[n-1]
		if len(m) == 2 {
			return types.DArray([]types.Datum{types.DText(strings.Clone(s[m[0]:m[1]]))}), nil
		}
		out := make([]types.Datum, 0, len(m)/2-1)
		for g := 2; g < len(m); g += 2 {
			if m[g] < 0 {
				out = append(out, types.Null)
				continue
			}
			out = append(out, types.DText(strings.Clone(s[m[g]:m[g+1]])))
		}
		return types.DArray(out), nil
	}
}

func init() {
	tt := []types.T{types.TextT, types.TextT}
	reg(ir.FnRegexMatchOrdinals, tt, regexMatchOrdinals)
	reg(ir.FnRegexMatchOrdinals, append(tt, types.TextT), regexMatchOrdinals)
	reg(ir.FnRegexMatchNth, []types.T{types.TextT, types.TextT, types.TextT, types.Int32T}, regexMatchNth)
}
