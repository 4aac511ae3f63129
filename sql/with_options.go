package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/sqlerr"
)

// withOptions reads the option list of a connector's WITH clause, name =
// 'value', ..., starting at toks[i], the token after the opening
// parenthesis. Names may be dotted (fields.id.kind) and are lower-cased;
// string values are unquoted. It returns the options and the index of the
// closing parenthesis. stmt names the statement in errors.
func withOptions(src string, toks []*pg_query.ScanToken, i int, stmt string) (map[string]string, int, error) {
	text := func(t *pg_query.ScanToken) string { return src[t.Start:t.End] }
	opts := map[string]string{}
	for i < len(toks) && toks[i].Token != pg_query.Token_ASCII_41 {
		var key []string
		for i < len(toks) && toks[i].Token != pg_query.Token_ASCII_61 {
			if toks[i].Token != pg_query.Token_ASCII_46 {
				key = append(key, strings.Trim(strings.ToLower(text(toks[i])), `"`))
			}
			i++
		}
		if i+1 >= len(toks) || len(key) == 0 {
			return nil, 0, sqlerr.New(sqlerr.SyntaxError, "malformed WITH option in %s; write name = 'value'", stmt)
		}
		i++ // =
		v := text(toks[i])
		if toks[i].Token == pg_query.Token_SCONST {
			v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
		}
		opts[strings.Join(key, ".")] = v
		i++
		if i < len(toks) && toks[i].Token == pg_query.Token_ASCII_44 {
			i++
		}
	}
	if i >= len(toks) {
		return nil, 0, sqlerr.New(sqlerr.SyntaxError, "unterminated WITH options in %s", stmt)
	}
	return opts, i, nil
}
