package engine

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// Roles and privileges.
//
// Roles (catalog.Role) are shared by every database. The bootstrap
// superuser (Options.Superuser) is created at the first start. Grants and
// the owners of objects that roles other than superusers created live in
// e.roles (catalog.Roles) and are persisted in the catalog table, so they
// change with DDL's commit like any catalog entry.

// Catalog keys: rolePrefix + id -> JSON role; grantPrefix + kind + object
// id (+ column name, see objectKey) + grantee -> JSON grant; ownerPrefix + kind + object id -> owner id;
// explicitPrefix + kind + object id -> nothing, for the objects whose
// grants replace their default privileges (catalog.Roles.SetExplicit).
var (
	rolePrefix     = []byte("a")
	grantPrefix    = []byte("g")
	ownerPrefix    = []byte("o")
	explicitPrefix = []byte("A")
)

// DefaultSuperuser is the bootstrap superuser's name when Options.Superuser
// is empty.
const DefaultSuperuser = "root"

func roleKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), rolePrefix...), id)
}

// objectKey is prefix + kind + object id, and for a column its name's
// length (uvarint) and the name.
func objectKey(prefix []byte, o catalog.Object) []byte {
	k := append(append([]byte(nil), prefix...), byte(o.Kind))
	k = binary.BigEndian.AppendUint32(k, o.ID)
	if o.Kind == catalog.ObjColumn {
		k = append(binary.AppendUvarint(k, uint64(len(o.Column))), o.Column...)
	}
	return k
}

// grantKey is the key of g: the grants of owners and superusers (grantor
// 0) have no grantor in their key, as before grant options existed.
func grantKey(g *catalog.Grant) []byte {
	k := binary.BigEndian.AppendUint32(objectKey(grantPrefix, g.Object), g.Grantee)
	if g.Grantor != 0 {
		k = binary.BigEndian.AppendUint32(k, g.Grantor)
	}
	return k
}

func (c *catalogSource) putRole(r *catalog.Role) error {
	v, err := r.Encode()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Put(roleKey(r.ID), v)
	return nil
}

func (c *catalogSource) deleteRole(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Delete(roleKey(id))
}

func (c *catalogSource) putGrant(g *catalog.Grant) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g.Privs == 0 {
		c.table.Delete(grantKey(g))
		return nil
	}
	v, err := g.Encode()
	if err != nil {
		return err
	}
	c.table.Put(grantKey(g), v)
	return nil
}

func (c *catalogSource) putOwner(o catalog.Object, owner uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if owner == 0 {
		c.table.Delete(objectKey(ownerPrefix, o))
		return
	}
	c.table.Put(objectKey(ownerPrefix, o), binary.BigEndian.AppendUint32(nil, owner))
}

func (c *catalogSource) putExplicit(o catalog.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Put(objectKey(explicitPrefix, o), []byte{1})
}

// loadRoles reads the committed roles, grants and owners.
func (e *Engine) loadRoles(snap *state.Snapshot) error {
	err := scanCatalog(snap, rolePrefix, func(_, v []byte) error {
		r, err := catalog.DecodeRole(v)
		if err == nil {
			e.roles.Put(r)
		}
		return err
	})
	if err != nil {
		return err
	}
	err = scanCatalog(snap, grantPrefix, func(_, v []byte) error {
		g, err := catalog.DecodeGrant(v)
		if err == nil {
			e.roles.PutGrant(*g)
		}
		return err
	})
	if err != nil {
		return err
	}
	err = scanCatalog(snap, explicitPrefix, func(k, _ []byte) error {
		if len(k) != 6 {
			return fmt.Errorf("catalog: corrupt privilege entry %x", k)
		}
		e.roles.SetExplicit(catalog.Object{Kind: catalog.ObjectKind(k[1]), ID: binary.BigEndian.Uint32(k[2:])})
		return nil
	})
	if err != nil {
		return err
	}
	return scanCatalog(snap, ownerPrefix, func(k, v []byte) error {
		if len(k) != 6 || len(v) != 4 {
			return fmt.Errorf("catalog: corrupt owner entry %x", k)
		}
		o := catalog.Object{Kind: catalog.ObjectKind(k[1]), ID: binary.BigEndian.Uint32(k[2:])}
		e.roles.SetOwner(o, binary.BigEndian.Uint32(v))
		return nil
	})
}

// scanCatalog calls fn with each committed catalog entry under prefix.
func scanCatalog(snap *state.Snapshot, prefix []byte, fn func(k, v []byte) error) error {
	it, err := snap.NewIter(catalogTable, prefix, state.PrefixEnd(prefix))
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Error()
}

