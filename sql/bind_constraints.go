package sql

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// rawCheck is a CHECK constraint of CREATE TABLE before binding; col is its
// column for a column constraint, "" for a table constraint.
type rawCheck struct {
	c   *pg_query.Constraint
	col string
}

// setIdentity makes col (of table) an identity column: GENERATED ALWAYS or
// BY DEFAULT AS IDENTITY takes its values from a sequence as serial does.
func (b *binder) setIdentity(col *catalog.Column, table string, c *pg_query.Constraint) error {
	if col.Serial || col.Default != "" {
		return b.errAt(c.Location, sqlerr.New(sqlerr.SyntaxError, "multiple default values specified for column \"%s\" of table \"%s\"", col.Name, table))
	}
	switch col.Type.Kind {
	case types.Int16, types.Int32, types.Int64:
	default:
		return b.errAt(c.Location, sqlerr.New(sqlerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint"))
	}
	if len(c.Options) > 0 {
		return b.errAt(c.Location, sqlerr.Unsupported("sequence options of an identity column"))
	}
	col.Serial, col.NotNull = true, true
	col.Identity = "by default"
	if c.GeneratedWhen == "a" {
		col.Identity = "always"
	}
	return nil
}

// checkIdentityInsert refuses an INSERT that gives a GENERATED ALWAYS
// identity column a value other than DEFAULT, unless it says OVERRIDING
// SYSTEM VALUE, as PostgreSQL does (428C9).
func (b *binder) checkIdentityInsert(table *catalog.Relation, targets []int, s *pg_query.InsertStmt) error {
	switch s.Override {
	case pg_query.OverridingKind_OVERRIDING_SYSTEM_VALUE:
		return nil
	case pg_query.OverridingKind_OVERRIDING_USER_VALUE:
		return sqlerr.Unsupported("OVERRIDING USER VALUE")
	}
	sel := s.SelectStmt.GetSelectStmt()
	for k, ci := range targets {
		col := table.Columns[ci]
		if col.Identity != "always" {
			continue
		}
		allDefault := len(sel.ValuesLists) > 0
		for _, row := range sel.ValuesLists {
			items := row.GetList().GetItems()
			if k < len(items) {
				if _, ok := items[k].Node.(*pg_query.Node_SetToDefault); !ok {
					allDefault = false
				}
			}
		}
		if !allDefault {
			return sqlerr.New("428C9", "cannot insert a non-DEFAULT value into column \"%s\"", col.Name).
				WithDetail("Column \"" + col.Name + "\" is an identity column defined as GENERATED ALWAYS.").
				WithHint("Use OVERRIDING SYSTEM VALUE to override.")
		}
	}
	return nil
}

// bindChecks binds the CHECK constraints of a table being created (named
// table, of columns cols), naming the unnamed ones as PostgreSQL does.
func (b *binder) bindChecks(table string, cols []catalog.Column, raw []rawCheck) ([]catalog.Check, error) {
	var out []catalog.Check
	taken := map[string]bool{}
	for _, r := range raw {
		if r.c.IsNoInherit || r.c.SkipValidation {
			return nil, b.errAt(r.c.Location, sqlerr.Unsupported("CHECK ... NO INHERIT or NOT VALID"))
		}
		text, err := deparseExpr(r.c.RawExpr)
		if err != nil {
			return nil, b.errAt(r.c.Location, sqlerr.New(sqlerr.SyntaxError, "malformed CHECK expression: %v", err))
		}
		name := r.c.Conname
		if name == "" {
			col := r.col
			if col == "" {
				col = firstColumnRef(r.c.RawExpr)
			}
			base := table + "_check"
			if col != "" {
				base = table + "_" + col + "_check"
			}
			name = base
			for n := 1; taken[name]; n++ {
				name = base + itoa(int64(n))
			}
		}
		if taken[name] {
			return nil, b.errAt(r.c.Location, sqlerr.New(sqlerr.DuplicateObject, "constraint \"%s\" for relation \"%s\" already exists", name, table))
		}
		taken[name] = true
		chk := catalog.Check{Name: name, Expr: text}
		if _, err := bindCheck(b.cat, table, cols, chk); err != nil {
			return nil, err
		}
		out = append(out, chk)
	}
	return out, nil
}

// BindChecks binds the CHECK constraints of table: one boolean expression
// per constraint, over the table's columns (all of them, hidden included).
func BindChecks(cat *catalog.Catalog, table *catalog.Relation) ([]ir.Expr, error) {
	var out []ir.Expr
	for _, c := range table.Checks {
		e, err := bindCheck(cat, table.Name, table.Columns, c)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func bindCheck(cat *catalog.Catalog, table string, cols []catalog.Column, c catalog.Check) (ir.Expr, error) {
	res, err := pg_query.Parse("SELECT " + c.Expr)
	if err != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "malformed CHECK expression of constraint \"%s\": %v", c.Name, err)
	}
	target := res.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget()
	sub := &binder{cat: cat, full: c.Expr}
	sc := &scope{}
	for _, col := range cols {
		sc.cols = append(sc.cols, scopeCol{table: table, name: col.Name, t: col.Type, hidden: col.Hidden})
	}
	e, err := sub.bindExpr(&exprCtx{scope: sc, clause: "check constraints"}, target.Val)
	if err != nil {
		return nil, err
	}
	if k := e.Type().Kind; k != types.Bool && k != types.Unknown {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "argument of CHECK constraint must be type boolean, not type %s", e.Type())
	}
	if sub.volatile != nil {
		return nil, sqlerr.Unsupported("volatile functions (%s) in CHECK constraints", sub.volatile.fn)
	}
	return sub.castTo(e, types.BoolT, -1, false)
}

// deparseExpr renders a parsed expression as SQL text.
func deparseExpr(expr *pg_query.Node) (string, error) {
	res, err := pg_query.Parse("SELECT 1")
	if err != nil {
		return "", err
	}
	res.Stmts[0].Stmt.GetSelectStmt().TargetList = []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(expr, 0)}
	text, err := pg_query.Deparse(res)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(text, "SELECT "), nil
}

