package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
)

// Explain formats.
const (
	ExplainText = "text"
	ExplainJSON = "json"
)

// ExplainView is EXPLAIN [ANALYZE] MATERIALIZED VIEW name, or with options
// in parentheses: the running dataflow of a view or sink, with its live
// counters when Analyze is set.
type ExplainView struct {
	Name    ir.ObjectName
	Analyze bool
	Format  string
	// Path is the session's search path.
	Path []string
}

func (*ExplainView) Tag() string { return "EXPLAIN" }

// VerifyView is VERIFY MATERIALIZED VIEW name: recompute the view's query
// in batch over the committed snapshot its rows are read from, and report
// the rows that differ.
type VerifyView struct {
	Name ir.ObjectName
	Path []string
}

func (*VerifyView) Tag() string { return "VERIFY" }

// bindExplain binds EXPLAIN [ANALYZE] [(options)] statement.
func (b *binder) bindExplain(s *pg_query.ExplainStmt) (ir.Statement, error) {
	ex := &ir.Explain{Format: ExplainText}
	for _, o := range s.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		arg := ""
		if d.Arg != nil {
			switch {
			case d.Arg.GetString_() != nil:
				arg = strings.ToLower(d.Arg.GetString_().Sval)
			case d.Arg.GetBoolean() != nil:
				arg = "false"
				if d.Arg.GetBoolean().Boolval {
					arg = "true"
				}
			case d.Arg.GetInteger() != nil:
				arg = "true"
				if d.Arg.GetInteger().Ival == 0 {
					arg = "false"
				}
			}
		}
		switch strings.ToLower(d.Defname) {
		case "analyze":
			on, ok := explainBool(arg)
			if !ok {
				return nil, b.errAt(d.Location, sqlerr.New(sqlerr.SyntaxError, "EXPLAIN option ANALYZE requires a Boolean value"))
			}
			ex.Analyze = on
		case "format":
			if arg != ExplainText && arg != ExplainJSON {
				return nil, b.errAt(d.Location, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized value for EXPLAIN option \"format\": \"%s\"", arg))
			}
			ex.Format = arg
		default:
			return nil, b.errAt(d.Location, sqlerr.Unsupported("EXPLAIN option %s", strings.ToUpper(d.Defname)))
		}
	}
	inner, err := b.bindStatement(s.Query)
	if err != nil {
		return nil, err
	}
	ex.Stmt = inner
	switch inner.(type) {
	case *ir.Select:
		return ex, nil
	case *ir.CreateMaterializedView, *ir.Insert, *ir.Update, *ir.Delete:
		if ex.Analyze {
			return nil, sqlerr.Unsupported("EXPLAIN ANALYZE %s (EXPLAIN ANALYZE MATERIALIZED VIEW name shows a running view)", inner.Tag())
		}
		return ex, nil
	}
	return nil, sqlerr.Unsupported("EXPLAIN %s", inner.Tag())
}

// explainBool reads an EXPLAIN option's Boolean value; no value is true.
func explainBool(arg string) (on, ok bool) {
	switch arg {
	case "", "true", "on", "1", "yes":
		return true, true
	case "false", "off", "0", "no":
		return false, true
	}
	return false, false
}

// parseExplainView recognises EXPLAIN [ANALYZE] MATERIALIZED VIEW name and
// EXPLAIN (option [value], ...) MATERIALIZED VIEW name from the statement's
// lower-cased tokens (words[0] is "explain"), or returns nil.
func parseExplainView(words []string) ir.Statement {
	ex := &ExplainView{Format: ExplainText}
	rest := words[1:]
	switch {
	case len(rest) > 0 && rest[0] == "analyze":
		ex.Analyze = true
		rest = rest[1:]
	case len(rest) > 0 && rest[0] == "(":
		end := -1
		for i, w := range rest {
			if w == ")" {
				end = i
				break
			}
		}
		if end < 0 {
			return nil
		}
		for _, opt := range splitWords(rest[1:end], ",") {
			if len(opt) == 0 || len(opt) > 2 {
				return nil
			}
			arg := ""
			if len(opt) == 2 {
				arg = strings.Trim(opt[1], "'")
			}
			switch opt[0] {
			case "analyze":
				on, ok := explainBool(arg)
				if !ok {
					return nil
				}
				ex.Analyze = on
			case "format":
				if arg != ExplainText && arg != ExplainJSON {
					return nil
				}
				ex.Format = arg
			default:
				return nil
			}
		}
		rest = rest[end+1:]
	}
	if len(rest) < 3 || rest[0] != "materialized" || rest[1] != "view" {
		return nil
	}
	name, tail := customName(rest[2:])
	if len(tail) != 0 {
		return nil
	}
	ex.Name = name
	return ex
}

// parseVerifyView recognises VERIFY MATERIALIZED VIEW name, or returns nil.
func parseVerifyView(words []string) ir.Statement {
	if len(words) < 4 || words[1] != "materialized" || words[2] != "view" {
		return nil
	}
	name, tail := customName(words[3:])
	if len(tail) != 0 {
		return nil
	}
	return &VerifyView{Name: name}
}

// splitWords splits words at each sep.
func splitWords(words []string, sep string) [][]string {
	out := [][]string{nil}
	for _, w := range words {
		if w == sep {
			out = append(out, nil)
			continue
		}
		out[len(out)-1] = append(out[len(out)-1], w)
	}
	return out
}
