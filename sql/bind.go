package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// Bind resolves one parsed statement against the catalog. The catalog is
// only read; the statement may name relations that a later statement of the
// same query string creates only if it is bound after that one runs, so the
// engine binds each statement just before executing it.
func Bind(cat *catalog.Catalog, p *Parsed) (ir.Statement, error) {
	return bind(&binder{cat: cat}, p)
}

// bind binds p with b, which holds the catalog and how names are resolved.
func bind(b *binder, p *Parsed) (ir.Statement, error) {
	b.full, b.base, b.text, b.clauses, b.textStart = p.full, p.base, p.Text, p.clauses, textStart(p)
	b.session = p.session
	for _, c := range p.clauses {
		c.used = false // a prepared statement is bound again for every execution
	}
	var st ir.Statement
	var err error
	switch cs := p.custom.(type) {
	case nil:
		st, err = b.bindStatement(p.node)
	case *createSourceSyntax:
		b.base = p.start
		st, err = b.bindCreateSource(cs)
	case *createCDCTableSyntax:
		b.base = p.start
		st, err = b.bindCreateCDCTable(cs)
	case *createConnectorTableSyntax:
		b.base = p.start
		st, err = b.bindCreateConnectorTable(cs)
	case *DropSource:
		d := *cs
		d.Path = b.path
		st = &d
	case *createSinkSyntax:
		b.base = p.start
		st, err = b.bindCreateSink(cs)
	case *DropSink:
		d := *cs
		d.Path = b.path
		st = &d
	case *subscribeSyntax:
		b.base = p.start
		st, err = b.bindSubscribe(cs)
	case *fetchSyntax:
		st = bindFetchWith(cs)
	case *declareSubscriptionSyntax:
		st, err = b.bindDeclareSubscription(cs)
	case *DropSubscription:
		d := *cs
		d.Path = b.path
		st = &d
	case *AlterViewPause:
		a := *cs
		a.Path = b.path
		st = &a
	case *ExplainView:
		a := *cs
		a.Path = b.path
		st = &a
	case *VerifyView:
		a := *cs
		a.Path = b.path
		st = &a
	case *AlterViewParallelism:
		a := *cs
		a.Path = b.path
		st = &a
	case *renameSource:
		st, err = b.bindRenameSource(cs)
	case *alterViewQuerySyntax:
		st, err = b.bindAlterViewQuery(cs, p)
	default:
		st = p.custom
	}
	if err == nil {
		err = b.checkClausesUsed()
	}
	if err != nil {
		return nil, err
	}
	b.stampZone(st)
	return st, nil
}

// binder holds the state of binding one statement.
type binder struct {
	cat *catalog.Catalog
	// session is what the session functions read and change (nil: none).
	session Session
	// path is the search path unqualified names are resolved in (nil:
	// public); pins, when binding a stored definition, the relation each
	// name at a byte offset of text resolved to when it was created.
	path []string
	pins map[int32]uint32
	// refs records the relations the statement names (see lookup);
	// columns the columns it reads and writes (see noteColumn).
	refs    []catalog.Ref
	columns []ColumnUse
	// viewDepth is the nesting of plain views being expanded.
	viewDepth int
	// copyInput is the source of the INSERT a COPY FROM binds to.
	copyInput *ir.CopyInput
	// intervalSpelling keys intervals by spelling (BindStoredBySpelling).
	intervalSpelling bool
	full             string
	base             int
	text             string
	// textStart is the byte offset of text in full.
	textStart int
	// litLoc is the location of each string literal, where errors parsing
	// it as some type are reported (as PostgreSQL does).
	litLoc map[*ir.Const]int32
	// defaulted maps the text constants defaultType made of untyped
	// literals to those literals: a set operation gives them the other
	// side's type instead, as PostgreSQL does (SELECT 1 UNION SELECT '2').
	defaulted map[*ir.Const]*ir.Const
	// params are the statement's query parameters; nil when it has none
	// (the simple query protocol), where $n is an error.
	params *paramState
	// clauses are the streaming dialect's clauses of the statement.
	clauses []*dialectClause
	// volatile is the first call of a volatile function (random()), which a
	// materialized view refuses; nil if none.
	volatile *volatileUse
	// zone is the session's TimeZone (nil: UTC), bound into the
	// expressions that depend on it (see bind_timezone.go).
	zone *types.Zone
	// funcs is the state of SQL function calls (bind_function.go).
	funcs funcState
	queryState
}