// firstColumnRef returns the last name of the first column reference in n
// (depth first), or "".
func firstColumnRef(n *pg_query.Node) string {
	var found string
	var walk func(m protoreflect.Message) bool
	walk = func(m protoreflect.Message) bool {
		if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
			if s := cr.Fields[len(cr.Fields)-1].GetString_(); s != nil {
				found = s.Sval
				return false
			}
		}
		cont := true
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len() && cont; i++ {
					cont = walk(l.Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				cont = walk(v.Message())
			}
			return cont
		})
		return cont
	}
	walk(n.ProtoReflect())
	return found
}

// bindUniques binds the UNIQUE constraints of a table being created, of
// columns cols: each a unique index over its columns (an unnamed one is
// named by the engine).
func (b *binder) bindUniques(cols []catalog.Column, raw []rawCheck) ([]catalog.Index, error) {
	var out []catalog.Index
	for _, r := range raw {
		names := []string{r.col}
		if r.col == "" {
			names = nil
			for _, k := range r.c.Keys {
				names = append(names, k.GetString_().Sval)
			}
		}
		def, err := b.uniqueIndex(r.c, names, func(name string) int {
			for i, c := range cols {
				if c.Name == name {
					return i
				}
			}
			return -1
		})
		if err != nil {
			return nil, err
		}
		out = append(out, def)
	}
	return out, nil
}

// uniqueIndex is the index of UNIQUE constraint c over the columns names
// (column finds each one's index, -1 if none).
func (b *binder) uniqueIndex(c *pg_query.Constraint, names []string, column func(string) int) (catalog.Index, error) {
	def := catalog.Index{Name: c.Conname, Unique: true}
	if len(c.Including) > 0 || c.NullsNotDistinct || len(c.Options) > 0 || c.Indexname != "" {
		return def, b.errAt(c.Location, sqlerr.Unsupported("UNIQUE constraint options"))
	}
	for _, n := range names {
		ci := column(n)
		if ci < 0 {
			return def, b.errAt(c.Location, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" named in key does not exist", n))
		}
		def.Columns = append(def.Columns, ci)
	}
	return def, nil
}
