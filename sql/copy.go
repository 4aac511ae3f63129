package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// CopyFormat is how COPY's data is written: PostgreSQL's text, csv or
// binary format with their options.
type CopyFormat struct {
	Kind      CopyKind
	Delimiter byte   // text: tab, csv: comma
	Null      string // text: \N, csv: the empty unquoted string
	// Header: csv's first line names the columns (TO writes it, FROM skips
	// it).
	Header        bool
	Quote, Escape byte // csv: both '"' by default
	// ForceQuote quotes every non-NULL value of these output columns (csv
	// TO); ForceNotNull and ForceNull are the input columns whose unquoted
	// null string is a value, and whose quoted one is NULL (csv FROM).
	ForceQuote, ForceNotNull, ForceNull []bool
}

// CopyKind is COPY's format.
type CopyKind uint8

const (
	CopyText CopyKind = iota
	CopyCSV
	CopyBinary
)

// CopyFrom is COPY table [(columns)] FROM STDIN: Insert's Source reads
// Input, whose columns are the listed ones (or every visible one), of the
// table's column types.
type CopyFrom struct {
	Insert *ir.Insert
	Input  *ir.CopyInput
	Format CopyFormat
}

// CopyTo is COPY table [(columns)] | (query) TO STDOUT: Query's visible
// columns are written.
type CopyTo struct {
	Query  ir.Rel
	Format CopyFormat
}

func (*CopyFrom) Tag() string { return "COPY" }
func (*CopyTo) Tag() string   { return "COPY" }

// bindCopy binds COPY ... FROM STDIN and COPY ... TO STDOUT.
func (b *binder) bindCopy(s *pg_query.CopyStmt) (ir.Statement, error) {
	if s.Filename != "" || s.IsProgram {
		what := "a file"
		if s.IsProgram {
			what = "a program"
		}
		return nil, sqlerr.Unsupported("COPY to or from %s on the server (use STDIN or STDOUT, as psql's \\copy does)", what)
	}
	if s.WhereClause != nil {
		return nil, sqlerr.Unsupported("COPY FROM ... WHERE")
	}
	if s.IsFrom {
		return b.bindCopyFrom(s)
	}
	var q ir.Rel
	if s.Query != nil {
		sel := s.Query.GetSelectStmt()
		if sel == nil {
			return nil, sqlerr.Unsupported("COPY (%s) TO", typeName(s.Query.Node))
		}
		var err error
		if q, err = b.bindQuery(sel); err != nil {
			return nil, err
		}
	} else {
		rel, err := b.lookup(s.Relation)
		if err != nil {
			return nil, err
		}
		if rel.Kind != catalog.Table && rel.Kind != catalog.MaterializedView && rel.Kind != catalog.SystemTable {
			return nil, b.errAt(s.Relation.Location, sqlerr.New(sqlerr.WrongObjectType, "cannot copy from %s \"%s\"", rel.Kind, rel.Name).
				WithHint("Try the COPY (SELECT ...) TO variant."))
		}
		cols, err := b.copyColumns(rel, s.Attlist)
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			b.noteColumn(rel.ID, rel.Columns[c].Name, catalog.PrivSelect)
		}
		q = b.copyProjection(rel, cols)
	}
	f, err := b.copyFormat(s.Options, len(ir.VisibleColumns(q)), q, false)
	if err != nil {
		return nil, err
	}
	return &CopyTo{Query: q, Format: f}, nil
}