type volatileUse struct {
	fn  string
	loc int32
}

// errAt positions e at a node location (a byte offset relative to base).
func (b *binder) errAt(loc int32, e *sqlerr.Error) *sqlerr.Error {
	if loc < 0 {
		return e
	}
	return e.At(charPosition(b.full, b.base+int(loc)))
}

func (b *binder) bindStatement(n *pg_query.Node) (ir.Statement, error) {
	switch s := n.Node.(type) {
	case *pg_query.Node_SelectStmt:
		if st, ok, err := b.bindSavepointCall(s.SelectStmt); ok || err != nil {
			return st, err
		}
		rel, err := b.bindQuery(s.SelectStmt)
		if err != nil {
			return nil, err
		}
		return &ir.Select{Query: rel}, nil
	case *pg_query.Node_CreateStmt:
		return b.bindCreateTable(s.CreateStmt)
	case *pg_query.Node_CreateTableAsStmt:
		return b.bindCreateTableAs(s.CreateTableAsStmt)
	case *pg_query.Node_DropStmt:
		return b.bindDrop(s.DropStmt)
	case *pg_query.Node_IndexStmt:
		return b.bindCreateIndex(s.IndexStmt)
	case *pg_query.Node_InsertStmt:
		return b.bindInsert(s.InsertStmt)
	case *pg_query.Node_UpdateStmt:
		return b.bindUpdate(s.UpdateStmt)
	case *pg_query.Node_DeleteStmt:
		return b.bindDelete(s.DeleteStmt)
	case *pg_query.Node_ExplainStmt:
		return b.bindExplain(s.ExplainStmt)
	case *pg_query.Node_VariableSetStmt:
		return b.bindSet(s.VariableSetStmt)
	case *pg_query.Node_VariableShowStmt:
		name := strings.ToLower(s.VariableShowStmt.Name)
		switch name {
		case "tables":
			return &ir.ShowRelations{Kind: catalog.Table}, nil
		case "sources":
			return &ir.ShowRelations{Kind: catalog.Source}, nil
		case "views":
			return &ir.ShowRelations{Kind: catalog.View}, nil
		case "sinks":
			return &ir.ShowRelations{Kind: catalog.Sink}, nil
		}
		return &ir.ShowVar{Name: name}, nil
	case *pg_query.Node_TransactionStmt:
		return b.bindTransaction(s.TransactionStmt)
	case *pg_query.Node_PrepareStmt:
		return b.bindPrepare(s.PrepareStmt)
	case *pg_query.Node_ExecuteStmt:
		return b.bindExecute(s.ExecuteStmt)
	case *pg_query.Node_DeallocateStmt:
		return &Deallocate{Name: s.DeallocateStmt.Name, All: s.DeallocateStmt.Isall}, nil
	case *pg_query.Node_DiscardStmt:
		return bindDiscard(s.DiscardStmt)
	case *pg_query.Node_ViewStmt:
		return b.bindCreateView(s.ViewStmt)
	case *pg_query.Node_CopyStmt:
		return b.bindCopy(s.CopyStmt)
	case *pg_query.Node_CreateSchemaStmt:
		return b.bindCreateSchema(s.CreateSchemaStmt)
	case *pg_query.Node_CreateFunctionStmt:
		return b.bindCreateFunction(s.CreateFunctionStmt)
	case *pg_query.Node_CheckPointStmt:
		return &Checkpoint{}, nil
	case *pg_query.Node_DeclareCursorStmt:
		return b.bindDeclareCursor(s.DeclareCursorStmt)
	case *pg_query.Node_FetchStmt:
		return bindFetch(s.FetchStmt), nil
	case *pg_query.Node_DropSubscriptionStmt:
		d := s.DropSubscriptionStmt
		return &DropSubscription{Name: ir.ObjectName{Name: d.Subname}, IfExists: d.MissingOk, Path: b.path}, nil
	case *pg_query.Node_ClosePortalStmt:
		return &CloseCursor{Name: s.ClosePortalStmt.Portalname}, nil
	case *pg_query.Node_CreatedbStmt:
		return b.bindCreateDatabase(s.CreatedbStmt)
	case *pg_query.Node_DropdbStmt:
		return b.bindDropDatabase(s.DropdbStmt)
	case *pg_query.Node_LockStmt:
		return b.bindLock(s.LockStmt)
	case *pg_query.Node_AlterTableStmt:
		return b.bindAlterTable(s.AlterTableStmt)
	case *pg_query.Node_RenameStmt:
		return b.bindRename(s.RenameStmt)
	case *pg_query.Node_TruncateStmt:
		return b.bindTruncate(s.TruncateStmt)
	case *pg_query.Node_VacuumStmt:
		return b.bindVacuum(s.VacuumStmt)
	case *pg_query.Node_CommentStmt:
		return b.bindComment(s.CommentStmt)
	}
	if st, ok, err := b.bindRoleStatement(n); ok {
		return st, err
	}
	return nil, sqlerr.Unsupported("statement %s", statementName(n))
}