// bootstrapSuperuser creates the bootstrap superuser at the first start,
// and sets its password whenever one is configured.
func (e *Engine) bootstrapSuperuser() error {
	name := e.opts.Superuser
	if name == "" {
		name = DefaultSuperuser
	}
	r := e.roles.ByName(name)
	if r != nil && e.opts.SuperuserPassword == "" {
		return nil
	}
	if r == nil {
		r = &catalog.Role{ID: e.catSrc.allocIDs(1)[0], Name: name, Superuser: true, Login: true, CreateRole: true, CreateDB: true}
	} else {
		c := *r
		r = &c
	}
	if p := e.opts.SuperuserPassword; p != "" && !secretMatches(r.Password, name, p) {
		v, err := scramVerifier(name, p)
		if err != nil {
			return err
		}
		r.Password = v
	}
	return e.putRoleCommitted(r)
}

func (e *Engine) putRoleCommitted(r *catalog.Role) error {
	if err := e.commitCatalogChange(func() error { return e.catSrc.putRole(r) }); err != nil {
		return err
	}
	e.roles.Put(r)
	return nil
}

// createRole is CREATE ROLE / USER / GROUP.
func (e *Engine) createRole(s *session, st *sql.CreateRole) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if err := s.mayManageRoles(st.Options.Superuser); err != nil {
		return err
	}
	if e.roles.ByName(st.Name) != nil {
		return sqlerr.New(sqlerr.DuplicateObject, "role \"%s\" already exists", st.Name)
	}
	r := &catalog.Role{ID: e.catSrc.allocIDs(1)[0], Name: st.Name}
	if err := e.applyRoleOptions(s, r, &st.Options); err != nil {
		return err
	}
	if err := e.putRoleCommitted(r); err != nil {
		return err
	}
	for _, m := range st.Options.Members {
		if err := e.setMembership(r.Name, m, false); err != nil {
			return err
		}
	}
	return nil
}

// alterRole is ALTER ROLE. A role may change its own password; other
// changes need CREATEROLE (superuser attributes: a superuser).
func (e *Engine) alterRole(s *session, st *sql.AlterRole) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	name := st.Name
	if st.Current {
		name = s.currentUser()
	}
	old := e.roles.ByName(name)
	if old == nil {
		return sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", name)
	}
	o := st.Options
	ownPassword := old.Name == s.currentUser() && o.Superuser == nil && o.Login == nil && o.CreateRole == nil && o.CreateDB == nil && o.Inherit == nil
	if !ownPassword {
		if err := s.mayManageRoles(o.Superuser); err != nil {
			return err
		}
		if old.Superuser && !s.isSuperuser() {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to alter role").
				WithDetail("Only roles with the SUPERUSER attribute may alter roles with the SUPERUSER attribute.")
		}
	}
	r := *old
	if err := e.applyRoleOptions(s, &r, &o); err != nil {
		return err
	}
	return e.putRoleCommitted(&r)
}

// applyRoleOptions sets o's attributes on r, for session s.
func (e *Engine) applyRoleOptions(s *session, r *catalog.Role, o *sql.RoleOptions) error {
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&r.Superuser, o.Superuser)
	set(&r.Login, o.Login)
	set(&r.CreateRole, o.CreateRole)
	set(&r.CreateDB, o.CreateDB)
	if o.Inherit != nil {
		r.NoInherit = !*o.Inherit
	}
	switch {
	case o.ClearPassword:
		r.Password = ""
	case o.Password != nil:
		v, err := e.passwordVerifier(s, r.Name, *o.Password)
		if err != nil {
			return err
		}
		r.Password = v
	}
	for _, name := range o.InRoles {
		g := e.roles.ByName(name)
		if g == nil {
			return sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", name)
		}
		if !slices.Contains(r.MemberOf, g.ID) {
			r.MemberOf = append(slices.Clone(r.MemberOf), g.ID)
		}
	}
	return nil
}

// dropRole is DROP ROLE. As in PostgreSQL a role that owns objects cannot
// be dropped (2BP01), nor the session's own role.
func (e *Engine) dropRole(s *session, st *sql.DropRole, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if err := s.mayManageRoles(nil); err != nil {
		return err
	}
	for _, name := range st.Names {
		r := e.roles.ByName(name)
		switch {
		case r == nil && st.IfExists:
			if err := w.Notice("NOTICE", sqlerr.UndefinedObject, fmt.Sprintf("role \"%s\" does not exist, skipping", name)); err != nil {
				return err
			}
			continue
		case r == nil:
			return sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", name)
		case r.Name == s.currentUser():
			return sqlerr.New(sqlerr.ObjectInUse, "current user cannot be dropped")
		case r.Name == s.SessionUser():
			return sqlerr.New(sqlerr.ObjectInUse, "session user cannot be dropped")
		case r.Superuser && !s.isSuperuser():
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to drop role").
				WithDetail("Only roles with the SUPERUSER attribute may drop roles with the SUPERUSER attribute.")
		}
		if owns := e.ownedObjects(r.ID); len(owns) > 0 {
			return sqlerr.New(sqlerr.DependentObjectsStillExist, "role \"%s\" cannot be dropped because some objects depend on it", name).
				WithDetail(fmt.Sprintf("owner of %d objects", len(owns)))
		}
		if err := e.dropRoleCommitted(r); err != nil {
			return err
		}
	}
	return nil
}