// bindCopyFrom binds COPY table [(columns)] FROM STDIN as an INSERT of the
// copied rows.
func (b *binder) bindCopyFrom(s *pg_query.CopyStmt) (ir.Statement, error) {
	table, err := b.lookup(s.Relation)
	if err != nil {
		return nil, err
	}
	if table.Kind != catalog.Table {
		return nil, b.errAt(s.Relation.Location, sqlerr.New(sqlerr.WrongObjectType, "cannot copy to %s \"%s\"", table.Kind, table.Name))
	}
	cols, err := b.copyColumns(table, s.Attlist)
	if err != nil {
		return nil, err
	}
	in := &ir.CopyInput{}
	for _, c := range cols {
		in.Cols = append(in.Cols, ir.Column{Name: table.Columns[c].Name, Type: table.Columns[c].Type})
	}
	b.copyInput = in
	defer func() { b.copyInput = nil }()
	var targets []*pg_query.Node
	for _, a := range s.Attlist {
		targets = append(targets, pg_query.MakeResTargetNodeWithName(a.GetString_().Sval, s.Relation.Location))
	}
	st, err := b.bindInsert(&pg_query.InsertStmt{Relation: s.Relation, Cols: targets, SelectStmt: &pg_query.Node{
		Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{}}}})
	if err != nil {
		return nil, err
	}
	f, err := b.copyFormat(s.Options, len(cols), in, true)
	if err != nil {
		return nil, err
	}
	return &CopyFrom{Insert: st.(*ir.Insert), Input: in, Format: f}, nil
}

// copyColumns returns the indexes of the listed columns of rel, or of every
// visible one.
func (b *binder) copyColumns(rel *catalog.Relation, list []*pg_query.Node) ([]int, error) {
	if len(list) == 0 {
		return rel.VisibleColumns(), nil
	}
	var out []int
	for _, n := range list {
		name := n.GetString_().Sval
		idx := rel.ColumnIndex(name)
		if idx < 0 || rel.Columns[idx].Hidden {
			return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, rel.Name)
		}
		for _, o := range out {
			if o == idx {
				return nil, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", name)
			}
		}
		out = append(out, idx)
	}
	return out, nil
}

// copyProjection reads columns cols of rel.
func (b *binder) copyProjection(rel *catalog.Relation, cols []int) ir.Rel {
	p := &ir.Project{Input: &ir.Scan{Relation: rel}}
	for _, c := range cols {
		col := rel.Columns[c]
		p.Exprs = append(p.Exprs, &ir.InputRef{Index: c, T: col.Type, Name: col.Name})
		p.Cols = append(p.Cols, ir.Column{Name: col.Name, Type: col.Type})
	}
	return p
}

