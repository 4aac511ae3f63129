package eval

import (
	"strings"

	"github.com/streamsql/streamsql/sql"
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
		f, err := parseReFlags(flags, sql.FnRegexSplitToArray, false)
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
	reg(sql.FnRegexSplitToArray, tt, regexSplit)
	reg(sql.FnRegexSplitToArray, append(tt, types.TextT), regexSplit)
}
