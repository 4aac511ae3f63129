package sql

import (
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// The privilege inquiry functions has_table_privilege,
// has_column_privilege, has_schema_privilege, has_database_privilege and
// has_function_privilege, as clients call them over catalog rows:
//
//	SELECT relname FROM pg_class WHERE has_table_privilege(oid, 'SELECT')
//
// The object argument is a name (text) or an OID, a constant or a column;
// the user argument, when given, and the privilege list are constants. The
// answers are computed where the statement is bound, from the session's
// PrivilegeChecker, for every object of the kind the catalog holds: a
// constant object gives a constant, an object column the vectorized
// CASE WHEN x IN (held) THEN true WHEN x IN (others) THEN false END,
// NULL for an OID that names no object (as in PostgreSQL). A name that
// names no object is an error for a constant (42P01, 3F000, 3D000,
// 42883) and NULL in a column.

// PrivilegeObject is the object has_*_privilege asks about: a relation
// (Column, if set, one of its columns), a schema or a database.
type PrivilegeObject struct {
	Rel    *catalog.Relation
	Column string
	// AnyColumn asks about any column of Rel (has_any_column_privilege).
	AnyColumn bool
	Schema    string
	Database  string
}

// PrivilegeChecker is a Session that knows the roles' privileges, so that
// the has_*_privilege functions answer from them.
type PrivilegeChecker interface {
	// HasPrivilege reports whether the role named user holds every
	// privilege of privs on obj. known is false when user names no role.
	HasPrivilege(user string, obj PrivilegeObject, privs catalog.Privileges) (held, known bool)
}

// privilegeFunc describes one has_*_privilege function.
type privilegeFunc struct {
	// allowed are the privileges the function takes.
	allowed catalog.Privileges
	// objects lists the candidate objects; missing is the error for a
	// constant name that names none of them.
	objects func(b *binder) []privilegeCandidate
	missing func(name string) *sqlerr.Error
	// column: the function takes a column argument after the object.
	column bool
	// builtin reports whether a constant name that names no candidate is a
	// built-in object every role may use (functions).
	builtin func(name string) bool
}

// privilegeCandidate is an object the function may be asked about: its OID
// and the names that spell it.
type privilegeCandidate struct {
	oid   int64
	names []string
	obj   PrivilegeObject
	// always marks objects every role may use (functions: EXECUTE is
	// granted to PUBLIC and cannot be revoked in streamsql).
	always bool
}

var privilegeFuncs = map[string]privilegeFunc{
	"has_table_privilege": {allowed: catalog.RelationPrivileges, objects: relationCandidates,
		missing: doesNotExist(sqlerr.UndefinedTable, "relation")},
	"has_column_privilege": {allowed: catalog.PrivSelect | catalog.PrivInsert | catalog.PrivUpdate | catalog.PrivReferences,
		objects: relationCandidates, column: true,
		missing: doesNotExist(sqlerr.UndefinedTable, "relation")},
	"has_any_column_privilege": {allowed: catalog.ColumnPrivileges, objects: anyColumnCandidates,
		missing: doesNotExist(sqlerr.UndefinedTable, "relation")},
	"has_schema_privilege": {allowed: catalog.SchemaPrivileges, objects: schemaCandidates,
		missing: doesNotExist(sqlerr.InvalidSchemaName, "schema")},
	"has_database_privilege": {allowed: catalog.DatabasePrivileges, objects: databaseCandidates,
		missing: doesNotExist(sqlerr.InvalidCatalogName, "database")},
	"has_function_privilege": {allowed: catalog.PrivExecute, objects: functionCandidates, builtin: isBuiltinFunction,
		missing: doesNotExist(sqlerr.UndefinedFunction, "function")},
}

// anyColumnCandidates are the relations, asked about any of their columns.
func anyColumnCandidates(b *binder) []privilegeCandidate {
	out := relationCandidates(b)
	for i := range out {
		out[i].obj.AnyColumn = true
	}
	return out
}

// doesNotExist is the error for a name that names no object of a kind.
func doesNotExist(code, kind string) func(string) *sqlerr.Error {
	return func(name string) *sqlerr.Error {
		return sqlerr.New(code, "%s \"%s\" does not exist", kind, name)
	}
}

// bindPrivilegeFunc binds a call of a has_*_privilege function of
// privilegeFuncs. ok is false when the session checks no privileges (the
// caller then answers true).
func (b *binder) bindPrivilegeFunc(name string, args []ir.Expr, loc int32) (ir.Expr, bool, error) {
	pf := privilegeFuncs[name]
	pc, ok := b.session.(PrivilegeChecker)
	if !ok {
		return nil, false, nil
	}
	nargs := 2
	if pf.column {
		nargs = 3
	}
	user, explicitUser := b.user(), len(args) > nargs
	if explicitUser {
		u, err := b.privilegeConst(name, "user", args[0], loc)
		if err != nil {
			return nil, true, err
		}
		user, args = u, args[1:]
	}
	spec, err := b.privilegeConst(name, "privilege", args[len(args)-1], loc)
	if err != nil {
		return nil, true, err
	}
	privs, perr := parsePrivileges(spec, pf.allowed)
	if perr != nil {
		return nil, true, b.errAt(loc, perr)
	}
	cands := pf.objects(b)
	held := make([]bool, len(cands))
	for i, c := range cands {
		if c.always {
			held[i] = true
			continue
		}
		h, known := pc.HasPrivilege(user, c.obj, privs)
		if !known {
			if explicitUser {
				return nil, true, b.errAt(loc, sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", user))
			}
			h = true // a session user that is no role has a superuser's rights
		}
		held[i] = h
	}
	obj := args[0]
	if c, isConst := obj.(*ir.Const); isConst {
		e, cerr := b.privilegeOfConst(pf, pc, user, privs, c, cands, held, args[1:len(args)-1])
		if cerr != nil {
			return nil, true, b.errAt(loc, cerr)
		}
		return e, true, nil
	}
	e, err := b.privilegeOfColumn(obj, cands, held, loc)
	return e, true, err
}

// privilegeConst reads the constant text argument what of fn.
func (b *binder) privilegeConst(fn, what string, e ir.Expr, loc int32) (string, error) {
	c, ok := e.(*ir.Const)
	if !ok || c.Value.Null || (c.T.Kind != types.Text && c.T.Kind != types.Unknown) {
		return "", b.errAt(loc, sqlerr.Unsupported("%s with a %s argument that is not a text constant", fn, what))
	}
	return c.Value.S, nil
}

// privilegeOfConst answers for a constant object c. For has_column_privilege
// col holds the column argument; a constant column name must exist.
func (b *binder) privilegeOfConst(pf privilegeFunc, pc PrivilegeChecker, user string, privs catalog.Privileges,
	c *ir.Const, cands []privilegeCandidate, held []bool, col []ir.Expr) (ir.Expr, *sqlerr.Error) {
	boolConst := func(v bool) ir.Expr { return &ir.Const{Value: types.DBool(v), T: types.BoolT} }
	if c.Value.Null {
		return &ir.Const{Value: types.Null, T: types.BoolT}, nil
	}
	byName := c.T.Kind == types.Text || c.T.Kind == types.Unknown
	for i, cand := range cands {
		if byName && !cand.spelledAs(b.normalizeObjectName(c.Value.S)) || !byName && cand.oid != c.Value.I {
			continue
		}
		if len(col) == 1 {
			if cc, ok := col[0].(*ir.Const); ok && (cc.T.Kind == types.Text || cc.T.Kind == types.Unknown) && !cc.Value.Null {
				if ci := cand.obj.Rel.ColumnIndex(cc.Value.S); ci < 0 || cand.obj.Rel.Columns[ci].Hidden {
					return nil, sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", cc.Value.S, cand.obj.Rel.Name)
				}
				obj := cand.obj
				obj.Column = cc.Value.S
				h, known := pc.HasPrivilege(user, obj, privs)
				return boolConst(h || !known), nil
			}
		}
		return boolConst(held[i]), nil
	}
	if byName && pf.builtin != nil && pf.builtin(b.normalizeObjectName(c.Value.S)) {
		return boolConst(true), nil
	}
	if byName {
		return nil, pf.missing(c.Value.S)
	}
	return &ir.Const{Value: types.Null, T: types.BoolT}, nil
}

// privilegeOfColumn answers for an object column x, by name (text) or OID.
func (b *binder) privilegeOfColumn(x ir.Expr, cands []privilegeCandidate, held []bool, loc int32) (ir.Expr, error) {
	var yes, no []ir.Expr
	if x.Type().Kind == types.Text {
		for i, c := range cands {
			for _, n := range c.names {
				k := &ir.Const{Value: types.DText(n), T: types.TextT}
				if held[i] {
					yes = append(yes, k)
				} else {
					no = append(no, k)
				}
			}
		}
	} else {
		var err error
		if x, err = b.coerce(x, types.Int64T, loc); err != nil {
			return nil, err
		}
		for i, c := range cands {
			k := &ir.Const{Value: types.DInt(c.oid), T: types.Int64T}
			if held[i] {
				yes = append(yes, k)
			} else {
				no = append(no, k)
			}
		}
	}
	out := &ir.Case{T: types.BoolT, Else: &ir.Const{Value: types.Null, T: types.BoolT}}
	if len(yes) > 0 {
		out.Whens = append(out.Whens, ir.When{Cond: &ir.InList{Arg: x, List: yes}, Then: &ir.Const{Value: types.DBool(true), T: types.BoolT}})
	}
	if len(no) > 0 {
		out.Whens = append(out.Whens, ir.When{Cond: &ir.InList{Arg: x, List: no}, Then: &ir.Const{Value: types.DBool(false), T: types.BoolT}})
	}
	if len(out.Whens) == 0 {
		return out.Else, nil
	}
	return out, nil
}

// spelledAs reports whether one of c's names is name.
func (c privilegeCandidate) spelledAs(name string) bool {
	for _, n := range c.names {
		if n == name {
			return true
		}
	}
	return false
}

// normalizeObjectName folds the unquoted parts of a (qualified) object name
// to lower case and drops the quotes of the others, as PostgreSQL reads a
// regclass: MyTable is mytable, "MyTable" is MyTable. A function's
// argument list is spelled with the types' names.
func (b *binder) normalizeObjectName(s string) string {
	s = strings.TrimSpace(s)
	args := ""
	if i := strings.IndexByte(s, '('); i >= 0 && strings.HasSuffix(s, ")") {
		s, args = strings.TrimSpace(s[:i]), normalizeArgTypes(s[i+1:len(s)-1])
	}
	var parts []string
	for _, p := range splitNameParts(s) {
		if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
			parts = append(parts, strings.ReplaceAll(p[1:len(p)-1], `""`, `"`))
		} else {
			parts = append(parts, catalog.NormalizeName(p))
		}
	}
	return strings.Join(parts, ".") + args
}

// splitNameParts splits a name at the dots outside double quotes.
func splitNameParts(s string) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case '.':
			if !quoted {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// normalizeArgTypes spells a function's argument type list as
// functionSignature does: "(integer,text)".
func normalizeArgTypes(list string) string {
	var ts []string
	for _, a := range strings.Split(list, ",") {
		a = strings.ToLower(strings.TrimSpace(a))
		if a == "" {
			continue
		}
		if t, ok := types.FromName(a, nil); ok {
			a = t.String()
		}
		ts = append(ts, a)
	}
	return "(" + strings.Join(ts, ",") + ")"
}

// functionSignature is name(type,...) for f's argument types.
func functionSignature(name string, args []types.T) string {
	ts := make([]string, len(args))
	for i, t := range args {
		ts[i] = types.WithoutTypmod(t).String()
	}
	return name + "(" + strings.Join(ts, ",") + ")"
}

// relationCandidates are the relations of pg_class, by OID, qualified
// name and, when the search path finds them, unqualified name.
func relationCandidates(b *binder) []privilegeCandidate {
	var out []privilegeCandidate
	for _, e := range PgClassEntries(b.cat) {
		if e.Rel == nil {
			continue
		}
		names := []string{e.Schema + "." + e.Name}
		if e.Index == nil && !e.PrimaryKey && b.cat.Resolve(b.path, e.Name) == e.Rel {
			names = append(names, e.Name)
		}
		out = append(out, privilegeCandidate{oid: e.OID, names: names, obj: PrivilegeObject{Rel: e.Rel}})
	}
	return out
}

func schemaCandidates(b *binder) []privilegeCandidate {
	var out []privilegeCandidate
	for _, s := range b.cat.Schemas() {
		out = append(out, privilegeCandidate{oid: s.OID(), names: []string{s.Name}, obj: PrivilegeObject{Schema: s.Name}})
	}
	return out
}

func databaseCandidates(b *binder) []privilegeCandidate {
	var out []privilegeCandidate
	for _, d := range b.cat.Databases() {
		out = append(out, privilegeCandidate{oid: d.OID(), names: []string{d.Name}, obj: PrivilegeObject{Database: d.Name}})
	}
	return out
}

// isBuiltinFunction reports whether name (normalized, maybe with its
// argument types) names a built-in function, whose EXECUTE privilege
// belongs to PUBLIC.
func isBuiltinFunction(name string) bool {
	if i := strings.IndexByte(name, '('); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimPrefix(name, "pg_catalog.")
	_, catalogFn := catalogFuncs[name]
	return len(ir.FunctionOverloads(name)) > 0 || ir.IsArrayFunction(name) || catalogFn || ir.AggregateNames[name]
}

// functionCandidates are the user functions of pg_proc, by OID and by
// name, qualified or not, with or without the argument types.
func functionCandidates(b *binder) []privilegeCandidate {
	var out []privilegeCandidate
	for _, f := range b.cat.Functions() {
		names := []string{f.Name, f.Schema + "." + f.Name,
			functionSignature(f.Name, f.ArgTypes), functionSignature(f.Schema+"."+f.Name, f.ArgTypes)}
		out = append(out, privilegeCandidate{oid: f.OID(), names: names, always: true})
	}
	return out
}

// parsePrivileges reads a privilege list as the has_*_privilege functions
// take it ("SELECT", "select, insert", "UPDATE WITH GRANT OPTION"): each
// must be one of allowed (22023 otherwise).
func parsePrivileges(s string, allowed catalog.Privileges) (catalog.Privileges, *sqlerr.Error) {
	var privs catalog.Privileges
	for _, part := range strings.Split(s, ",") {
		word := strings.TrimSpace(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(part)), "WITH GRANT OPTION"))
		p, ok := catalog.ParsePrivilege(word)
		if !ok || p&allowed == 0 {
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized privilege type: \"%s\"", strings.TrimSpace(part))
		}
		privs |= p
	}
	return privs, nil
}