// statementName renders a pg_query statement node type as SQL words, e.g.
// "ALTER TABLE" for AlterTableStmt.
func statementName(n *pg_query.Node) string {
	name := strings.TrimPrefix(strings.TrimPrefix(typeName(n.Node), "*pg_query.Node_"), "")
	name = strings.TrimSuffix(name, "Stmt")
	var words []string
	start := 0
	for i := 1; i <= len(name); i++ {
		if i == len(name) || (name[i] >= 'A' && name[i] <= 'Z') {
			words = append(words, strings.ToUpper(name[start:i]))
			start = i
		}
	}
	return strings.Join(words, " ")
}

func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return strings.TrimPrefix(strings.Replace(strings.TrimPrefix(sprintType(v), "*"), "pg_query.Node_", "", 1), "")
}

func (b *binder) bindCreateTable(s *pg_query.CreateStmt) (ir.Statement, error) {
	qname, err := b.creationName(s.Relation)
	if err != nil {
		return nil, err
	}
	name := qname.Name
	if s.Relation.Relpersistence == "t" {
		return nil, b.errAt(s.Relation.Location, sqlerr.Unsupported("temporary tables"))
	}
	if len(s.InhRelations) > 0 || s.Partspec != nil || s.OfTypename != nil {
		return nil, b.errAt(s.Relation.Location, sqlerr.Unsupported("table inheritance and partitioning"))
	}
	ct := &ir.CreateTable{Schema: qname.Schema, Name: name, IfNotExists: s.IfNotExists}
	if ct.RetainHistory, err = b.retainHistoryOf(s.Options); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var pkNames []string
	var pkLoc int32
	var checks, uniques []rawCheck
	addConstraint := func(c *pg_query.Constraint, col string) error {
		switch c.Contype {
		case pg_query.ConstrType_CONSTR_PRIMARY:
			if len(pkNames) > 0 {
				return b.errAt(c.Location, sqlerr.New(sqlerr.InvalidTableDefinition, "multiple primary keys for table \"%s\" are not allowed", name))
			}
			pkLoc = c.Location
			if col != "" {
				pkNames = []string{col}
				return nil
			}
			for _, k := range c.Keys {
				pkNames = append(pkNames, k.GetString_().Sval)
			}
			return nil
		case pg_query.ConstrType_CONSTR_NOTNULL, pg_query.ConstrType_CONSTR_NULL:
			return nil
		case pg_query.ConstrType_CONSTR_DEFAULT:
			return nil // set by the column (setDefault)
		case pg_query.ConstrType_CONSTR_UNIQUE:
			uniques = append(uniques, rawCheck{c: c, col: col})
			return nil
		case pg_query.ConstrType_CONSTR_CHECK:
			checks = append(checks, rawCheck{c: c, col: col})
			return nil
		case pg_query.ConstrType_CONSTR_IDENTITY:
			return nil // set by the column (setIdentity)
		case pg_query.ConstrType_CONSTR_FOREIGN:
			return b.errAt(c.Location, sqlerr.Unsupported("foreign keys"))
		}
		return b.errAt(c.Location, sqlerr.Unsupported("constraint %s", strings.TrimPrefix(c.Contype.String(), "CONSTR_")))
	}
	for _, elt := range s.TableElts {
		switch e := elt.Node.(type) {
		case *pg_query.Node_ColumnDef:
			cd := e.ColumnDef
			if seen[cd.Colname] {
				return nil, b.errAt(cd.Location, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", cd.Colname))
			}
			seen[cd.Colname] = true
			if cd.Colname == catalog.RowIDColumn {
				return nil, b.errAt(cd.Location, sqlerr.New(sqlerr.DuplicateColumn, "column name \"%s\" is reserved for the hidden row id", cd.Colname))
			}
			t, serial, err := b.columnType(cd.TypeName)
			if err != nil {
				return nil, err
			}
			col := catalog.Column{Name: cd.Colname, Type: t, NotNull: cd.IsNotNull || serial, Serial: serial}
			if cd.RawDefault != nil {
				if err := b.setDefault(&col, name, cd.RawDefault, cd.Location); err != nil {
					return nil, err
				}
			}
			for _, cn := range cd.Constraints {
				c := cn.GetConstraint()
				if c.Contype == pg_query.ConstrType_CONSTR_NOTNULL {
					col.NotNull = true
				}
				if c.Contype == pg_query.ConstrType_CONSTR_DEFAULT {
					if err := b.setDefault(&col, name, c.RawExpr, c.Location); err != nil {
						return nil, err
					}
				}
				if c.Contype == pg_query.ConstrType_CONSTR_IDENTITY {
					if err := b.setIdentity(&col, name, c); err != nil {
						return nil, err
					}
				}
				if err := addConstraint(c, cd.Colname); err != nil {
					return nil, err
				}
			}
			ct.Columns = append(ct.Columns, col)
		case *pg_query.Node_Constraint:
			if err := addConstraint(e.Constraint, ""); err != nil {
				return nil, err
			}
		default:
			return nil, sqlerr.Unsupported("table element %s", typeName(elt.Node))
		}
	}
	for _, c := range s.Constraints {
		if err := addConstraint(c.GetConstraint(), ""); err != nil {
			return nil, err
		}
	}
	if len(ct.Columns) == 0 {
		return nil, b.errAt(s.Relation.Location, sqlerr.Unsupported("tables without columns"))
	}
	for _, k := range pkNames {
		idx := -1
		for i, c := range ct.Columns {
			if c.Name == k {
				idx = i
			}
		}
		if idx < 0 {
			return nil, b.errAt(pkLoc, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" named in key does not exist", k))
		}
		ct.Columns[idx].NotNull = true
		ct.PrimaryKey = append(ct.PrimaryKey, idx)
	}
	var err2 error
	if ct.Checks, err2 = b.bindChecks(name, ct.Columns, checks); err2 != nil {
		return nil, err2
	}
	if ct.Unique, err2 = b.bindUniques(ct.Columns, uniques); err2 != nil {
		return nil, err2
	}
	if err := b.bindTableClauses(ct); err != nil {
		return nil, err
	}
	return ct, nil
}

