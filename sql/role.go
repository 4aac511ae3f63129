package sql

import (
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// RoleOptions are the options of CREATE ROLE and ALTER ROLE; a nil field
// was not given.
type RoleOptions struct {
	Superuser, Login, CreateRole, CreateDB *bool
	// Inherit is INHERIT / NOINHERIT.
	Inherit *bool
	// Password is the new password (PASSWORD 'x'); ClearPassword is
	// PASSWORD NULL.
	Password      *string
	ClearPassword bool
	// InRoles are the roles the new role joins (IN ROLE), Members the roles
	// that join it (ROLE / USER).
	InRoles, Members []string
}

// CreateRole is CREATE ROLE, CREATE USER (LOGIN by default) or CREATE GROUP.
type CreateRole struct {
	Name    string
	Options RoleOptions
}

func (*CreateRole) Tag() string { return "CREATE ROLE" }

// AlterRole is ALTER ROLE / ALTER USER name [WITH] options.
type AlterRole struct {
	Name    string // "" with Current: CURRENT_USER / SESSION_USER
	Current bool
	Options RoleOptions
}

func (*AlterRole) Tag() string { return "ALTER ROLE" }

// DropRole is DROP ROLE / DROP USER [IF EXISTS] names.
type DropRole struct {
	Names    []string
	IfExists bool
}

func (*DropRole) Tag() string { return "DROP ROLE" }

// GrantTarget is what a GRANT or REVOKE is on: relations (tables, views,
// sources), every relation of some schemas, schemas, or databases.
type GrantTarget struct {
	Kind catalog.ObjectKind
	// Relations are the named relations (Kind ObjRelation without
	// AllInSchema).
	Relations []*catalog.Relation
	// Names are the schemas (Kind ObjSchema, or ObjRelation with
	// AllInSchema) or databases (ObjDatabase).
	Names       []string
	AllInSchema bool
}

// Grant is GRANT privileges ON target TO grantees, or REVOKE (Revoke).
// Grantees are role names; "public" is PUBLIC.
type Grant struct {
	Revoke bool
	// Privs are the privileges on the target objects themselves; Columns
	// those on columns of the target relations (GRANT SELECT (a) ON t).
	Privs    catalog.Privileges
	Columns  []ColumnPrivileges
	Target   GrantTarget
	Grantees []string
	// GrantOption is WITH GRANT OPTION of a GRANT, GRANT OPTION FOR of a
	// REVOKE (which then takes back the grant option only).
	GrantOption bool
	// Cascade is REVOKE ... CASCADE: what the grantees granted with the
	// grant options they lose is revoked too.
	Cascade bool
}

func (g *Grant) Tag() string {
	if g.Revoke {
		return "REVOKE"
	}
	return "GRANT"
}

// ColumnPrivileges are privileges on the column named Column of every
// relation of a GRANT or REVOKE.
type ColumnPrivileges struct {
	Column string
	Privs  catalog.Privileges
}

// GrantRole is GRANT roles TO members, or REVOKE roles FROM members.
type GrantRole struct {
	Revoke  bool
	Roles   []string
	Members []string
}

func (g *GrantRole) Tag() string {
	if g.Revoke {
		return "REVOKE ROLE"
	}
	return "GRANT ROLE"
}

// bindRoleStatement binds the statements of roles and privileges; ok is
// false for any other statement.
func (b *binder) bindRoleStatement(n *pg_query.Node) (st ir.Statement, ok bool, err error) {
	switch s := n.Node.(type) {
	case *pg_query.Node_CreateRoleStmt:
		st, err = b.bindCreateRole(s.CreateRoleStmt)
	case *pg_query.Node_AlterRoleStmt:
		st, err = b.bindAlterRole(s.AlterRoleStmt)
	case *pg_query.Node_DropRoleStmt:
		st, err = b.bindDropRole(s.DropRoleStmt)
	case *pg_query.Node_GrantStmt:
		st, err = b.bindGrant(s.GrantStmt)
	case *pg_query.Node_GrantRoleStmt:
		st, err = b.bindGrantRole(s.GrantRoleStmt)
	default:
		return nil, false, nil
	}
	return st, true, err
}

func (b *binder) bindCreateRole(s *pg_query.CreateRoleStmt) (ir.Statement, error) {
	st := &CreateRole{Name: s.Role}
	if err := b.roleOptions(s.Options, &st.Options); err != nil {
		return nil, err
	}
	if s.StmtType == pg_query.RoleStmtType_ROLESTMT_USER && st.Options.Login == nil {
		login := true
		st.Options.Login = &login
	}
	if strings.EqualFold(s.Role, "public") || strings.HasPrefix(s.Role, "pg_") {
		return nil, sqlerr.New(sqlerr.ReservedName, "role name \"%s\" is reserved", s.Role)
	}
	return st, nil
}

func (b *binder) bindAlterRole(s *pg_query.AlterRoleStmt) (ir.Statement, error) {
	st := &AlterRole{}
	switch s.Role.Roletype {
	case pg_query.RoleSpecType_ROLESPEC_CSTRING:
		st.Name = s.Role.Rolename
	case pg_query.RoleSpecType_ROLESPEC_CURRENT_USER, pg_query.RoleSpecType_ROLESPEC_SESSION_USER, pg_query.RoleSpecType_ROLESPEC_CURRENT_ROLE:
		st.Current = true
	default:
		return nil, b.errAt(s.Role.Location, sqlerr.New(sqlerr.SyntaxError, "cannot alter PUBLIC"))
	}
	if err := b.roleOptions(s.Options, &st.Options); err != nil {
		return nil, err
	}
	return st, nil
}

func (b *binder) bindDropRole(s *pg_query.DropRoleStmt) (ir.Statement, error) {
	st := &DropRole{IfExists: s.MissingOk}
	for _, r := range s.Roles {
		spec := r.GetRoleSpec()
		if spec == nil || spec.Roletype != pg_query.RoleSpecType_ROLESPEC_CSTRING {
			return nil, sqlerr.New(sqlerr.SyntaxError, "cannot use special role specifier in DROP ROLE")
		}
		st.Names = append(st.Names, spec.Rolename)
	}
	return st, nil
}

// roleOptions reads CREATE/ALTER ROLE options into o.
func (b *binder) roleOptions(opts []*pg_query.Node, o *RoleOptions) error {
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		flag := func(p **bool) { v := defElemBool(d); *p = &v }
		switch d.Defname {
		case "superuser":
			flag(&o.Superuser)
		case "canlogin":
			flag(&o.Login)
		case "createrole":
			flag(&o.CreateRole)
		case "createdb":
			flag(&o.CreateDB)
		case "password":
			if d.Arg == nil {
				o.ClearPassword = true
			} else if s := d.Arg.GetString_(); s != nil {
				o.Password = &s.Sval
			}
		case "addroleto":
			o.InRoles = append(o.InRoles, roleNames(d.Arg)...)
		case "rolemembers":
			o.Members = append(o.Members, roleNames(d.Arg)...)
		case "inherit":
			flag(&o.Inherit)
		case "connectionlimit", "validUntil", "isreplication", "bypassrls":
			// Accepted: they do not apply.
		default:
			return b.errAt(d.Location, sqlerr.Unsupported("role option %s", strings.ToUpper(d.Defname)))
		}
	}
	return nil
}

