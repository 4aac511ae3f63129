package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// BindIn binds p as Bind does, looking unqualified names up, and creating
// them, in the schemas of searchPath (nil: public).
func BindIn(cat *catalog.Catalog, searchPath []string, p *Parsed) (ir.Statement, error) {
	return bind(&binder{cat: cat, path: searchPath}, p)
}

// BindStored binds the stored defining statement of a view: each relation it
// names is the one recorded in refs (catalog.Relation.Refs) when the view
// was created. Without refs (views stored before they were recorded) names
// are resolved in public.
func BindStored(cat *catalog.Catalog, refs []catalog.Ref, p *Parsed) (ir.Statement, error) {
	return bind(&binder{cat: cat, pins: pins(refs), funcs: funcState{stored: true}}, p)
}

// BindStoredView binds the stored defining statement of view rel as
// BindStored does, each SQL function it calls being the one recorded in
// rel.Functions.
func BindStoredView(cat *catalog.Catalog, rel *catalog.Relation, p *Parsed) (ir.Statement, error) {
	z, err := storedZone(rel.TimeZone)
	if err != nil {
		return nil, err
	}
	return bind(&binder{cat: cat, pins: pins(rel.Refs), funcs: funcState{stored: true, pins: pins(rel.Functions)},
		zone: z, intervalSpelling: !rel.IntervalSpans}, p)
}

// BindStoredBySpelling is BindStored for a materialized view created before
// interval keys by span (catalog.Relation.IntervalSpans): its GROUP BY,
// DISTINCT, set operations and DISTINCT aggregates keep intervals apart by
// spelling, as its state was built.
func BindStoredBySpelling(cat *catalog.Catalog, refs []catalog.Ref, p *Parsed) (ir.Statement, error) {
	return bind(&binder{cat: cat, pins: pins(refs), intervalSpelling: true}, p)
}

func pins(refs []catalog.Ref) map[int32]uint32 {
	if len(refs) == 0 {
		return nil
	}
	m := make(map[int32]uint32, len(refs))
	for _, r := range refs {
		m[r.Loc] = r.ID
	}
	return m
}

// textOffset returns the byte offset in the statement's own text (Parsed.Text)
// of a node location.
func (b *binder) textOffset(loc int32) int32 {
	return int32(b.base+int(loc)) - int32(b.textStart)
}

