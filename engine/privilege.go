package engine

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
)

// Privileges are checked per statement, before it runs (authorize): a
// superuser may do anything; another role needs
//   - SELECT on every relation a statement reads (system tables and the
//     catalogs are readable by every role);
//   - INSERT, UPDATE or DELETE on the table a DML statement or COPY FROM
//     writes;
//   - CREATE on the schema it creates a relation in (PostgreSQL 15's
//     default grants no one CREATE on public), after which it owns the
//     relation;
//   - ownership of what it drops, alters, renames, comments on, indexes or
//     grants on; TRUNCATE on what it truncates;
//   - CREATEDB for CREATE DATABASE, CREATEROLE for roles; schemas,
//     databases' drops and database savepoints are for superusers.
// A session whose user is no role (trusted loopback connections, see
// Authenticator) has a superuser's rights.

// role returns the session's role, or nil when its user is no role.
func (s *session) role() *catalog.Role { return s.e.roles.ByName(s.user) }

func (s *session) isSuperuser() bool {
	r := s.role()
	return r == nil || r.Superuser
}

// mayManageRoles checks CREATEROLE; creating or changing a superuser
// (superuser set) needs a superuser.
func (s *session) mayManageRoles(superuser *bool) error {
	if s.isSuperuser() {
		return nil
	}
	if superuser != nil || !s.role().CreateRole {
		return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to create or alter role").
			WithDetail("Only roles with the CREATEROLE attribute may manage roles; only superusers may manage superusers.")
	}
	return nil
}

// relationObject is the grant object of r.
func relationObject(r *catalog.Relation) catalog.Object {
	return catalog.Object{Kind: catalog.ObjRelation, ID: r.ID}
}

// schemaObject is the grant object of schema name in cat's database. The
// built-in schemas have no id of their own; they are numbered from their
// database's.
func (e *Engine) schemaObject(cat *catalog.Catalog, name string) catalog.Object {
	if sc := cat.Schema(name); sc != nil && sc.ID != 0 {
		return catalog.Object{Kind: catalog.ObjSchema, ID: sc.ID}
	}
	var db uint32
	if d := e.cat.Database(cat.DatabaseName()); d != nil {
		db = d.ID
	}
	return catalog.Object{Kind: catalog.ObjSchema, ID: 1<<31 | db}
}

func permissionDenied(what, name string) error {
	return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", what, name)
}

func mustBeOwner(r *catalog.Relation) error {
	return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", kindNoun(r.Kind), r.Name)
}

func kindNoun(k catalog.Kind) string {
	switch k {
	case catalog.View, catalog.MaterializedView:
		return "view"
	case catalog.Source:
		return "source"
	case catalog.Sink:
		return "sink"
	}
	return "table"
}

// executeChecked runs st, which names the relations refs, once the
// session's role may, and records the role as the owner of what st created.
func (s *session) executeChecked(ctx context.Context, st sql.Statement, refs []uint32, w pgwire.ResultWriter) error {
	if err := s.authorize(st, refs); err != nil {
		return err
	}
	s.seq++
	schema, name, owned := s.createdName(st)
	if err := s.e.timeDDL(st, func() error { return s.execute(ctx, st, w) }); err != nil || !owned {
		return err
	}
	return s.recordOwner(schema, name)
}

// authorize checks that the session's role may run st, which reads the
// relations refs.
func (s *session) authorize(st sql.Statement, refs []uint32) error {
	if s.isSuperuser() {
		return nil
	}
	role := s.role().ID
	var target *catalog.Relation
	need := catalog.Privileges(0)
	switch st := st.(type) {
	case *sql.Insert:
		target, need = st.Table, catalog.PrivInsert
	case *sql.Update:
		target, need = st.Table, catalog.PrivUpdate
	case *sql.Delete:
		target, need = st.Table, catalog.PrivDelete
	case *sql.CopyFrom:
		target, need = st.Insert.Table, catalog.PrivInsert
	default:
		if err := s.authorizeDDL(st, role); err != nil {
			return err
		}
	}
	if target != nil && !s.e.roles.Has(role, relationObject(target), need) {
		return permissionDenied(kindNoun(target.Kind), target.Name)
	}
	for _, id := range refs {
		r := s.e.cat.ByID(id)
		if r == nil || r == target || r.Kind == catalog.SystemTable {
			continue
		}
		if !s.e.roles.Has(role, relationObject(r), catalog.PrivSelect) {
			return permissionDenied(kindNoun(r.Kind), r.Name)
		}
	}
	return nil
}

