package engine

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
)

// hasPrivilege reports whether the role named user holds every privilege
// of privs on obj (through its memberships, PUBLIC's grants, ownership or
// being a superuser). known is false when user names no role.
func (e *Engine) hasPrivilege(user string, obj catalog.Object, privs catalog.Privileges) (held, known bool) {
	r := e.roles.ByName(user)
	if r == nil {
		return false, false
	}
	return privs == 0 || e.roles.Has(r.ID, obj, privs), true
}

// HasPrivilege implements sql.PrivilegeChecker for the has_*_privilege
// functions. The catalogs (system tables) are readable by every role. A
// column's privileges are those on the column or on its table; "any
// column" (has_any_column_privilege) those on the table or on one of its
// columns.
func (s *session) HasPrivilege(user string, obj sql.PrivilegeObject, privs catalog.Privileges) (held, known bool) {
	var o catalog.Object
	switch {
	case obj.Rel != nil:
		if obj.Rel.Kind == catalog.SystemTable && privs == catalog.PrivSelect {
			return true, s.e.roles.ByName(user) != nil
		}
		o = relationObject(obj.Rel)
		if obj.Column == "" && !obj.AnyColumn {
			break
		}
		r := s.e.roles.ByName(user)
		if r == nil {
			return false, false
		}
		if held, _ := s.e.hasPrivilege(user, o, privs); held {
			return true, true
		}
		for _, c := range obj.Rel.Columns {
			if !c.Hidden && (c.Name == obj.Column || obj.AnyColumn) && s.e.roles.Has(r.ID, catalog.ColumnObject(obj.Rel.ID, c.Name), privs) {
				return true, true
			}
		}
		return false, true
	case obj.Schema != "":
		o = s.e.schemaObject(s.cat, obj.Schema)
	default:
		d := s.e.cat.Database(obj.Database)
		if d == nil {
			return false, true
		}
		o = catalog.Object{Kind: catalog.ObjDatabase, ID: d.ID}
	}
	return s.e.hasPrivilege(user, o, privs)
}