func (b *binder) bindCreateTableAs(s *pg_query.CreateTableAsStmt) (ir.Statement, error) {
	if s.Objtype != pg_query.ObjectType_OBJECT_MATVIEW {
		return nil, sqlerr.Unsupported("CREATE TABLE AS (create a table, then INSERT ... SELECT)")
	}
	name, err := b.creationName(s.Into.Rel)
	if err != nil {
		return nil, err
	}
	// WITH NO DATA (which pg_dump writes) is accepted: a materialized view
	// is always maintained, so it is populated anyway (docs/decisions.md).
	sel := s.Query.GetSelectStmt()
	if sel == nil {
		return nil, sqlerr.Unsupported("materialized view over %s", typeName(s.Query.Node))
	}
	rel, err := b.bindQuery(sel)
	if err != nil {
		return nil, err
	}
	if b.hasParams() {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "materialized views may not be defined using bound parameters")
	}
	if v := b.volatile; v != nil {
		// A view keeps its rows up to date by recomputing changed ones; a
		// value that differs at each computation could not be retracted.
		return nil, b.errAt(v.loc, sqlerr.Unsupported("%s() in a materialized view (its value differs at each call)", v.fn))
	}
	if len(s.Into.ColNames) > 0 {
		vis := ir.VisibleColumns(rel)
		if len(s.Into.ColNames) > len(vis) {
			return nil, b.errAt(s.Into.Rel.Location, sqlerr.New(sqlerr.SyntaxError, "too many column names were specified"))
		}
		cols := append([]ir.Column(nil), rel.Columns()...)
		for i, cn := range s.Into.ColNames {
			cols[vis[i]].Name = cn.GetString_().Sval
		}
		rel = renameColumns(rel, cols)
	}
	if err := checkDuplicateNames(rel); err != nil {
		return nil, err
	}
	eowc := b.takeClause(clauseEmitOnWindowClose) != nil
	retain, err := b.retainHistoryOf(s.Into.Options)
	if err != nil {
		return nil, err
	}
	return &ir.CreateMaterializedView{Schema: name.Schema, Name: name.Name, IfNotExists: s.IfNotExists, Query: rel, SQL: b.text,
		EmitOnWindowClose: eowc, Refs: b.refs, Functions: b.funcs.refs, CallsFunctions: b.funcs.calls, ReadsThrough: b.funcs.reads,
		RetainHistory: retain}, nil
}