// authorizeDDL checks the statements that create, drop or change objects.
func (s *session) authorizeDDL(st sql.Statement, role uint32) error {
	switch st := st.(type) {
	case *sql.CreateTable:
		return s.mayCreateIn(st.Schema, role)
	case *sql.CreateMaterializedView:
		return s.mayCreateIn(st.Schema, role)
	case *sql.CreateSource:
		return s.mayCreateIn(st.Schema, role)
	case *sql.CreateView:
		return s.mayCreateIn(s.cat.CreationSchemaOf(st.Name.Schema, s.searchPath()), role)
	case *sql.CreateSink:
		return s.mayCreateIn(st.View.Schema, role)
	case *sql.CreateIndex:
		return s.mustOwn(st.Table, role)
	case *sql.DropIndex:
		for _, n := range st.Names {
			if r, _ := s.cat.LookupIndex(n); r != nil {
				if err := s.mustOwn(r, role); err != nil {
					return err
				}
			}
		}
	case *sql.Drop:
		for _, n := range st.Names {
			if err := s.mustOwn(s.cat.ResolveName(st.Path, n.Schema, n.Name), role); err != nil {
				return err
			}
		}
	case *sql.DropSource:
		return s.mustOwn(s.cat.ResolveName(st.Path, st.Name.Schema, st.Name.Name), role)
	case *sql.DropSink:
		return s.mustOwn(s.cat.ResolveName(st.Path, st.Name.Schema, st.Name.Name), role)
	case *sql.AlterViewPause:
		return s.mustOwn(s.cat.ResolveName(st.Path, st.Name.Schema, st.Name.Name), role)
	case *sql.Grant:
		return s.mayGrant(st, role)
	case *sql.RewriteTable:
		return s.mustOwn(st.Table, role)
	case *sql.AlterViewQuery:
		return s.mustOwn(st.Rel, role)
	case *sql.RenameRelation:
		return s.mustOwn(st.Rel, role)
	case *sql.AlterColumn:
		return s.mustOwn(st.Rel, role)
	case *sql.RenameColumn:
		return s.mustOwn(st.Rel, role)
	case *sql.CommentOn:
		return s.mustOwn(st.Rel, role)
	case *sql.Truncate:
		for _, t := range st.Tables {
			if !s.e.roles.Has(role, relationObject(t), catalog.PrivTruncate) {
				return permissionDenied(kindNoun(t.Kind), t.Name)
			}
		}
	case *sql.CreateDatabase:
		if !s.role().CreateDB {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to create database")
		}
	case *sql.CreateSchema, *sql.DropSchema, *sql.DropDatabase, *sql.Savepoint:
		return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied: %s needs a superuser", st.Tag())
	}
	return nil
}

// mayCreateIn checks CREATE on schema.
func (s *session) mayCreateIn(schema string, role uint32) error {
	if !s.e.roles.Has(role, s.e.schemaObject(s.cat, schema), catalog.PrivCreate) {
		return permissionDenied("schema", schema)
	}
	return nil
}

// mustOwn checks that role owns r (nil: nothing to check, the statement
// reports the missing relation itself).
func (s *session) mustOwn(r *catalog.Relation, role uint32) error {
	if r == nil || s.e.roles.IsOwner(role, relationObject(r)) {
		return nil
	}
	return mustBeOwner(r)
}

// mayGrant checks that role owns every object of a GRANT or REVOKE.
func (s *session) mayGrant(st *sql.Grant, role uint32) error {
	objs, err := s.grantObjects(st)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if !s.e.roles.IsOwner(role, o) {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied: only the owner of an object may grant privileges on it")
		}
	}
	return nil
}