// defElemBool is a role option's value: true when absent.
func defElemBool(d *pg_query.DefElem) bool {
	if d.Arg == nil {
		return true
	}
	if bv := d.Arg.GetBoolean(); bv != nil {
		return bv.Boolval
	}
	if iv := d.Arg.GetInteger(); iv != nil {
		return iv.Ival != 0
	}
	return true
}

// roleNames returns the role names of a list of RoleSpecs.
func roleNames(n *pg_query.Node) []string {
	var out []string
	if l := n.GetList(); l != nil {
		for _, it := range l.Items {
			if spec := it.GetRoleSpec(); spec != nil {
				out = append(out, spec.Rolename)
			}
		}
	}
	return out
}

func (b *binder) bindGrant(s *pg_query.GrantStmt) (ir.Statement, error) {
	st := &Grant{Revoke: !s.IsGrant, GrantOption: s.GrantOption, Cascade: s.Behavior == pg_query.DropBehavior_DROP_CASCADE}
	if s.Grantor != nil {
		return nil, sqlerr.Unsupported("GRANTED BY")
	}
	switch s.Objtype {
	case pg_query.ObjectType_OBJECT_TABLE:
		st.Target.Kind = catalog.ObjRelation
	case pg_query.ObjectType_OBJECT_SCHEMA:
		st.Target.Kind = catalog.ObjSchema
	case pg_query.ObjectType_OBJECT_DATABASE:
		st.Target.Kind = catalog.ObjDatabase
	default:
		return nil, sqlerr.Unsupported("GRANT and REVOKE on %s", strings.TrimPrefix(s.Objtype.String(), "OBJECT_"))
	}
	all := map[catalog.ObjectKind]catalog.Privileges{
		catalog.ObjRelation: catalog.RelationPrivileges,
		catalog.ObjSchema:   catalog.SchemaPrivileges,
		catalog.ObjDatabase: catalog.DatabasePrivileges,
	}[st.Target.Kind]
	if len(s.Privileges) == 0 {
		st.Privs = all
	}
	for _, n := range s.Privileges {
		ap := n.GetAccessPriv()
		if ap == nil {
			continue
		}
		if len(ap.Cols) > 0 {
			if err := st.addColumnPrivilege(ap); err != nil {
				return nil, err
			}
			continue
		}
		p, ok := catalog.ParsePrivilege(ap.PrivName)
		if !ok || p&all == 0 {
			return nil, sqlerr.New(sqlerr.InvalidGrantOperation, "invalid privilege type %s for %s", strings.ToUpper(ap.PrivName),
				map[catalog.ObjectKind]string{catalog.ObjRelation: "relation", catalog.ObjSchema: "schema", catalog.ObjDatabase: "database"}[st.Target.Kind])
		}
		st.Privs |= p
	}
	if s.Targtype == pg_query.GrantTargetType_ACL_TARGET_ALL_IN_SCHEMA {
		st.Target.AllInSchema = true
	}
	if len(st.Columns) > 0 && (st.Target.Kind != catalog.ObjRelation || st.Target.AllInSchema) {
		return nil, sqlerr.New(sqlerr.InvalidGrantOperation, "column privileges are only valid for relations")
	}
	for _, o := range s.Objects {
		switch {
		case o.GetRangeVar() != nil:
			rel, err := b.lookup(o.GetRangeVar())
			if err != nil {
				return nil, err
			}
			if err := columnsExist(rel, st.Columns); err != nil {
				return nil, err
			}
			st.Target.Relations = append(st.Target.Relations, rel)
		case o.GetString_() != nil:
			st.Target.Names = append(st.Target.Names, o.GetString_().Sval)
		}
	}
	for _, g := range s.Grantees {
		spec := g.GetRoleSpec()
		if spec == nil {
			continue
		}
		if spec.Roletype == pg_query.RoleSpecType_ROLESPEC_PUBLIC {
			if st.GrantOption && !st.Revoke {
				return nil, sqlerr.New(sqlerr.InvalidGrantOperation, "grant options can only be granted to roles")
			}
			st.Grantees = append(st.Grantees, "public")
		} else {
			st.Grantees = append(st.Grantees, spec.Rolename)
		}
	}
	return st, nil
}

