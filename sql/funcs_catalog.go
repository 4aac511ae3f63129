package sql

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// The functions and casts PostgreSQL's clients use to read the catalog
// (format_type, pg_table_is_visible, ::regclass, ...). They are bound over
// the catalog as the statement sees it when it is bound: a function of an
// OID becomes a CASE over the (few) objects there are, or an IN list. In a
// materialized view they would keep the catalog of its creation; they are
// meant for queries.

// Session is what the session functions (current_user, current_setting,
// set_config, pg_backend_pid) read and change. Statements bound without one
// see the defaults below.
type Session interface {
	// User is the current user (current_user, current_role): the role
	// of SET ROLE, else the session user.
	User() string
	// SessionUser is the session user (session_user): the user the
	// session connected as, or that of SET SESSION AUTHORIZATION.
	SessionUser() string
	// BackendPID is the session's process id as pg_backend_pid reports it.
	BackendPID() int32
	// SignalBackend cancels the running statement of the session with
	// process id pid (pg_cancel_backend) or ends that session
	// (pg_terminate_backend). It reports whether there was such a session
	// to signal; an error is a privilege the caller lacks.
	SignalBackend(pid int32, terminate bool) (bool, error)
	// Setting returns a configuration parameter's value; ok is false for
	// an unknown parameter.
	Setting(name string) (value string, ok bool)
	// SetSetting sets a parameter as SET does (SET LOCAL when local).
	SetSetting(name, value string, local bool) error
}

// SetSession makes the statement's session functions read and change s
// when it is bound.
func (p *Parsed) SetSession(s Session) { p.session = s }

func (b *binder) user() string {
	if b.session != nil {
		return b.session.User()
	}
	return "streamsql"
}

func (b *binder) sessionUser() string {
	if b.session != nil {
		return b.session.SessionUser()
	}
	return "streamsql"
}

// catalogCastTypes are the object identifier types: values are OIDs
// (bigint), named by the object's name where cast to text.
var catalogCastTypes = map[string]bool{
	"oid": true, "regclass": true, "regtype": true, "regproc": true, "regprocedure": true,
	"regnamespace": true, "regrole": true, "regoper": true, "regconfig": true,
}

func typeNameLast(tn *pg_query.TypeName) string {
	var name string
	for _, n := range tn.Names {
		if s, ok := n.Node.(*pg_query.Node_String_); ok {
			name = s.String_.Sval
		}
	}
	return name
}

// bindCatalogCast binds x::regclass and the other casts to object
// identifier types, and x::regclass::text (the object's name). ok is false
// for other casts.
func (b *binder) bindCatalogCast(ctx *exprCtx, tc *pg_query.TypeCast) (ir.Expr, bool, error) {
	target := typeNameLast(tc.TypeName)
	if len(tc.TypeName.ArrayBounds) > 0 {
		if !catalogCastTypes[target] {
			return nil, false, nil
		}
		// Arrays of OIDs are arrays of bigint.
		arg, err := b.bindExpr(ctx, tc.Arg)
		if err != nil {
			return nil, true, err
		}
		e, err := b.castTo(arg, types.ArrayOf(types.Int64T), tc.Location, true)
		return e, true, err
	}
	if target == "name" {
		arg, err := b.bindCatalogCastArg(ctx, tc.Arg)
		if err != nil {
			return nil, true, err
		}
		e, err := b.castTo(arg, types.TextT, tc.Location, true)
		return e, true, err
	}
	if !catalogCastTypes[target] {
		return nil, false, nil
	}
	arg, err := b.bindExpr(ctx, tc.Arg)
	if err != nil {
		return nil, true, err
	}
	if c, ok := arg.(*ir.Const); ok && (c.T.Kind == types.Unknown || c.T.Kind == types.Text) && !c.Value.Null && target != "oid" {
		o, err := b.lookupOID(target, c.Value.S, tc.Location)
		return &ir.Const{Value: types.DInt(o), T: types.Int64T}, true, err
	}
	if arg.Type().Kind == types.Text && target != "oid" {
		return b.nameToOID(target, arg), true, nil
	}
	e, err := b.castTo(arg, types.Int64T, tc.Location, true)
	return e, true, err
}

// bindCatalogCastArg binds the argument of a cast to text: the object's
// name when it is a cast to an object identifier type.
func (b *binder) bindCatalogCastArg(ctx *exprCtx, n *pg_query.Node) (ir.Expr, error) {
	inner := n.GetTypeCast()
	if inner == nil || len(inner.TypeName.ArrayBounds) > 0 {
		return b.bindExpr(ctx, n)
	}
	kind := typeNameLast(inner.TypeName)
	if !catalogCastTypes[kind] || kind == "oid" {
		return b.bindExpr(ctx, n)
	}
	o, _, err := b.bindCatalogCast(ctx, inner)
	if err != nil {
		return nil, err
	}
	return b.oidName(kind, o), nil
}