// copyFormat reads COPY's options for n columns of rel (whose visible
// columns they name); from says the data comes in.
func (b *binder) copyFormat(opts []*pg_query.Node, n int, rel ir.Rel, from bool) (CopyFormat, error) {
	f := CopyFormat{Delimiter: '\t', Null: `\N`, Quote: '"', Escape: '"'}
	seen := map[string]bool{}
	var delim, null, quote, escape *string
	var forceQuote, forceNotNull, forceNull *pg_query.DefElem
	for _, o := range opts {
		d := o.GetDefElem()
		if seen[d.Defname] {
			return f, b.errAt(d.Location, sqlerr.New(sqlerr.SyntaxError, "conflicting or redundant options"))
		}
		seen[d.Defname] = true
		val := defElemString(d)
		switch d.Defname {
		case "format":
			switch strings.ToLower(val) {
			case "text":
			case "csv":
				f.Kind = CopyCSV
			case "binary":
				f.Kind = CopyBinary
			default:
				return f, b.errAt(d.Location, sqlerr.New(sqlerr.InvalidParameterValue, "COPY format \"%s\" not recognized", val))
			}
		case "delimiter":
			delim = &val
		case "null":
			null = &val
		case "header":
			if strings.EqualFold(val, "match") {
				return f, sqlerr.Unsupported("COPY HEADER MATCH")
			}
			if d.Arg != nil {
				v, err := types.ParseText(types.BoolT, val)
				if err != nil {
					return f, b.errAt(d.Location, sqlerr.New(sqlerr.InvalidParameterValue, "header requires a Boolean value or \"match\""))
				}
				f.Header = v.Bool()
			} else {
				f.Header = true
			}
		case "quote":
			quote = &val
		case "escape":
			escape = &val
		case "force_quote":
			forceQuote = d
		case "force_not_null":
			forceNotNull = d
		case "force_null":
			forceNull = d
		case "freeze", "encoding":
			// Nothing to freeze; the data is UTF8, as every session's is.
			if d.Defname == "encoding" && !strings.EqualFold(strings.ReplaceAll(val, "-", ""), "utf8") {
				return f, sqlerr.Unsupported("COPY ENCODING %s (the only encoding is UTF8)", val)
			}
		default:
			return f, b.errAt(d.Location, sqlerr.New(sqlerr.SyntaxError, "option \"%s\" not recognized", d.Defname))
		}
	}
	if f.Kind == CopyCSV {
		f.Delimiter, f.Null = ',', ""
	}
	if f.Kind == CopyBinary && (delim != nil || null != nil || f.Header || quote != nil) {
		return f, sqlerr.New(sqlerr.SyntaxError, "cannot specify DELIMITER, NULL, HEADER or QUOTE in BINARY mode")
	}
	if f.Kind != CopyCSV && (quote != nil || escape != nil || forceQuote != nil || forceNotNull != nil || forceNull != nil) {
		return f, sqlerr.Unsupported("COPY QUOTE, ESCAPE and FORCE_* outside CSV mode")
	}
	var err error
	if delim != nil {
		if f.Delimiter, err = copyChar("COPY delimiter", *delim); err != nil {
			return f, err
		}
	}
	if null != nil {
		f.Null = *null
	}
	if quote != nil {
		if f.Quote, err = copyChar("COPY quote", *quote); err != nil {
			return f, err
		}
		f.Escape = f.Quote
	}
	if escape != nil {
		if f.Escape, err = copyChar("COPY escape", *escape); err != nil {
			return f, err
		}
	}
	if f.Kind == CopyCSV && f.Delimiter == f.Quote {
		return f, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter and quote must be different")
	}
	if f.ForceQuote, err = b.copyColumnFlags(forceQuote, rel, n, !from, "FORCE_QUOTE", "COPY TO"); err != nil {
		return f, err
	}
	if f.ForceNotNull, err = b.copyColumnFlags(forceNotNull, rel, n, from, "FORCE_NOT_NULL", "COPY FROM"); err != nil {
		return f, err
	}
	if f.ForceNull, err = b.copyColumnFlags(forceNull, rel, n, from, "FORCE_NULL", "COPY FROM"); err != nil {
		return f, err
	}
	return f, nil
}

// copyColumnFlags reads a FORCE_* option: * or a list of the copied
// columns (of rel's visible columns, n of them). allowed says whether the
// copy's direction takes it.
func (b *binder) copyColumnFlags(d *pg_query.DefElem, rel ir.Rel, n int, allowed bool, name, only string) ([]bool, error) {
	if d == nil {
		return nil, nil
	}
	if !allowed {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY %s only available using %s", name, only)
	}
	flags := make([]bool, n)
	if _, star := d.Arg.GetNode().(*pg_query.Node_AStar); star {
		for i := range flags {
			flags[i] = true
		}
		return flags, nil
	}
	cols, vis := rel.Columns(), ir.VisibleColumns(rel)
	for _, item := range d.Arg.GetList().GetItems() {
		col := item.GetString_().Sval
		found := false
		for k, c := range vis {
			if cols[c].Name == col {
				flags[k], found = true, true
			}
		}
		if !found {
			return nil, sqlerr.New(sqlerr.InvalidColumnReference, "%s column \"%s\" not referenced by COPY", name, col)
		}
	}
	return flags, nil
}

// defElemString is the value of an option: a string, a number or a word as
// written; "" when it has none.
func defElemString(d *pg_query.DefElem) string {
	switch a := d.Arg.GetNode().(type) {
	case *pg_query.Node_String_:
		return a.String_.Sval
	case *pg_query.Node_Integer:
		return itoa(int64(a.Integer.Ival))
	case *pg_query.Node_Boolean:
		if a.Boolean.Boolval {
			return "true"
		}
		return "false"
	}
	return ""
}

// copyChar is a one-byte COPY option.
func copyChar(what, s string) (byte, error) {
	if len(s) != 1 {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "%s must be a single one-byte character", what)
	}
	if s == "\r" || s == "\n" {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "%s cannot be newline or carriage return", what)
	}
	return s[0], nil
}