// addColumnPrivilege adds a privilege with a column list (SELECT (a, b),
// ALL (a)) to st.
func (st *Grant) addColumnPrivilege(ap *pg_query.AccessPriv) error {
	p := catalog.ColumnPrivileges
	if ap.PrivName != "" {
		var ok bool
		if p, ok = catalog.ParsePrivilege(ap.PrivName); !ok || p&catalog.ColumnPrivileges == 0 {
			return sqlerr.New(sqlerr.InvalidGrantOperation, "invalid privilege type %s for column", strings.ToUpper(ap.PrivName))
		}
	}
	for _, c := range ap.Cols {
		name := c.GetString_().GetSval()
		i := slices.IndexFunc(st.Columns, func(cp ColumnPrivileges) bool { return cp.Column == name })
		if i < 0 {
			i = len(st.Columns)
			st.Columns = append(st.Columns, ColumnPrivileges{Column: name})
		}
		st.Columns[i].Privs |= p
	}
	return nil
}

// columnsExist checks that rel has a visible column of each name of cols.
func columnsExist(rel *catalog.Relation, cols []ColumnPrivileges) error {
	for _, c := range cols {
		i := rel.ColumnIndex(c.Column)
		if i < 0 || rel.Columns[i].Hidden {
			return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", c.Column, rel.Name)
		}
	}
	return nil
}

func (b *binder) bindGrantRole(s *pg_query.GrantRoleStmt) (ir.Statement, error) {
	st := &GrantRole{Revoke: !s.IsGrant}
	for _, n := range s.GrantedRoles {
		if ap := n.GetAccessPriv(); ap != nil {
			st.Roles = append(st.Roles, ap.PrivName)
		}
	}
	for _, n := range s.GranteeRoles {
		if spec := n.GetRoleSpec(); spec != nil {
			st.Members = append(st.Members, spec.Rolename)
		}
	}
	return st, nil
}

// BindInZoneRefs is BindInZone that also returns what the statement
// touches: what privileges are checked on.
func BindInZoneRefs(cat *catalog.Catalog, searchPath []string, zone *types.Zone, p *Parsed) (ir.Statement, Access, error) {
	b := &binder{cat: cat, path: searchPath, zone: zone}
	st, err := bind(b, p)
	return st, b.access(), err
}