// bindCatalogTextCast binds x::regclass::text: the cast of an object
// identifier to text names the object. ok is false for other casts.
func (b *binder) bindCatalogTextCast(ctx *exprCtx, tc *pg_query.TypeCast, t types.T) (ir.Expr, bool, error) {
	inner := tc.Arg.GetTypeCast()
	if t.Kind != types.Text || inner == nil || len(inner.TypeName.ArrayBounds) > 0 {
		return nil, false, nil
	}
	if kind := typeNameLast(inner.TypeName); !catalogCastTypes[kind] || kind == "oid" {
		return nil, false, nil
	}
	arg, err := b.bindCatalogCastArg(ctx, tc.Arg)
	if err != nil {
		return nil, true, err
	}
	e, err := b.castTo(arg, t, tc.Location, true)
	return e, true, err
}

// catalogObject is an object an OID names, with the name ::regclass (or
// ::regtype, ...) prints for it.
type catalogObject struct {
	oid  int64
	name string
}

// objects lists the objects of an object identifier type.
func (b *binder) objects(kind string) []catalogObject {
	var out []catalogObject
	switch kind {
	case "regclass":
		for _, e := range PgClassEntries(b.cat) {
			name := QuoteIdent(e.Name)
			if !b.classVisible(e) {
				name = QuoteIdent(e.Schema) + "." + name
			}
			out = append(out, catalogObject{e.OID, name})
		}
	case "regtype":
		for _, t := range PgTypes {
			out = append(out, catalogObject{t.OID, t.Display})
		}
	case "regproc", "regprocedure":
		for _, f := range b.cat.Functions() {
			name := f.Name
			if kind == "regprocedure" {
				name = f.Signature()
			}
			out = append(out, catalogObject{f.OID(), name})
		}
	case "regnamespace":
		for _, s := range b.cat.Schemas() {
			out = append(out, catalogObject{s.OID(), QuoteIdent(s.Name)})
		}
	case "regrole":
		ri, ok := b.session.(RoleInfo)
		if !ok {
			out = append(out, catalogObject{catalog.BootstrapRoleOID, QuoteIdent(b.user())})
			break
		}
		for _, r := range ri.RoleOIDs() {
			out = append(out, catalogObject{r.OID, QuoteIdent(r.Name)})
		}
	}
	return out
}

// classVisible is pg_table_is_visible: the relation is what its unqualified
// name means under the search path (an index: its schema is in the path).
func (b *binder) classVisible(e PgClassEntry) bool {
	if e.Kind == "i" {
		for _, s := range b.path {
			if s == e.Schema {
				return true
			}
		}
		return b.path == nil && e.Schema == catalog.Public
	}
	return b.cat.Visible(b.path, e.Rel)
}

