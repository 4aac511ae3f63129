package sql

import (
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// PrivilegeChecker is a Session that knows the roles' privileges, so that
// has_table_privilege answers from them.
type PrivilegeChecker interface {
	// HasTablePrivilege reports whether the role named user holds every
	// privilege of privs on rel.
	HasTablePrivilege(user string, rel *catalog.Relation, privs catalog.Privileges) bool
}

// bindHasTablePrivilege binds has_table_privilege([user,] table, privs)
// whose arguments are constants, when the session checks privileges: the
// answer is computed where the statement is bound. ok is false otherwise
// (the caller then answers true: psql's queries call it per catalog row).
func (b *binder) bindHasTablePrivilege(args []Expr) (Expr, bool) {
	pc, ok := b.session.(PrivilegeChecker)
	if !ok || len(args) < 2 {
		return nil, false
	}
	consts := make([]*Const, len(args))
	for i, a := range args {
		c, ok := a.(*Const)
		if !ok || c.Value.Null {
			return nil, false
		}
		consts[i] = c
	}
	user := b.user()
	if len(consts) == 3 {
		user, consts = consts[0].Value.S, consts[1:]
	}
	rel := b.privilegeRelation(consts[0])
	privs, ok := parsePrivileges(consts[1].Value.S)
	if rel == nil || !ok {
		return nil, false
	}
	return &Const{Value: types.DBool(pc.HasTablePrivilege(user, rel, privs)), T: types.BoolT}, true
}

// privilegeRelation resolves a table argument: a (qualified) name, or an
// OID.
func (b *binder) privilegeRelation(c *Const) *catalog.Relation {
	if c.T.Kind != types.Text && c.T.Kind != types.Unknown {
		for _, e := range PgClassEntries(b.cat) {
			if e.OID == c.Value.I && e.Rel != nil {
				return e.Rel
			}
		}
		return nil
	}
	schema, name, qualified := strings.Cut(c.Value.S, ".")
	if !qualified {
		return b.cat.Resolve(b.path, catalog.NormalizeName(schema))
	}
	return b.cat.LookupIn(catalog.NormalizeName(schema), catalog.NormalizeName(name))
}

// parsePrivileges reads a privilege list as has_table_privilege takes it:
// "SELECT", "select, insert", "UPDATE WITH GRANT OPTION".
func parsePrivileges(s string) (catalog.Privileges, bool) {
	var privs catalog.Privileges
	for _, part := range strings.Split(s, ",") {
		word := strings.TrimSpace(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(part)), "WITH GRANT OPTION"))
		p, ok := catalog.ParsePrivilege(word)
		if !ok {
			return 0, false
		}
		privs |= p
	}
	return privs, true
}