// dropRoleCommitted removes r, its grants and its memberships.
func (e *Engine) dropRoleCommitted(r *catalog.Role) error {
	var members []*catalog.Role
	for _, m := range e.roles.All() {
		if slices.Contains(m.MemberOf, r.ID) {
			c := *m
			c.MemberOf = slices.DeleteFunc(slices.Clone(m.MemberOf), func(id uint32) bool { return id == r.ID })
			members = append(members, &c)
		}
	}
	grants := e.grantsOf(r.ID)
	err := e.commitCatalogChange(func() error {
		e.catSrc.deleteRole(r.ID)
		for _, g := range grants {
			g.Privs = 0
			if err := e.catSrc.putGrant(&g); err != nil {
				return err
			}
		}
		for _, m := range members {
			if err := e.catSrc.putRole(m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.roles.Remove(r.ID)
	for _, m := range members {
		e.roles.Put(m)
	}
	return nil
}

// grantsOf returns every grant to role or by it.
func (e *Engine) grantsOf(role uint32) []catalog.Grant {
	var out []catalog.Grant
	for _, o := range e.allObjects() {
		for _, g := range e.roles.Grants(o) {
			if g.Grantee == role || g.Grantor == role {
				out = append(out, g)
			}
		}
	}
	return out
}

// allObjects returns every relation, schema and database as grant objects.
func (e *Engine) allObjects() []catalog.Object {
	var out []catalog.Object
	for _, r := range e.cat.All() {
		out = append(out, catalog.Object{Kind: catalog.ObjRelation, ID: r.ID})
	}
	for _, d := range e.cat.Databases() {
		out = append(out, catalog.Object{Kind: catalog.ObjDatabase, ID: d.ID})
		for _, s := range e.cat.In(d.Name).Schemas() {
			out = append(out, catalog.Object{Kind: catalog.ObjSchema, ID: s.ID})
		}
	}
	return out
}

// grantRole is GRANT role TO member / REVOKE role FROM member.
func (e *Engine) grantRole(s *session, st *sql.GrantRole) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if err := s.mayManageRoles(nil); err != nil {
		return err
	}
	for _, g := range st.Roles {
		for _, m := range st.Members {
			if err := e.setMembership(g, m, st.Revoke); err != nil {
				return err
			}
		}
	}
	return nil
}

// setMembership makes member a member of group, or no longer one.
func (e *Engine) setMembership(group, member string, revoke bool) error {
	g, m := e.roles.ByName(group), e.roles.ByName(member)
	for name, r := range map[string]*catalog.Role{group: g, member: m} {
		if r == nil {
			return sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", name)
		}
	}
	if !revoke && slices.Contains(e.roles.Effective(g.ID), m.ID) {
		return sqlerr.New(sqlerr.InvalidGrantOperation, "role \"%s\" is a member of role \"%s\"", group, member)
	}
	c := *m
	c.MemberOf = slices.DeleteFunc(slices.Clone(m.MemberOf), func(id uint32) bool { return id == g.ID })
	if !revoke {
		c.MemberOf = append(c.MemberOf, g.ID)
	}
	return e.putRoleCommitted(&c)
}

// executeRoleStatement runs the statements of roles and privileges; ok is
// false for any other statement.
func (s *session) executeRoleStatement(st ir.Statement, w pgwire.ResultWriter) (ok bool, err error) {
	e := s.e
	switch st := st.(type) {
	case *sql.CreateRole:
		err = e.createRole(s, st)
	case *sql.AlterRole:
		err = e.alterRole(s, st)
	case *sql.DropRole:
		err = e.dropRole(s, st, w)
	case *sql.Grant:
		err = e.grant(s, st, w)
	case *sql.GrantRole:
		err = e.grantRole(s, st)
	default:
		return false, nil
	}
	if err != nil {
		return true, err
	}
	return true, w.Complete(st.Tag())
}

// ownedObjects returns the objects role owns that still exist (an owner
// entry outlives a dropped relation; ids are never reused).
func (e *Engine) ownedObjects(role uint32) []catalog.Object {
	var out []catalog.Object
	for _, o := range e.roles.Owns(role) {
		if o.Kind != catalog.ObjRelation || e.cat.ByID(o.ID) != nil {
			out = append(out, o)
		}
	}
	return out
}