// lookupOID is the OID a name cast to an object identifier type means.
func (b *binder) lookupOID(kind, name string, loc int32) (int64, error) {
	if n, err := strconv.ParseInt(strings.TrimSpace(name), 10, 64); err == nil {
		return n, nil
	}
	switch kind {
	case "regclass":
		schema, rel := splitQualified(name)
		for _, e := range PgClassEntries(b.cat) {
			if e.Name != rel {
				continue
			}
			if schema == "" && b.classVisible(e) || schema == e.Schema {
				return e.OID, nil
			}
		}
		return 0, b.errAt(loc, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", name))
	case "regtype":
		if t, ok := pgTypeByName(name); ok {
			return t.OID, nil
		}
		return 0, b.errAt(loc, sqlerr.New(sqlerr.UndefinedObject, "type \"%s\" does not exist", name))
	case "regnamespace":
		if o := PgNamespaceOID(b.cat, name); o != 0 {
			return o, nil
		}
		return 0, b.errAt(loc, sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", name))
	case "regrole":
		if ri, ok := b.session.(RoleInfo); ok {
			for _, r := range ri.RoleOIDs() {
				if r.Name == name {
					return r.OID, nil
				}
			}
		} else if name == b.user() {
			return catalog.BootstrapRoleOID, nil
		}
		return 0, b.errAt(loc, sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", name))
	case "regproc", "regprocedure":
		fname := name
		if i := strings.IndexByte(fname, '('); i >= 0 {
			fname = fname[:i]
		}
		_, fname = splitQualified(fname)
		for _, f := range b.cat.Functions() {
			if f.Name == fname {
				return f.OID(), nil
			}
		}
		return 0, b.errAt(loc, sqlerr.New(sqlerr.UndefinedFunction, "function \"%s\" does not exist", name))
	}
	return 0, b.errAt(loc, sqlerr.Unsupported("type %s", kind))
}

// splitQualified splits "s.n" (identifiers folded to lower case unless
// quoted) into its schema and name.
func splitQualified(name string) (schema, rel string) {
	parts := ParseSearchPath(strings.ReplaceAll(name, ".", ","), "$user")
	if len(parts) == 2 {
		return parts[0], parts[1]
	}
	if len(parts) == 1 {
		return "", parts[0]
	}
	return "", name
}

// oidName is the name of the object the OID o names: a CASE over the
// objects of kind; an OID naming none prints as the number, as PostgreSQL
// does.
func (b *binder) oidName(kind string, o ir.Expr) ir.Expr {
	var whens []ir.When
	for _, obj := range b.objects(kind) {
		whens = append(whens, ir.When{Cond: eqInt(o, obj.oid), Then: textConst(obj.name)})
	}
	return &ir.Case{Whens: whens, Else: &ir.Cast{Arg: o, T: types.TextT}, T: types.TextT}
}

// nameToOID is the OID of the object a text value names (NULL if none).
func (b *binder) nameToOID(kind string, name ir.Expr) ir.Expr {
	var whens []ir.When
	for _, obj := range b.objects(kind) {
		whens = append(whens, ir.When{Cond: &ir.Call{Fn: ir.FnEq, Args: []ir.Expr{name, textConst(obj.name)}, T: types.BoolT}, Then: intConst(obj.oid)})
	}
	return &ir.Case{Whens: whens, Else: &ir.Const{Value: types.Null, T: types.Int64T}, T: types.Int64T}
}

func intConst(n int64) *ir.Const { return &ir.Const{Value: types.DInt(n), T: types.Int64T} }

func eqInt(e ir.Expr, n int64) ir.Expr {
	return &ir.Call{Fn: ir.FnEq, Args: []ir.Expr{e, intConst(n)}, T: types.BoolT}
}

// oidCase maps the OID e to a value of type t: values[oid], else def.
func oidCase(e ir.Expr, t types.T, oids []int64, values []ir.Expr, def ir.Expr) ir.Expr {
	whens := make([]ir.When, len(oids))
	for i, o := range oids {
		whens[i] = ir.When{Cond: eqInt(e, o), Then: values[i]}
	}
	return &ir.Case{Whens: whens, Else: def, T: t}
}

func nullOf(t types.T) *ir.Const { return &ir.Const{Value: types.Null, T: t} }

// catalogFuncs are the catalog functions bindCatalogFunc binds, with the
// numbers of arguments they take.
var catalogFuncs = map[string][]int{
	"pg_table_is_visible": {1}, "pg_type_is_visible": {1}, "pg_function_is_visible": {1},
	"pg_get_userbyid": {1}, "format_type": {2}, "pg_get_expr": {2, 3},
	"pg_get_viewdef": {1, 2}, "pg_get_indexdef": {1, 3}, "pg_get_constraintdef": {1, 2},
	"obj_description": {1, 2}, "col_description": {2}, "shobj_description": {2},
	"pg_encoding_to_char": {1}, "pg_get_function_result": {1}, "pg_get_function_arguments": {1},
	"pg_get_function_identity_arguments": {1}, "pg_relation_is_publishable": {1},
	"pg_get_statisticsobjdef_columns": {1}, "pg_get_ruledef": {1, 2}, "pg_get_triggerdef": {1, 2},
	"current_user": {0}, "session_user": {0}, "current_role": {0}, "user": {0},
	"current_schemas": {1}, "pg_backend_pid": {0}, "pg_cancel_backend": {1}, "pg_terminate_backend": {1, 2}, "current_setting": {1, 2}, "set_config": {3},
	"pg_is_in_recovery": {0}, "pg_get_serial_sequence": {2}, "pg_get_partkeydef": {1},
	"has_table_privilege": {2, 3}, "has_schema_privilege": {2, 3}, "has_database_privilege": {2, 3},
	"has_column_privilege": {3, 4}, "has_function_privilege": {2, 3}, "has_sequence_privilege": {2, 3},
	"pg_table_size": {1}, "pg_relation_size": {1, 2}, "pg_total_relation_size": {1}, "pg_indexes_size": {1},
	"pg_database_size": {1},
	"acldefault":       {2}, "pg_get_function_sqlbody": {1}, "pg_get_statisticsobjdef": {1},
	"has_any_column_privilege": {2, 3}, "has_type_privilege": {2, 3}, "pg_has_role": {2, 3},
}

// bindCatalogFunc binds a call of a catalog function. ok is false for other
// names and for numbers of arguments the function does not take.
func (b *binder) bindCatalogFunc(name string, args []ir.Expr, loc int32) (ir.Expr, bool, error) {
	ns, known := catalogFuncs[name]
	if !known {
		return nil, false, nil
	}
	arity := false
	for _, n := range ns {
		arity = arity || n == len(args)
	}
	if !arity {
		return nil, false, nil
	}
	oidArg := func(i int) (ir.Expr, error) { return b.coerce(args[i], types.Int64T, loc) }
	textArg := func(i int) (ir.Expr, error) { return b.coerce(args[i], types.TextT, loc) }
	switch name {
	case "pg_table_is_visible", "pg_type_is_visible", "pg_function_is_visible":
		o, err := oidArg(0)
		if err != nil {
			return nil, true, err
		}
		var list []ir.Expr
		switch name {
		case "pg_table_is_visible":
			for _, e := range PgClassEntries(b.cat) {
				if b.classVisible(e) {
					list = append(list, intConst(e.OID))
				}
			}
		case "pg_type_is_visible":
			for _, t := range PgTypes {
				list = append(list, intConst(t.OID))
			}
		default:
			for _, f := range b.cat.Functions() {
				if len(b.cat.ResolveFunctions(b.path, f.Name)) > 0 {
					list = append(list, intConst(f.OID()))
				}
			}
		}
		if len(list) == 0 {
			return &ir.Case{Whens: []ir.When{{Cond: &ir.Call{Fn: ir.FnIsNull, Args: []ir.Expr{o}, T: types.BoolT}, Then: nullOf(types.BoolT)}},
				Else: &ir.Const{Value: types.DBool(false), T: types.BoolT}, T: types.BoolT}, true, nil
		}
		return &ir.InList{Arg: o, List: list}, true, nil
	case "pg_get_userbyid":
		o, err := oidArg(0)
		if err != nil {
			return nil, true, err
		}
		unknown := &ir.Call{Fn: ir.FnConcatOp, Args: []ir.Expr{&ir.Call{Fn: ir.FnConcatOp, Args: []ir.Expr{textConst("unknown (OID="), &ir.Cast{Arg: o, T: types.TextT}}, T: types.TextT}, textConst(")")}, T: types.TextT}
		return oidCase(o, types.TextT, []int64{catalog.BootstrapRoleOID, catalog.DatabaseOwnerOID},
			[]ir.Expr{textConst(b.user()), textConst("pg_database_owner")}, unknown), true, nil
	case "format_type":
		return b.bindFormatType(args, loc)
	case "pg_get_expr":
		e, err := textArg(0)
		return e, true, err
	case "pg_get_viewdef":
		if args[0].Type().Kind == types.Text || args[0].Type().Kind == types.Unknown {
			c, ok := args[0].(*ir.Const)
			if !ok || c.Value.Null {
				return nil, true, b.errAt(loc, sqlerr.Unsupported("pg_get_viewdef of a non-constant name"))
			}
			o, err := b.lookupOID("regclass", c.Value.S, loc)
			if err != nil {
				return nil, true, err
			}
			args[0] = intConst(o)
		}
		o, err := oidArg(0)
		if err != nil {
			return nil, true, err
		}
		var oids []int64
		var defs []ir.Expr
		for _, e := range PgClassEntries(b.cat) {
			if (e.Kind == "v" || e.Kind == "m") && e.Rel.Kind != catalog.SystemTable {
				oids, defs = append(oids, e.OID), append(defs, textConst(ViewQuery(b.cat, e.Rel)))
			}
		}
		return oidCase(o, types.TextT, oids, defs, nullOf(types.TextT)), true, nil
	case "pg_get_indexdef", "pg_get_constraintdef":
		o, err := oidArg(0)
		if err != nil {
			return nil, true, err
		}
		if name == "pg_get_indexdef" && len(args) == 3 {
			return b.bindIndexColumnDef(o, args[1], loc)
		}
		var oids []int64
		var defs []ir.Expr
		for _, e := range PgClassEntries(b.cat) {
			switch {
			case name == "pg_get_indexdef" && e.Kind == "i":
				oids, defs = append(oids, e.OID), append(defs, textConst(e.IndexDef()))
			case name == "pg_get_constraintdef" && e.PrimaryKey:
				oids, defs = append(oids, e.OID), append(defs, textConst(PrimaryKeyDef(e.Rel)))
			}
		}
		return oidCase(o, types.TextT, oids, defs, nullOf(types.TextT)), true, nil
	case "obj_description", "col_description":
		return b.bindDescription(name, args, loc)
	case "shobj_description", "pg_get_statisticsobjdef_columns",
		"pg_get_ruledef", "pg_get_triggerdef", "pg_get_serial_sequence", "pg_get_partkeydef":
		// streamsql stores no comments on shared objects, no rules,
		// triggers, statistics objects, sequences of their own or
		// partitioning.
		return nullOf(types.TextT), true, nil
	case "pg_encoding_to_char":
		o, err := b.coerce(args[0], types.Int32T, loc)
		if err != nil {
			return nil, true, err
		}
		return &ir.Case{Whens: []ir.When{{Cond: &ir.Call{Fn: ir.FnEq, Args: []ir.Expr{o, &ir.Const{Value: types.DInt(6), T: types.Int32T}}, T: types.BoolT}, Then: textConst("UTF8")}},
			Else: textConst(""), T: types.TextT}, true, nil
	case "pg_get_function_result", "pg_get_function_arguments", "pg_get_function_identity_arguments":
		o, err := oidArg(0)
		if err != nil {
			return nil, true, err
		}
		var oids []int64
		var defs []ir.Expr
		for _, f := range b.cat.Functions() {
			oids = append(oids, f.OID())
			if name == "pg_get_function_result" {
				defs = append(defs, textConst(FormatType(ColumnTypeOID(f.Result), int64(f.Result.Typmod()), true)))
				continue
			}
			parts := make([]string, len(f.ArgTypes))
			for i, t := range f.ArgTypes {
				parts[i] = FormatType(ColumnTypeOID(t), -1, false)
				if i < len(f.ArgNames) && f.ArgNames[i] != "" {
					parts[i] = QuoteIdent(f.ArgNames[i]) + " " + parts[i]
				}
			}
			defs = append(defs, textConst(strings.Join(parts, ", ")))
		}
		return oidCase(o, types.TextT, oids, defs, nullOf(types.TextT)), true, nil
	case "pg_table_size", "pg_relation_size", "pg_total_relation_size", "pg_indexes_size", "pg_database_size":
		// Sizes are not known where the statement is bound: NULL, as
		// PostgreSQL returns for a relation it does not find.
		return nullOf(types.Int64T), true, nil
	case "acldefault":
		// Privileges are not tracked: no ACL.
		return nullOf(types.ArrayOf(types.TextT)), true, nil
	case "pg_get_function_sqlbody", "pg_get_statisticsobjdef":
		return nullOf(types.TextT), true, nil
	case "pg_relation_is_publishable", "pg_is_in_recovery":
		return &ir.Const{Value: types.DBool(false), T: types.BoolT}, true, nil
	case "current_user", "current_role", "user":
		return textConst(b.user()), true, nil
	case "session_user":
		return textConst(b.sessionUser()), true, nil
	case "current_schemas":
		return b.bindCurrentSchemas(args, loc)
	case "pg_backend_pid":
		pid := int32(0)
		if b.session != nil {
			pid = b.session.BackendPID()
		}
		return &ir.Const{Value: types.DInt(int64(pid)), T: types.Int32T}, true, nil
	case "pg_cancel_backend", "pg_terminate_backend":
		return b.bindSignalBackend(name == "pg_terminate_backend", args, loc)
	case "current_setting":
		return b.bindCurrentSetting(args, loc)
	case "set_config":
		return b.bindSetConfig(args, loc)
	}
	if _, ok := privilegeFuncs[name]; ok {
		if e, ok, err := b.bindPrivilegeFunc(name, args, loc); ok || err != nil {
			return e, true, err
		}
	}
	if name == "pg_has_role" {
		if e, ok, err := b.bindPgHasRole(args, loc); ok || err != nil {
			return e, true, err
		}
	}
	// The other has_*_privilege and pg_has_role, and the has_*_privilege
	// of privilegeFuncs where the session checks no privileges: true.
	return &ir.Const{Value: types.DBool(true), T: types.BoolT}, true, nil
}

// bindIndexColumnDef binds pg_get_indexdef(index, column, pretty): the
// index's definition for column 0, else the definition of that column (its
// name: streamsql indexes columns, not expressions).
func (b *binder) bindIndexColumnDef(o, col ir.Expr, loc int32) (ir.Expr, bool, error) {
	col, err := b.coerce(col, types.Int32T, loc)
	if err != nil {
		return nil, true, err
	}
	i4 := func(n int) ir.Expr { return &ir.Const{Value: types.DInt(int64(n)), T: types.Int32T} }
	eq4 := func(e ir.Expr, n int) ir.Expr {
		return &ir.Call{Fn: ir.FnEq, Args: []ir.Expr{e, i4(n)}, T: types.BoolT}
	}
	var oids []int64
	var defs []ir.Expr
	var whens []ir.When
	for _, e := range PgClassEntries(b.cat) {
		if e.Kind != "i" {
			continue
		}
		oids, defs = append(oids, e.OID), append(defs, textConst(e.IndexDef()))
		cols, _ := e.IndexColumns()
		if e.Index != nil {
			cols = append(append([]int(nil), cols...), e.Index.Include...)
		}
		for k, c := range cols {
			cond := &ir.Call{Fn: ir.FnAnd, Args: []ir.Expr{eqInt(o, e.OID), eq4(col, k+1)}, T: types.BoolT}
			whens = append(whens, ir.When{Cond: cond, Then: textConst(QuoteIdent(e.Rel.Columns[c].Name))})
		}
	}
	whole := oidCase(o, types.TextT, oids, defs, nullOf(types.TextT))
	whens = append([]ir.When{{Cond: eq4(col, 0), Then: whole}}, whens...)
	return &ir.Case{Whens: whens, Else: nullOf(types.TextT), T: types.TextT}, true, nil
}

// bindFormatType binds format_type(type oid, typmod).
func (b *binder) bindFormatType(args []ir.Expr, loc int32) (ir.Expr, bool, error) {
	o, err := b.coerce(args[0], types.Int64T, loc)
	if err != nil {
		return nil, true, err
	}
	mod, err := b.coerce(args[1], types.Int32T, loc)
	if err != nil {
		return nil, true, err
	}
	i4 := func(n int64) ir.Expr { return &ir.Const{Value: types.DInt(n), T: types.Int32T} }
	call := func(fn string, t types.T, a ...ir.Expr) ir.Expr { return &ir.Call{Fn: fn, Args: a, T: t} }
	noMod := call(ir.FnOr, types.BoolT, call(ir.FnIsNull, types.BoolT, mod), call(ir.FnLt, types.BoolT, mod, i4(0)))
	str := func(e ir.Expr) ir.Expr { return &ir.Cast{Arg: e, T: types.TextT} }
	cat := func(parts ...ir.Expr) ir.Expr {
		e := parts[0]
		for _, p := range parts[1:] {
			e = call(ir.FnConcatOp, types.TextT, e, p)
		}
		return e
	}
	var oids []int64
	var names []ir.Expr
	for _, t := range PgTypes {
		oids = append(oids, t.OID)
		var withMod ir.Expr
		switch t.OID {
		case types.OIDVarchar, types.OIDBpchar:
			withMod = cat(textConst(t.Display+"("), str(call(ir.FnSub, types.Int32T, mod, i4(4))), textConst(")"))
		case types.OIDNumeric:
			m := call(ir.FnSub, types.Int32T, mod, i4(4))
			withMod = cat(textConst("numeric("), str(call(ir.FnDiv, types.Int32T, m, i4(65536))), textConst(","),
				str(call(ir.FnMod, types.Int32T, m, i4(65536))), textConst(")"))
		}
		if withMod == nil {
			names = append(names, textConst(t.Display))
			continue
		}
		names = append(names, &ir.Case{Whens: []ir.When{{Cond: noMod, Then: textConst(t.Display)}}, Else: withMod, T: types.TextT})
	}
	unknown := &ir.Case{Whens: []ir.When{{Cond: call(ir.FnIsNull, types.BoolT, o), Then: nullOf(types.TextT)}}, Else: textConst("???"), T: types.TextT}
	return oidCase(o, types.TextT, oids, names, unknown), true, nil
}

// bindCurrentSchemas binds current_schemas(include_implicit): the schemas
// of the search path that exist, pg_catalog first when implicit ones count.
func (b *binder) bindCurrentSchemas(args []ir.Expr, loc int32) (ir.Expr, bool, error) {
	c, ok := args[0].(*ir.Const)
	if !ok {
		return nil, true, b.errAt(loc, sqlerr.Unsupported("current_schemas of a non-constant argument"))
	}
	implicit := !c.Value.Null && (c.Value.Bool() || c.T.Kind == types.Unknown && strings.HasPrefix(strings.ToLower(c.Value.S), "t"))
	path := b.path
	if path == nil {
		path = []string{catalog.Public}
	}
	var elems []types.Datum
	if implicit {
		has := false
		for _, s := range path {
			has = has || s == catalog.PgCatalog
		}
		if !has {
			elems = append(elems, types.DText(catalog.PgCatalog))
		}
	}
	for _, s := range path {
		if b.cat.Schema(s) != nil {
			elems = append(elems, types.DText(s))
		}
	}
	return &ir.Const{Value: types.DArray(elems), T: types.ArrayOf(types.TextT)}, true, nil
}

func constText(e ir.Expr) (string, bool) {
	c, ok := e.(*ir.Const)
	if !ok || c.Value.Null || c.T.Kind != types.Text && c.T.Kind != types.Unknown {
		return "", false
	}
	return c.Value.S, true
}

// bindSignalBackend binds pg_cancel_backend(pid) and
// pg_terminate_backend(pid [, timeout]): like set_config, the signal is
// sent when the statement is bound for execution, and the call becomes
// whether a session was signalled. Preparing the statement sends nothing.
// The pid must be a constant or a parameter; the timeout is not waited on.
func (b *binder) bindSignalBackend(terminate bool, args []ir.Expr, loc int32) (ir.Expr, bool, error) {
	name := "pg_cancel_backend"
	if terminate {
		name = "pg_terminate_backend"
	}
	if b.params != nil && !b.params.exec {
		if _, err := b.coerce(args[0], types.Int32T, loc); err != nil {
			return nil, true, err
		}
		return &ir.Const{Value: types.Datum{Null: true}, T: types.BoolT}, true, nil
	}
	c, ok := args[0].(*ir.Const)
	if !ok || c.T.Kind != types.Int16 && c.T.Kind != types.Int32 && c.T.Kind != types.Int64 && c.T.Kind != types.Unknown {
		if e, err := b.coerce(args[0], types.Int32T, loc); err == nil {
			c, ok = e.(*ir.Const)
		}
	}
	if !ok {
		return nil, true, b.errAt(loc, sqlerr.Unsupported("%s of a non-constant pid", name))
	}
	if c.Value.Null {
		return &ir.Const{Value: types.Datum{Null: true}, T: types.BoolT}, true, nil
	}
	pid := c.Value.I
	if c.T.Kind == types.Unknown {
		n, err := strconv.ParseInt(strings.TrimSpace(c.Value.S), 10, 32)
		if err != nil {
			return nil, true, b.errAt(loc, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type integer: \"%s\"", c.Value.S))
		}
		pid = n
	}
	if b.session == nil {
		return nil, true, b.errAt(loc, sqlerr.Unsupported("%s outside a session", name))
	}
	signalled, err := b.session.SignalBackend(int32(pid), terminate)
	if err != nil {
		if se, ok := err.(*sqlerr.Error); ok {
			return nil, true, b.errAt(loc, se)
		}
		return nil, true, err
	}
	return &ir.Const{Value: types.DBool(signalled), T: types.BoolT}, true, nil
}

// bindCurrentSetting binds current_setting(name [, missing_ok]) to the
// setting's value when the statement is bound.
func (b *binder) bindCurrentSetting(args []ir.Expr, loc int32) (ir.Expr, bool, error) {
	name, ok := constText(args[0])
	if !ok {
		return nil, true, b.errAt(loc, sqlerr.Unsupported("current_setting of a non-constant name"))
	}
	missingOK := false
	if len(args) == 2 {
		c, ok := args[1].(*ir.Const)
		missingOK = ok && !c.Value.Null && (c.T.Kind == types.Bool && c.Value.Bool() || c.T.Kind == types.Unknown && strings.HasPrefix(strings.ToLower(c.Value.S), "t"))
	}
	if b.session == nil {
		return nil, true, b.errAt(loc, sqlerr.Unsupported("current_setting outside a session"))
	}
	v, ok := b.session.Setting(strings.ToLower(name))
	if !ok {
		if missingOK {
			return nullOf(types.TextT), true, nil
		}
		return nil, true, b.errAt(loc, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter \"%s\"", name))
	}
	return textConst(v), true, nil
}

// bindSetConfig binds set_config(name, value, is_local): the parameter is
// set when the statement is bound, and the call is the new value.
func (b *binder) bindSetConfig(args []ir.Expr, loc int32) (ir.Expr, bool, error) {
	name, ok1 := constText(args[0])
	value, ok2 := constText(args[1])
	local, ok3 := args[2].(*ir.Const)
	if !ok1 || !ok2 || !ok3 {
		// Settings change when the statement is bound: a call over rows
		// fails when it is evaluated (a query that finds no row, as
		// pg_dump's over pg_settings, succeeds).
		var err error
		if args[0], err = b.coerce(args[0], types.TextT, loc); err == nil {
			if args[1], err = b.coerce(args[1], types.TextT, loc); err == nil {
				args[2], err = b.coerce(args[2], types.BoolT, loc)
			}
		}
		return &ir.Call{Fn: ir.FnSetConfigRows, Args: args, T: types.TextT}, true, err
	}
	if b.session == nil {
		return nil, true, b.errAt(loc, sqlerr.Unsupported("set_config outside a session"))
	}
	isLocal := !local.Value.Null && (local.T.Kind == types.Bool && local.Value.Bool() || local.T.Kind == types.Unknown && strings.HasPrefix(strings.ToLower(local.Value.S), "t"))
	if err := b.session.SetSetting(strings.ToLower(name), value, isLocal); err != nil {
		if se, ok := err.(*sqlerr.Error); ok {
			return nil, true, b.errAt(loc, se)
		}
		return nil, true, err
	}
	v, _ := b.session.Setting(strings.ToLower(name))
	return textConst(v), true, nil
}

// bindCollate binds expr COLLATE name: streamsql compares text by bytes,
// which is the C collation; "default", "C" and "POSIX" are accepted as it.
func (b *binder) bindCollate(ctx *exprCtx, cc *pg_query.CollateClause) (ir.Expr, error) {
	var parts []string
	for _, n := range cc.Collname {
		if s, ok := n.Node.(*pg_query.Node_String_); ok {
			parts = append(parts, s.String_.Sval)
		}
	}
	name := strings.Join(parts, ".")
	switch strings.TrimPrefix(name, "pg_catalog.") {
	case "default", "C", "POSIX", "ucs_basic":
	default:
		return nil, b.errAt(cc.Location, sqlerr.New(sqlerr.UndefinedObject, "collation \"%s\" for encoding \"UTF8\" does not exist", name))
	}
	e, err := b.bindExpr(ctx, cc.Arg)
	if err != nil {
		return nil, err
	}
	if t := e.Type().Kind; t != types.Text && t != types.Unknown {
		return nil, b.errAt(cc.Location, sqlerr.New(sqlerr.DatatypeMismatch, "collations are not supported by type %s", e.Type()))
	}
	return e, nil
}

// LockTable is LOCK [TABLE] name [, ...] [IN mode MODE] [NOWAIT]: accepted
// inside a transaction block, where it waits for nothing (every statement
// reads a committed snapshot and writes do not conflict with reads).
type LockTable struct{}

func (*LockTable) Tag() string { return "LOCK TABLE" }

func (b *binder) bindLock(s *pg_query.LockStmt) (ir.Statement, error) {
	for _, n := range s.Relations {
		if rv := n.GetRangeVar(); rv != nil {
			if _, err := b.lookup(rv); err != nil {
				return nil, err
			}
		}
	}
	return &LockTable{}, nil
}

// bindOptionsToTable binds pg_options_to_table(options) in FROM: the
// name=value entries of an options array (reloptions, ...) as rows of
// option_name and option_value.
func (b *binder) bindOptionsToTable(rf *pg_query.RangeFunction, f *pg_query.FuncCall) (ir.Rel, *scope, error) {
	if len(f.Args) != 1 || rf.Lateral || rf.Ordinality || rf.IsRowsfrom || len(rf.Functions) != 1 {
		return nil, nil, sqlerr.Unsupported("this form of pg_options_to_table")
	}
	arg, err := b.bindExpr(&exprCtx{scope: &scope{}, clause: "FROM"}, f.Args[0])
	if err != nil {
		return nil, nil, err
	}
	if arg, err = b.coerce(arg, types.ArrayOf(types.TextT), f.Location); err != nil {
		return nil, nil, err
	}
	one := &ir.Values{Rows: [][]ir.Expr{{}}}
	u := ir.NewUnnest(one, []ir.Expr{arg}, []string{"option"}, "ordinality", false)
	opt := &ir.InputRef{Index: 0, T: types.TextT, Name: "option"}
	i4 := func(n int64) ir.Expr { return &ir.Const{Value: types.DInt(n), T: types.Int32T} }
	eq := &ir.Call{Fn: ir.FnStrpos, Args: []ir.Expr{opt, textConst("=")}, T: types.Int32T}
	name := &ir.Call{Fn: ir.FnSplitPart, Args: []ir.Expr{opt, textConst("="), i4(1)}, T: types.TextT}
	value := &ir.Call{Fn: ir.FnSubstr, Args: []ir.Expr{opt, &ir.Call{Fn: ir.FnAdd, Args: []ir.Expr{eq, i4(1)}, T: types.Int32T}}, T: types.TextT}
	cols := []ir.Column{{Name: "option_name", Type: types.TextT}, {Name: "option_value", Type: types.TextT}}
	p := &ir.Project{Input: u, Exprs: []ir.Expr{name, value}, Cols: cols}
	alias := "pg_options_to_table"
	var colAliases []*pg_query.Node
	if rf.Alias != nil {
		alias, colAliases = rf.Alias.Aliasname, rf.Alias.Colnames
	}
	sc := derivedScope(p, alias)
	if err := applyColumnAliases(sc, colAliases); err != nil {
		return nil, nil, b.errAt(f.Location, err.(*sqlerr.Error))
	}
	return p, sc, nil
}

// bindNameSubscript binds name[i] over a text value: the character at
// 0-based position i, as PostgreSQL's name type (which streamsql's name
// columns stand for) is subscripted. ok is false for other subscripts.
func (b *binder) bindNameSubscript(ctx *exprCtx, e ir.Expr, idx *pg_query.A_Indices, loc int32) (ir.Expr, bool, error) {
	if e.Type().Kind != types.Text || idx.IsSlice || idx.Uidx == nil {
		return nil, false, nil
	}
	i, err := b.bindExpr(ctx, idx.Uidx)
	if err != nil {
		return nil, true, err
	}
	if i, err = b.coerce(i, types.Int32T, loc); err != nil {
		return nil, true, err
	}
	i4 := func(n int64) ir.Expr { return &ir.Const{Value: types.DInt(n), T: types.Int32T} }
	from := &ir.Call{Fn: ir.FnAdd, Args: []ir.Expr{i, i4(1)}, T: types.Int32T}
	return &ir.Call{Fn: ir.FnSubstr, Args: []ir.Expr{e, from, i4(1)}, T: types.TextT}, true, nil
}

// bindUserValue binds CURRENT_USER, SESSION_USER, USER and CURRENT_ROLE.
func (b *binder) bindUserValue(op pg_query.SQLValueFunctionOp) (ir.Expr, bool) {
	switch op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER, pg_query.SQLValueFunctionOp_SVFOP_USER, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		return textConst(b.user()), true
	case pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return textConst(b.sessionUser()), true
	}
	return nil, false
}

