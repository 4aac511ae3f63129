package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/sqlerr"
)

// sourceIncludes reads the INCLUDE clauses of a CREATE SOURCE, which stand
// between the column list and toks[with] (RisingWave's syntax):
//
//	INCLUDE key | partition | offset | timestamp | header 'name' [AS column]
//
// Each becomes the option include.<column> = kind (header:<name> for a
// header); the connector gives the column its type. The default column
// name is _kafka_<kind> (_kafka_header_<name>). It returns the index of
// the first INCLUDE, or with if there is none.
func sourceIncludes(src string, toks []*pg_query.ScanToken, with int, opts map[string]string) (int, error) {
	depth, first := 0, with
	for i := 2; i < with; i++ {
		switch toks[i].Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			depth--
		case pg_query.Token_INCLUDE:
			if depth == 0 && first == with {
				first = i
			}
		}
	}
	word := func(i int) string { return strings.ToLower(src[toks[i].Start:toks[i].End]) }
	for i := first; i < with; {
		if toks[i].Token != pg_query.Token_INCLUDE || i+1 >= with {
			return 0, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\": write INCLUDE key | partition | offset | timestamp | header 'name' [AS column]", word(i))
		}
		kind, col := word(i+1), "_kafka_"+word(i+1)
		i += 2
		if kind == "header" {
			if i >= with || toks[i].Token != pg_query.Token_SCONST {
				return 0, sqlerr.New(sqlerr.SyntaxError, "INCLUDE header needs the header's name: INCLUDE header 'name' AS column")
			}
			name := src[toks[i].Start+1 : toks[i].End-1]
			kind, col = "header:"+strings.ReplaceAll(name, "''", "'"), "_kafka_header_"+name
			i++
		}
		if i < with && toks[i].Token == pg_query.Token_AS {
			if i+1 >= with {
				return 0, sqlerr.New(sqlerr.SyntaxError, "INCLUDE ... AS needs a column name")
			}
			col = word(i + 1)
			if t := src[toks[i+1].Start:toks[i+1].End]; strings.HasPrefix(t, `"`) {
				col = strings.ReplaceAll(t[1:len(t)-1], `""`, `"`)
			}
			i += 2
		}
		if _, dup := opts["include."+col]; dup {
			return 0, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", col)
		}
		opts["include."+col] = kind
	}
	return first, nil
}