// RoleInfo is a Session that knows the roles, for ::regrole and
// pg_has_role.
type RoleInfo interface {
	// RoleOIDs lists every role with the OID pg_catalog gives it.
	RoleOIDs() []RoleOID
	// HasRole answers pg_has_role: whether the role named user is the
	// role named role or a member of it, directly or not (mode "MEMBER");
	// only as far as the members inherit privileges ("USAGE"); or may
	// administer it ("ADMIN": superusers). known is false when either
	// names no role.
	HasRole(user, role, mode string) (held, known bool)
}

// RoleOID is a role's name and OID.
type RoleOID struct {
	OID  int64
	Name string
}

// bindPgHasRole binds pg_has_role([user,] role, privilege) with constant
// text arguments (MEMBER, USAGE; MEMBER WITH ADMIN OPTION is held by
// superusers only). ok is false when the session knows no roles or an
// argument is not a text constant.
func (b *binder) bindPgHasRole(args []ir.Expr, loc int32) (ir.Expr, bool, error) {
	ri, ok := b.session.(RoleInfo)
	if !ok || len(args) < 2 || len(args) > 3 {
		return nil, false, nil
	}
	var texts []string
	for _, a := range args {
		c, isConst := a.(*ir.Const)
		if !isConst || c.Value.Null || c.T.Kind != types.Text && c.T.Kind != types.Unknown {
			return nil, false, nil
		}
		texts = append(texts, c.Value.S)
	}
	user := b.user()
	if len(texts) == 3 {
		user, texts = texts[0], texts[1:]
	}
	role, mode := texts[0], strings.ToUpper(strings.TrimSpace(texts[1]))
	switch mode {
	case "MEMBER", "USAGE":
	case "MEMBER WITH ADMIN OPTION", "USAGE WITH ADMIN OPTION", "MEMBER WITH GRANT OPTION", "USAGE WITH GRANT OPTION":
		mode = "ADMIN"
	default:
		return nil, true, b.errAt(loc, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized privilege type: \"%s\"", texts[1]))
	}
	held, known := ri.HasRole(user, role, mode)
	if !known {
		return nil, true, b.errAt(loc, sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", role))
	}
	return &ir.Const{Value: types.DBool(held), T: types.BoolT}, true, nil
}