// bindDescription binds obj_description(oid [, catalog]) and
// col_description(oid, attnum) over the comments of the catalog
// (Descriptions): a CASE on the object (and column number). The catalog
// name of obj_description is not checked: relation and schema OIDs differ.
func (b *binder) bindDescription(name string, args []ir.Expr, loc int32) (ir.Expr, bool, error) {
	o, err := b.coerce(args[0], types.Int64T, loc)
	if err != nil {
		return nil, true, err
	}
	var sub ir.Expr
	if name == "col_description" {
		if sub, err = b.coerce(args[1], types.Int64T, loc); err != nil {
			return nil, true, err
		}
	}
	var whens []ir.When
	for _, d := range Descriptions(b.cat) {
		if (sub == nil) != (d.SubID == 0) {
			continue
		}
		cond := eqInt(o, d.OID)
		if sub != nil {
			cond = &ir.Call{Fn: ir.FnAnd, Args: []ir.Expr{cond, eqInt(sub, d.SubID)}, T: types.BoolT}
		}
		whens = append(whens, ir.When{Cond: cond, Then: textConst(d.Text)})
	}
	if len(whens) == 0 {
		return nullOf(types.TextT), true, nil
	}
	return &ir.Case{Whens: whens, Else: nullOf(types.TextT), T: types.TextT}, true, nil
}