// renameColumns returns rel with its output columns renamed.
func renameColumns(rel ir.Rel, cols []ir.Column) ir.Rel {
	exprs := make([]ir.Expr, len(cols))
	for i, c := range rel.Columns() {
		exprs[i] = &ir.InputRef{Index: i, T: c.Type, Name: c.Name}
	}
	return &ir.Project{Input: rel, Exprs: exprs, Cols: cols}
}

func checkDuplicateNames(rel ir.Rel) error {
	seen := map[string]bool{}
	for _, c := range rel.Columns() {
		if c.Hidden {
			continue
		}
		if seen[c.Name] {
			return sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

func (b *binder) bindDrop(s *pg_query.DropStmt) (ir.Statement, error) {
	cascade := s.Behavior == pg_query.DropBehavior_DROP_CASCADE
	d := &ir.Drop{IfExists: s.MissingOk, Cascade: cascade, Path: b.path}
	switch s.RemoveType {
	case pg_query.ObjectType_OBJECT_TABLE:
		d.Kind = catalog.Table
	case pg_query.ObjectType_OBJECT_MATVIEW:
		d.Kind = catalog.MaterializedView
	case pg_query.ObjectType_OBJECT_VIEW:
		d.Kind = catalog.View
	case pg_query.ObjectType_OBJECT_SCHEMA:
		ds := &DropSchema{IfExists: s.MissingOk, Cascade: cascade, Path: b.path}
		for _, o := range s.Objects {
			ds.Names = append(ds.Names, o.GetString_().Sval)
		}
		return ds, nil
	case pg_query.ObjectType_OBJECT_FUNCTION:
		return b.bindDropFunction(s)
	case pg_query.ObjectType_OBJECT_INDEX:
		if s.Concurrent {
			return nil, sqlerr.Unsupported("DROP INDEX CONCURRENTLY")
		}
		di := &ir.DropIndex{IfExists: s.MissingOk}
		for _, o := range s.Objects {
			var parts []string
			for _, item := range o.GetList().GetItems() {
				parts = append(parts, item.GetString_().Sval)
			}
			di.Names = append(di.Names, catalog.NormalizeName(strings.Join(parts, ".")))
		}
		return di, nil
	default:
		return nil, sqlerr.Unsupported("DROP %s", strings.TrimPrefix(s.RemoveType.String(), "OBJECT_"))
	}
	for _, o := range s.Objects {
		var parts []string
		for _, item := range o.GetList().GetItems() {
			parts = append(parts, item.GetString_().Sval)
		}
		switch len(parts) {
		case 1:
			d.Names = append(d.Names, ir.ObjectName{Name: parts[0]})
		case 2:
			d.Names = append(d.Names, ir.ObjectName{Schema: parts[0], Name: parts[1]})
		default:
			return nil, sqlerr.Unsupported("cross-database references")
		}
	}
	return d, nil
}

func (b *binder) bindSet(s *pg_query.VariableSetStmt) (ir.Statement, error) {
	name := strings.ToLower(s.Name)
	switch s.Kind {
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		var vals []string
		for _, a := range s.Args {
			if tc := a.GetTypeCast(); tc != nil && name == "timezone" {
				v, err := b.setTimeZoneValue(tc)
				if err != nil {
					return nil, err
				}
				vals = append(vals, v)
				continue
			}
			c := a.GetAConst()
			if c == nil {
				return nil, sqlerr.New(sqlerr.SyntaxError, "SET %s takes only constants", name)
			}
			switch v := c.Val.(type) {
			case *pg_query.A_Const_Sval:
				if name == "search_path" {
					// A list of names: each kept quoted as needed, as
					// PostgreSQL stores it.
					vals = append(vals, QuoteIdent(v.Sval.Sval))
					continue
				}
				vals = append(vals, v.Sval.Sval)
			case *pg_query.A_Const_Ival:
				vals = append(vals, itoa(int64(v.Ival.Ival)))
			case *pg_query.A_Const_Fval:
				vals = append(vals, v.Fval.Fval)
			case *pg_query.A_Const_Boolval:
				if v.Boolval.Boolval {
					vals = append(vals, "on")
				} else {
					vals = append(vals, "off")
				}
			}
		}
		return &ir.SetVar{Name: name, Value: strings.Join(vals, ", "), Local: s.IsLocal}, nil
	case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
		return &ir.SetVar{Name: name, Reset: true, Local: s.IsLocal}, nil
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		return &ir.SetVar{Name: "all", Reset: true}, nil
	case pg_query.VariableSetKind_VAR_SET_MULTI:
		// SET TRANSACTION ... and SET SESSION CHARACTERISTICS AS
		// TRANSACTION; other multi-word forms are accepted.
		if name == "transaction" || name == "session characteristics" {
			return &SetTransaction{SessionDefault: name != "transaction", Isolation: isolationOf(s.Args), ReadOnly: readOnlyOf(s.Args)}, nil
		}
		return &ir.SetVar{Name: name}, nil
	}
	return nil, sqlerr.Unsupported("SET %s", name)
}

func (b *binder) bindInsert(s *pg_query.InsertStmt) (ir.Statement, error) {
	if s.WithClause != nil {
		return nil, sqlerr.Unsupported("WITH in INSERT")
	}
	table, err := b.lookup(s.Relation)
	if err != nil {
		return nil, err
	}
	if table.Kind == catalog.View {
		return nil, b.errAt(s.Relation.Location, viewNotUpdatable("insert into", table))
	}
	if table.Kind != catalog.Table {
		return nil, b.errAt(s.Relation.Location, sqlerr.New(sqlerr.WrongObjectType, "cannot insert into %s \"%s\"", table.Kind, table.Name))
	}
	// Target columns: the listed ones, or every visible column in order.
	var targets []int
	if len(s.Cols) == 0 {
		targets = table.VisibleColumns()
	} else {
		seen := map[int]bool{}
		for _, c := range s.Cols {
			rt := c.GetResTarget()
			idx := table.ColumnIndex(rt.Name)
			if idx < 0 || table.Columns[idx].Hidden {
				return nil, b.errAt(rt.Location, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", rt.Name, table.Name))
			}
			if seen[idx] {
				return nil, b.errAt(rt.Location, sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" specified more than once", rt.Name))
			}
			seen[idx] = true
			targets = append(targets, idx)
		}
	}
	defer func() {
		// VALUES may have cut targets to the columns it fills.
		for _, ti := range targets {
			b.noteColumn(table.ID, table.Columns[ti].Name, catalog.PrivInsert)
		}
	}()
	if s.SelectStmt == nil {
		return nil, sqlerr.Unsupported("INSERT ... DEFAULT VALUES")
	}
	if err := b.checkIdentityInsert(table, targets, s); err != nil {
		return nil, err
	}
	sel := s.SelectStmt.GetSelectStmt()
	var src ir.Rel
	var flagCols map[int]int
	if len(sel.ValuesLists) > 0 && sel.Op == pg_query.SetOperation_SETOP_NONE {
		if len(s.Cols) == 0 {
			// Without a column list, VALUES may fill only the first columns.
			width := len(sel.ValuesLists[0].GetList().GetItems())
			if width < len(targets) {
				targets = targets[:width]
			}
		}
		src, flagCols, err = b.bindInsertValues(sel, table, targets)
	} else if b.copyInput != nil {
		src = b.copyInput // COPY FROM STDIN (copy.go)
	} else {
		src, err = b.bindQuery(sel)
	}
	if err != nil {
		return nil, err
	}
	vis := ir.VisibleColumns(src)
	if len(vis) > len(targets) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
	}
	if len(vis) < len(targets) && len(s.Cols) > 0 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
	}
	// Project the source onto the table's visible columns with assignment casts.
	srcCols := src.Columns()
	var exprs []ir.Expr
	var cols []ir.Column
	for _, ci := range table.VisibleColumns() {
		col := table.Columns[ci]
		e, err := b.columnDefault(col)
		if err != nil {
			return nil, err
		}
		for k, ti := range targets {
			if ti == ci && k < len(vis) {
				in := srcCols[vis[k]]
				var v ir.Expr = &ir.InputRef{Index: vis[k], T: in.Type, Name: in.Name}
				if c := b.untypedOutput(src, vis[k]); c != nil {
					// An untyped literal selected into a column takes the
					// column's type, as in PostgreSQL: INSERT ... SELECT NULL.
					v = c
				}
				if e, err = b.assign(v, col, -1); err != nil {
					return nil, err
				}
			}
		}
		exprs = append(exprs, e)
		cols = append(cols, ir.Column{Name: col.Name, Type: col.Type})
	}
	fe, fc := serialFlags(table, targets, len(vis), flagCols)
	exprs, cols = append(exprs, fe...), append(cols, fc...)
	ins := &ir.Insert{Table: table, Source: &ir.Project{Input: src, Exprs: exprs, Cols: cols}}
	return ins, b.bindInsertClauses(ins, s)
}

// untypedOutput returns the untyped literal that output column i of a
// query's top projection was before it defaulted to text, or nil.
func (b *binder) untypedOutput(src ir.Rel, i int) *ir.Const {
	p, ok := src.(*ir.Project)
	if !ok || i >= len(p.Exprs) {
		return nil
	}
	c, ok := p.Exprs[i].(*ir.Const)
	if !ok {
		return nil
	}
	return b.defaulted[c]
}

// bindInsertValues binds VALUES rows of an INSERT with the target columns'
// types known, so that literals are parsed as those types.
func (b *binder) bindInsertValues(sel *pg_query.SelectStmt, table *catalog.Relation, targets []int) (ir.Rel, map[int]int, error) {
	v := &ir.Values{}
	var defaults [][]bool // by row, by target: given DEFAULT
	for i, row := range sel.ValuesLists {
		items := row.GetList().GetItems()
		if i > 0 && len(items) != len(v.Rows[0]) {
			return nil, nil, b.errAt(exprLocation(items[0]), sqlerr.New(sqlerr.SyntaxError, "VALUES lists must all be the same length"))
		}
		if len(items) > len(targets) {
			return nil, nil, b.errAt(exprLocation(items[len(targets)]), sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns"))
		}
		if len(items) < len(targets) {
			return nil, nil, sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
		}
		var out []ir.Expr
		defaults = append(defaults, make([]bool, len(items)))
		for k, item := range items {
			col := table.Columns[targets[k]]
			if _, ok := item.Node.(*pg_query.Node_SetToDefault); ok {
				e, err := b.columnDefault(col)
				if err != nil {
					return nil, nil, err
				}
				out = append(out, e)
				defaults[i][k] = true
				continue
			}
			e, err := b.bindExpr(&exprCtx{clause: "VALUES"}, item)
			if err != nil {
				return nil, nil, err
			}
			if e, err = b.assign(e, col, exprLocation(item)); err != nil {
				return nil, nil, err
			}
			out = append(out, e)
		}
		v.Rows = append(v.Rows, out)
	}
	for i, ti := range targets {
		v.Cols = append(v.Cols, ir.Column{Name: "column" + itoa(int64(i+1)), Type: table.Columns[ti].Type})
	}
	return v, valuesSerialFlags(v, table, targets, defaults), nil
}

// assign converts e for storage in col (an assignment cast), or fails with
// 42804 as PostgreSQL does.
func (b *binder) assign(e ir.Expr, col catalog.Column, loc int32) (ir.Expr, error) {
	from := e.Type()
	if from.Kind == types.Unknown || ir.AssignmentCastAllowed(from, col.Type) || isRowCall(e) {
		out, err := b.castTo(e, col.Type, loc, false)
		if c, ok := out.(*ir.Cast); ok {
			// The cast of e itself (or of the parameter e was, now typed)
			// stores the value.
			if _, isParam := e.(*Param); c.Arg == e || isParam || zoneWraps(c.Arg, e) {
				c.Assignment = true
			}
		}
		return out, err
	}
	return nil, b.errAt(loc, sqlerr.New(sqlerr.DatatypeMismatch, "column \"%s\" is of type %s but expression is of type %s", col.Name, col.Type, from).
		WithHint("You will need to rewrite or cast the expression."))
}

func (b *binder) tableScope(table *catalog.Relation, alias string) *scope {
	if alias == "" {
		alias = table.Name
	}
	sc := &scope{}
	for _, c := range table.Columns {
		sc.cols = append(sc.cols, scopeCol{table: alias, name: c.Name, t: c.Type, hidden: c.Hidden, src: columnSrc{table.ID, c.Name}})
	}
	return sc
}

func (b *binder) dmlTable(rv *pg_query.RangeVar, verb string) (*catalog.Relation, *scope, error) {
	table, err := b.lookup(rv)
	if err != nil {
		return nil, nil, err
	}
	if table.Kind == catalog.View {
		return nil, nil, b.errAt(rv.Location, viewNotUpdatable(verb, table))
	}
	if table.Kind != catalog.Table {
		return nil, nil, b.errAt(rv.Location, sqlerr.New(sqlerr.WrongObjectType, "cannot %s %s \"%s\"", verb, table.Kind, table.Name))
	}
	if table.AppendOnly {
		return nil, nil, b.errAt(rv.Location, sqlerr.New(sqlerr.WrongObjectType, "cannot %s append-only table \"%s\"", verb, table.Name).
			WithHint("An APPEND ONLY table accepts INSERT only."))
	}
	alias := ""
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	return table, b.tableScope(table, alias), nil
}

func (b *binder) bindUpdate(s *pg_query.UpdateStmt) (ir.Statement, error) {
	if s.WithClause != nil {
		return nil, sqlerr.Unsupported("WITH in UPDATE")
	}
	table, sc, err := b.dmlTable(s.Relation, "update")
	if err != nil {
		return nil, err
	}
	u := &ir.Update{Table: table}
	subs := &subqueries{}
	from, sc, err := b.bindDMLFrom(sc, s.FromClause)
	if err != nil {
		return nil, err
	}
	set, err := b.bindSetList(table, sc, s.TargetList, subs, "UPDATE")
	if err != nil {
		return nil, err
	}
	if u.Rows, err = b.dmlRows(table, dmlAlias(s.Relation), sc, from, s.WhereClause, set, subs); err != nil {
		return nil, err
	}
	if u.Returning, err = b.bindReturning(table, dmlAlias(s.Relation), s.ReturningList); err != nil {
		return nil, err
	}
	return u, nil
}

func (b *binder) bindDelete(s *pg_query.DeleteStmt) (ir.Statement, error) {
	if s.WithClause != nil {
		return nil, sqlerr.Unsupported("WITH in DELETE")
	}
	table, sc, err := b.dmlTable(s.Relation, "delete from")
	if err != nil {
		return nil, err
	}
	from, sc, err := b.bindDMLFrom(sc, s.UsingClause)
	if err != nil {
		return nil, err
	}
	rows, err := b.dmlRows(table, dmlAlias(s.Relation), sc, from, s.WhereClause, nil, nil)
	if err != nil {
		return nil, err
	}
	ret, err := b.bindReturning(table, dmlAlias(s.Relation), s.ReturningList)
	if err != nil {
		return nil, err
	}
	return &ir.Delete{Table: table, Rows: rows, Returning: ret}, nil
}

// objectNotInPrerequisiteState is SQLSTATE 55000.
const objectNotInPrerequisiteState = "55000"

// viewNotUpdatable is the error of DML on a plain view: PostgreSQL's for a
// view that is not automatically updatable (streamsql's never are).
func viewNotUpdatable(verb string, view *catalog.Relation) *sqlerr.Error {
	return sqlerr.New(objectNotInPrerequisiteState, "cannot %s view \"%s\"", verb, view.Name).
		WithDetail("Views are not automatically updatable in streamsql.").
		WithHint("Write to the tables the view reads.")
}