// lookup resolves a relation name in FROM, DML or a view's definition: a
// qualified name in its schema, an
// unqualified one in pg_catalog and then the search path (42P01 if there is
// none, also when a qualified name's schema does not exist). Every relation
// found is recorded in b.refs; when binding a stored definition (b.pins) the
// recorded relation is taken instead.
func (b *binder) lookup(rv *pg_query.RangeVar) (*catalog.Relation, error) {
	if err := b.checkCatalogName(rv); err != nil {
		return nil, err
	}
	off := b.textOffset(rv.Location)
	var rel *catalog.Relation
	if id, ok := b.pins[off]; ok {
		if rel = b.cat.ByID(id); rel == nil {
			return nil, b.errAt(rv.Location, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" (id %d) of a stored definition does not exist", rv.Relname, id))
		}
	} else if rv.Schemaname != "" {
		// An unknown schema is an unknown relation here, as in PostgreSQL.
		if rel = b.cat.LookupIn(rv.Schemaname, rv.Relname); rel == nil {
			return nil, b.errAt(rv.Location, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", rv.Schemaname, rv.Relname))
		}
	} else if rel = b.cat.Resolve(b.path, rv.Relname); rel == nil {
		return nil, b.errAt(rv.Location, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", rv.Relname))
	}
	b.refs = append(b.refs, catalog.Ref{Loc: off, ID: rel.ID})
	return rel, nil
}

// checkCatalogName accepts a name qualified with the session's own
// database (db.schema.name) and refuses other databases, as PostgreSQL does.
func (b *binder) checkCatalogName(rv *pg_query.RangeVar) error {
	if rv.Catalogname == "" || rv.Catalogname == b.cat.DatabaseName() {
		return nil
	}
	return b.errAt(rv.Location, sqlerr.New(sqlerr.FeatureNotSupported, "cross-database references are not implemented: \"%s.%s.%s\"", rv.Catalogname, rv.Schemaname, rv.Relname))
}

// creationName resolves the name of a relation to create: a qualified name
// in its schema, an unqualified one in the first schema of the search path
// that exists, as PostgreSQL does.
func (b *binder) creationName(rv *pg_query.RangeVar) (ir.ObjectName, error) {
	if err := b.checkCatalogName(rv); err != nil {
		return ir.ObjectName{}, err
	}
	n := ir.ObjectName{Schema: rv.Schemaname, Name: rv.Relname}
	if n.Schema == "" {
		if n.Schema = b.cat.CreationSchema(b.path); n.Schema == "" {
			return ir.ObjectName{}, b.errAt(rv.Location, sqlerr.New(sqlerr.InvalidSchemaName, "no schema has been selected to create in"))
		}
	} else if b.cat.Schema(n.Schema) == nil {
		return ir.ObjectName{}, b.errAt(rv.Location, sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", n.Schema))
	}
	if n.Schema == catalog.PgCatalog {
		return ir.ObjectName{}, b.errAt(rv.Location, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to create \"%s.%s\"", n.Schema, n.Name).
			WithDetail("System catalog modifications are currently disallowed."))
	}
	return n, nil
}

// refIDs returns the distinct relations of refs, in order.
func refIDs(refs []catalog.Ref) []uint32 {
	var ids []uint32
	for _, r := range refs {
		found := false
		for _, id := range ids {
			found = found || id == r.ID
		}
		if !found {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// maxViewDepth bounds the nesting of views in views, which only a cycle
// (made by CREATE OR REPLACE VIEW) could exceed.
const maxViewDepth = 64

// expandView binds a plain view where it is read: its stored query, bound
// on its own (it sees neither the reading query's CTEs nor its columns),
// with the view's column names, as a subquery in FROM.
func (b *binder) expandView(rel *catalog.Relation, rv *pg_query.RangeVar) (ir.Rel, *scope, error) {
	if b.viewDepth >= maxViewDepth {
		return nil, nil, b.errAt(rv.Location, sqlerr.New(sqlerr.InvalidObjectDefinition, "infinite recursion detected in rules for relation \"%s\"", rel.Name))
	}
	parsed, err := Parse(rel.SQL)
	if err != nil || len(parsed) != 1 || parsed[0].node.GetViewStmt() == nil {
		return nil, nil, b.errAt(rv.Location, sqlerr.New(sqlerr.InternalError, "stored definition of view \"%s\" does not parse: %v", rel.Name, err))
	}
	p := parsed[0]
	sub := &binder{cat: b.cat, pins: pins(rel.Refs), full: p.full, base: p.base, text: p.Text, clauses: p.clauses, viewDepth: b.viewDepth + 1, intervalSpelling: b.intervalSpelling}
	sub.textStart = textStart(p)
	sub.funcs = funcState{stored: true, pins: pins(rel.Functions), stack: b.funcs.stack}
	q, err := sub.bindQuery(p.node.GetViewStmt().Query.GetSelectStmt())
	if err != nil {
		return nil, nil, err
	}
	if b.volatile == nil {
		b.volatile = sub.volatile
	}
	vis := ir.VisibleColumns(q)
	if len(vis) != len(rel.Columns) {
		return nil, nil, b.errAt(rv.Location, sqlerr.New(sqlerr.InternalError, "view \"%s\" has %d columns, its stored query %d", rel.Name, len(rel.Columns), len(vis)))
	}
	cols := append([]ir.Column(nil), q.Columns()...)
	exprs := make([]ir.Expr, len(cols))
	for i, c := range cols {
		exprs[i] = &ir.InputRef{Index: i, T: c.Type, Name: c.Name}
	}
	for k, i := range vis {
		want := rel.Columns[k]
		if cols[i].Type != want.Type {
			// Untyped literals become text, as when the view was created.
			if exprs[i], err = b.coerce(exprs[i], want.Type, rv.Location); err != nil {
				return nil, nil, err
			}
		}
		cols[i].Name, cols[i].Type = want.Name, want.Type
	}
	out := ir.Rel(&ir.Project{Input: q, Exprs: exprs, Cols: cols})
	alias := rel.Name
	var colAliases []*pg_query.Node
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
		colAliases = rv.Alias.Colnames
	}
	sc := derivedScope(out, alias)
	for i := range sc.cols {
		if !sc.cols[i].hidden {
			// A view's columns are checked as the view's, not as what
			// its query reads.
			sc.cols[i].src = columnSrc{rel.ID, sc.cols[i].name}
		}
	}
	if err := applyColumnAliases(sc, colAliases); err != nil {
		return nil, nil, b.errAt(rv.Location, err.(*sqlerr.Error))
	}
	return out, sc, nil
}

// textStart is the byte offset in p.full at which p.Text starts.
func textStart(p *Parsed) int {
	raw := p.full[p.start:p.end]
	return p.start + len(raw) - len(strings.TrimLeft(raw, " \t\r\n\f\v"))
}

// CreateView is CREATE [OR REPLACE] VIEW name [(columns)] AS query.
type CreateView struct {
	Name    ir.ObjectName
	Replace bool
	// Columns are the view's columns: names and types of the query's
	// visible columns.
	Columns []catalog.Column
	// Refs are the relations the query names (see catalog.Relation.Refs).
	Refs []catalog.Ref
	// Functions, CallsFunctions and ReadsThrough are the SQL functions the
	// query calls (see catalog.Relation.Functions).
	Functions                    []catalog.Ref
	CallsFunctions, ReadsThrough []uint32
	// SQL is the statement's text, stored in the catalog.
	SQL string
}

func (*CreateView) Tag() string { return "CREATE VIEW" }

func (b *binder) bindCreateView(s *pg_query.ViewStmt) (ir.Statement, error) {
	if s.View.Relpersistence == "t" {
		return nil, b.errAt(s.View.Location, sqlerr.Unsupported("temporary views"))
	}
	if len(s.Options) > 0 || s.WithCheckOption != pg_query.ViewCheckOption_NO_CHECK_OPTION {
		return nil, b.errAt(s.View.Location, sqlerr.Unsupported("view options and WITH CHECK OPTION"))
	}
	name, err := b.creationName(s.View)
	if err != nil {
		return nil, err
	}
	sel := s.Query.GetSelectStmt()
	if sel == nil {
		return nil, sqlerr.Unsupported("view over %s", typeName(s.Query.Node))
	}
	q, err := b.bindQuery(sel)
	if err != nil {
		return nil, err
	}
	if b.hasParams() {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "views may not be defined using bound parameters")
	}
	vis := ir.VisibleColumns(q)
	if len(s.Aliases) > len(vis) {
		return nil, b.errAt(s.View.Location, sqlerr.New(sqlerr.SyntaxError, "CREATE VIEW specifies more column names than columns"))
	}
	cv := &CreateView{Name: name, Replace: s.Replace, Refs: b.refs, SQL: b.text,
		Functions: b.funcs.refs, CallsFunctions: b.funcs.calls, ReadsThrough: b.funcs.reads}
	seen := map[string]bool{}
	for k, i := range vis {
		c := q.Columns()[i]
		col := catalog.Column{Name: c.Name, Type: c.Type}
		if k < len(s.Aliases) {
			col.Name = s.Aliases[k].GetString_().Sval
		}
		if col.Type.Kind == types.Unknown {
			col.Type = types.TextT
		}
		if seen[col.Name] {
			return nil, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", col.Name)
		}
		seen[col.Name] = true
		cv.Columns = append(cv.Columns, col)
	}
	return cv, nil
}

// CreateSchema is CREATE SCHEMA [IF NOT EXISTS] name.
type CreateSchema struct {
	Name        string
	IfNotExists bool
}

func (*CreateSchema) Tag() string { return "CREATE SCHEMA" }

func (b *binder) bindCreateSchema(s *pg_query.CreateSchemaStmt) (ir.Statement, error) {
	if s.Authrole != nil {
		return nil, sqlerr.Unsupported("CREATE SCHEMA ... AUTHORIZATION")
	}
	if len(s.SchemaElts) > 0 {
		return nil, sqlerr.Unsupported("CREATE SCHEMA with schema elements")
	}
	if strings.HasPrefix(s.Schemaname, "pg_") {
		return nil, sqlerr.New(reservedName, "unacceptable schema name \"%s\"", s.Schemaname).
			WithDetail("The prefix \"pg_\" is reserved for system schemas.")
	}
	return &CreateSchema{Name: s.Schemaname, IfNotExists: s.IfNotExists}, nil
}

// reservedName is SQLSTATE 42939 (reserved_name).
const reservedName = "42939"

// DropSchema is DROP SCHEMA [IF EXISTS] name [, ...] [CASCADE | RESTRICT].
type DropSchema struct {
	Names    []string
	IfExists bool
	Cascade  bool
	// Path is the session's search path, for the names in messages.
	Path []string
}

func (*DropSchema) Tag() string { return "DROP SCHEMA" }

// QuoteIdent returns name as an identifier in SQL text: unchanged if it is
// lower-case letters, digits, _ and $ not starting with a digit or $,
// else in double quotes.
func QuoteIdent(name string) string {
	plain := name != ""
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z' || r == '_':
		case (r >= '0' && r <= '9' || r == '$') && i > 0:
		default:
			plain = false
		}
	}
	if plain {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// ParseSearchPath splits a search_path setting into schema names: comma
// separated identifiers, double-quoted ones kept as written, others folded
// to lower case. "$user" is replaced by user.
func ParseSearchPath(value, user string) []string {
	var out []string
	for i := 0; i < len(value); {
		for i < len(value) && (value[i] == ' ' || value[i] == ',' || value[i] == '\t') {
			i++
		}
		if i >= len(value) {
			break
		}
		var name strings.Builder
		if value[i] == '"' {
			for i++; i < len(value); i++ {
				if value[i] == '"' {
					if i+1 < len(value) && value[i+1] == '"' {
						name.WriteByte('"')
						i++
						continue
					}
					i++
					break
				}
				name.WriteByte(value[i])
			}
		} else {
			j := i
			for j < len(value) && value[j] != ',' {
				j++
			}
			name.WriteString(strings.ToLower(strings.TrimSpace(value[i:j])))
			i = j
		}
		n := name.String()
		if n == "$user" {
			n = user
		}
		out = append(out, n)
	}
	if out == nil {
		out = []string{}
	}
	return out
}