// grantObjects resolves the objects of a GRANT or REVOKE.
func (s *session) grantObjects(st *sql.Grant) ([]catalog.Object, error) {
	var out []catalog.Object
	t := st.Target
	switch {
	case t.Kind == catalog.ObjRelation && t.AllInSchema:
		for _, name := range t.Names {
			if s.cat.Schema(name) == nil {
				return nil, sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", name)
			}
			for _, r := range s.cat.InSchema(name) {
				if r.Kind != catalog.SystemTable && r.Kind != catalog.Sink {
					out = append(out, relationObject(r))
				}
			}
		}
	case t.Kind == catalog.ObjRelation:
		for _, r := range t.Relations {
			out = append(out, relationObject(r))
		}
	case t.Kind == catalog.ObjSchema:
		for _, name := range t.Names {
			if s.cat.Schema(name) == nil {
				return nil, sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", name)
			}
			out = append(out, s.e.schemaObject(s.cat, name))
		}
	case t.Kind == catalog.ObjDatabase:
		for _, name := range t.Names {
			d := s.e.cat.Database(name)
			if d == nil {
				return nil, sqlerr.New(sqlerr.InvalidCatalogName, "database \"%s\" does not exist", name)
			}
			out = append(out, catalog.Object{Kind: catalog.ObjDatabase, ID: d.ID})
		}
	}
	return out, nil
}

// grant runs GRANT or REVOKE.
func (e *Engine) grant(s *session, st *sql.Grant) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	objs, err := s.grantObjects(st)
	if err != nil {
		return err
	}
	grantees := make([]uint32, len(st.Grantees))
	for i, name := range st.Grantees {
		if name == "public" {
			grantees[i] = catalog.PublicRole
			continue
		}
		r := e.roles.ByName(name)
		if r == nil {
			return sqlerr.New(sqlerr.UndefinedObject, "role \"%s\" does not exist", name)
		}
		grantees[i] = r.ID
	}
	var changed []catalog.Grant
	for _, o := range objs {
		for _, g := range grantees {
			old := e.roles.Granted(o, g)
			privs := old | st.Privs
			if st.Revoke {
				privs = old &^ st.Privs
			}
			if privs != old {
				changed = append(changed, catalog.Grant{Object: o, Grantee: g, Privs: privs})
			}
		}
	}
	err = e.commitCatalogChange(func() error {
		for i := range changed {
			if err := e.catSrc.putGrant(&changed[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, g := range changed {
		e.roles.SetGrant(g.Object, g.Grantee, g.Privs)
	}
	return nil
}

// createdName returns the schema and name of the relation st creates, when
// the session's role is not a superuser and no relation has that name yet:
// the relation the role will own (a superuser's objects belong to the
// bootstrap superuser, as every object created before roles did). ok is
// false otherwise.
func (s *session) createdName(st sql.Statement) (schema, name string, ok bool) {
	if s.isSuperuser() {
		return "", "", false
	}
	switch st := st.(type) {
	case *sql.CreateTable:
		schema, name = st.Schema, st.Name
	case *sql.CreateMaterializedView:
		schema, name = st.Schema, st.Name
	case *sql.CreateSource:
		schema, name = st.Schema, st.Name
	case *sql.CreateView:
		schema, name = s.cat.CreationSchemaOf(st.Name.Schema, s.searchPath()), st.Name.Name
	case *sql.CreateSink:
		schema, name = st.View.Schema, st.View.Name
	default:
		return "", "", false
	}
	return schema, name, s.cat.LookupIn(schema, name) == nil
}

// recordOwner makes the session's role the owner of relation schema.name,
// which its statement just created.
func (s *session) recordOwner(schema, name string) error {
	r := s.cat.LookupIn(schema, name)
	if r == nil {
		return fmt.Errorf("created relation %s.%s not found", schema, name)
	}
	o, owner := relationObject(r), s.role().ID
	if err := s.e.commitCatalogChange(func() error { s.e.catSrc.putOwner(o, owner); return nil }); err != nil {
		return err
	}
	s.e.roles.SetOwner(o, owner)
	return nil
}

// HasTablePrivilege implements sql.PrivilegeChecker for
// has_table_privilege: a user that is no role has a superuser's rights (see
// Authenticator), and system tables are readable by everyone.
func (s *session) HasTablePrivilege(user string, rel *catalog.Relation, privs catalog.Privileges) bool {
	r := s.e.roles.ByName(user)
	if r == nil || rel.Kind == catalog.SystemTable && privs == catalog.PrivSelect {
		return true
	}
	return s.e.roles.Has(r.ID, relationObject(rel), privs)
}
