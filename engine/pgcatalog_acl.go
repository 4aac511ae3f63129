package engine

import (
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// What pg_catalog shows of roles' memberships and of column privileges:
// pg_auth_members, pg_attribute.attacl (psql's \dp "Column privileges").

// roleOID is the OID pg_catalog gives role id (0: PUBLIC, which aclitems
// spell as an empty grantee).
func (e *Engine) roleOID(id uint32) int64 {
	if r := e.roles.ByID(id); r != nil && r.Name == e.bootstrapName() {
		return catalog.BootstrapRoleOID
	}
	return catalog.UserOID(id)
}

func (e *Engine) bootstrapName() string {
	if e.opts.Superuser != "" {
		return e.opts.Superuser
	}
	return DefaultSuperuser
}

// aclName is how an aclitem names role id: "" for PUBLIC, the
// bootstrap superuser for grantor 0 (an owner's or superuser's grant).
func (e *Engine) aclName(id uint32, grantor bool) string {
	if id == catalog.PublicRole {
		if grantor {
			return e.bootstrapName()
		}
		return ""
	}
	if r := e.roles.ByID(id); r != nil {
		return r.Name
	}
	return ""
}

// aclItems renders the grants on obj as PostgreSQL's aclitem text
// ("alice=ar*/root": the privileges' letters, * after those held with
// grant option), or NULL when there are none.
func (e *Engine) aclItems(obj catalog.Object) types.Datum {
	var items []types.Datum
	for _, g := range e.roles.Grants(obj) {
		if g.Privs == 0 {
			continue
		}
		var b strings.Builder
		b.WriteString(e.aclName(g.Grantee, false))
		b.WriteByte('=')
		for _, p := range [...]catalog.Privileges{catalog.PrivInsert, catalog.PrivSelect, catalog.PrivUpdate, catalog.PrivDelete,
			catalog.PrivTruncate, catalog.PrivReferences, catalog.PrivTrigger, catalog.PrivExecute, catalog.PrivUsage,
			catalog.PrivCreate, catalog.PrivTemporary, catalog.PrivConnect} {
			if g.Privs&p != 0 {
				b.WriteString(p.String())
				if g.Grantable&p != 0 {
					b.WriteByte('*')
				}
			}
		}
		b.WriteByte('/')
		b.WriteString(e.grantorName(obj, g.Grantor))
		items = append(items, types.DText(b.String()))
	}
	if len(items) == 0 {
		return types.Null
	}
	return types.DArray(items)
}

// authMembersRows are pg_auth_members: one row per direct membership.
// Memberships carry no grantor or admin option here: the grantor shows as
// the bootstrap superuser.
func (v *pgView) authMembersRows() [][]types.Datum {
	var rows [][]types.Datum
	n := int64(0)
	for _, r := range v.e.roles.All() {
		for _, g := range r.MemberOf {
			n++
			rows = append(rows, []types.Datum{oid(n), oid(v.e.roleOID(g)), oid(v.e.roleOID(r.ID)), oid(catalog.BootstrapRoleOID), no})
		}
	}
	return rows
}

// columnACL is pg_attribute.attacl of column c of entry e: the column's
// grants (NULL for index attributes and columns without grants).
func (v *pgView) columnACL(e sql.PgClassEntry, c catalog.Column) types.Datum {
	if e.Kind == "i" || e.Rel == nil || e.Rel.ID == 0 {
		return types.Null
	}
	return v.e.aclItems(catalog.ColumnObject(e.Rel.ID, c.Name))
}

// RoleOIDs implements sql.RoleInfo.
func (s *session) RoleOIDs() []sql.RoleOID {
	v := &pgView{e: s.e, cat: s.cat, user: s.currentUser()}
	var out []sql.RoleOID
	for _, r := range v.roles() {
		out = append(out, sql.RoleOID{OID: r.oid, Name: r.name})
	}
	return out
}

// HasRole implements sql.RoleInfo.
func (s *session) HasRole(user, role, mode string) (held, known bool) {
	u, r := s.e.roles.ByName(user), s.e.roles.ByName(role)
	if u == nil || r == nil {
		return false, false
	}
	switch {
	case u.Superuser:
		return true, true
	case mode == "ADMIN":
		return false, true
	}
	return s.e.roles.IsMember(u.ID, r.ID, mode == "USAGE"), true
}

// grantorName is the name of the grantor of a grant on obj: grantor 0 is
// the object's owner.
func (e *Engine) grantorName(obj catalog.Object, grantor uint32) string {
	if grantor == 0 {
		grantor = e.roles.Owner(obj)
	}
	if grantor == 0 {
		return e.bootstrapName()
	}
	return e.aclName(grantor, false)
}

// infoColumnPrivilegeRows are information_schema.column_privileges: each
// privilege granted on a column, or on its relation (which implies it on
// every column), where the grantor or the grantee is a role whose
// privileges the current user uses, or the grantee is PUBLIC. The
// owner's own privileges are not listed.
func (v *pgView) infoColumnPrivilegeRows() [][]types.Datum {
	var rows [][]types.Datum
	cur := v.e.roles.ByName(v.user)
	visible := func(id uint32) bool {
		return cur == nil || cur.Superuser || v.e.roles.IsMember(cur.ID, id, true)
	}
	for _, e := range v.entries() {
		r := e.Rel
		if e.Kind == "i" || r == nil || r.Kind == catalog.SystemTable {
			continue
		}
		for _, c := range r.Columns {
			if c.Hidden {
				continue
			}
			for _, obj := range []catalog.Object{catalog.ColumnObject(r.ID, c.Name), relationObject(r)} {
				for _, g := range v.e.roles.Grants(obj) {
					if !(g.Grantee == catalog.PublicRole || visible(g.Grantee) || visible(g.Grantor)) {
						continue
					}
					grantee := v.e.aclName(g.Grantee, false)
					if g.Grantee == catalog.PublicRole {
						grantee = "PUBLIC"
					}
					for _, p := range (g.Privs & catalog.ColumnPrivileges).Names() {
						pv, _ := catalog.ParsePrivilege(p)
						rows = append(rows, []types.Datum{txt(v.e.grantorName(obj, g.Grantor)), txt(grantee), txt(v.cat.DatabaseName()),
							txt(e.Schema), txt(r.Name), txt(c.Name), txt(p), txt(yesNo(g.Grantable&pv != 0))})
					}
				}
			}
		}
	}
	return rows
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}
