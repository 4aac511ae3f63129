package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
)

// Privileges are checked per statement, before it runs (authorize): a
// superuser may do anything; another role needs
//   - SELECT on every relation a statement reads (system tables and the
//     catalogs are readable by every role), and USAGE on the schema of
//     every relation it reads or writes;
//   - INSERT, UPDATE or DELETE on the table a DML statement or COPY FROM
//     writes;
//   - CREATE on the schema it creates a relation in (PostgreSQL 15's
//     default grants no one CREATE on public), after which it owns the
//     relation;
//   - ownership of what it drops, alters, renames, comments on, indexes or
//     pauses; to grant, ownership or the privileges WITH GRANT OPTION;
//     TRUNCATE on what it truncates;
//   - CREATEDB for CREATE DATABASE, CREATEROLE for roles; schemas,
//     databases' drops and database savepoints are for superusers.
// A session whose user is no role (trusted loopback connections, see
// Authenticator) has a superuser's rights.

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
	return catalog.BuiltinSchema(db)
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

// executeChecked runs st, which touches acc, once the session's role may,
// and records the role as the owner of what st created.
func (s *session) executeChecked(ctx context.Context, st ir.Statement, acc sql.Access, w pgwire.ResultWriter) error {
	if err := s.authorize(st, acc); err != nil {
		return err
	}
	s.seq++
	schema, name, owned := s.createdName(st)
	if err := s.e.timeDDL(st, func() error { return s.execute(ctx, st, w) }); err != nil || !owned {
		return err
	}
	return s.recordOwner(schema, name)
}

// authorize checks that the session's role may run st, which touches acc.
func (s *session) authorize(st ir.Statement, acc sql.Access) error {
	if s.isSuperuser() {
		return nil
	}
	role := s.role().ID
	var target *catalog.Relation
	need := catalog.Privileges(0)
	switch st := st.(type) {
	case *ir.Insert:
		target, need = st.Table, catalog.PrivInsert
	case *ir.Update:
		target, need = st.Table, catalog.PrivUpdate
	case *ir.Delete:
		target, need = st.Table, catalog.PrivDelete
	case *sql.CopyFrom:
		target, need = st.Insert.Table, catalog.PrivInsert
	default:
		if err := s.authorizeDDL(st, role); err != nil {
			return err
		}
	}
	if target != nil {
		if err := s.mayUse(target, role); err != nil {
			return err
		}
		if !s.holdsOnColumns(role, target, need, acc.ColumnsOf(target.ID, need)) {
			return permissionDenied(kindNoun(target.Kind), target.Name)
		}
	}
	for _, id := range acc.Relations {
		r := s.e.cat.ByID(id)
		if r == nil || r.Kind == catalog.SystemTable {
			continue
		}
		if r != target {
			if err := s.mayUse(r, role); err != nil {
				return err
			}
		}
		read := acc.ColumnsOf(id, catalog.PrivSelect)
		if r == target && len(read) == 0 {
			continue
		}
		if !s.holdsOnColumns(role, r, catalog.PrivSelect, read) {
			return permissionDenied(kindNoun(r.Kind), r.Name)
		}
	}
	return nil
}

// holdsOnColumns reports whether role holds priv on relation r, or on
// every column of cols, as PostgreSQL checks a statement's use of r's
// columns. With no columns (SELECT count(*) FROM t, DELETE FROM t) priv on
// any column of r is enough, except for DELETE, which has no column
// privilege.
func (s *session) holdsOnColumns(role uint32, r *catalog.Relation, priv catalog.Privileges, cols []string) bool {
	roles := s.e.roles
	if roles.Has(role, relationObject(r), priv) {
		return true
	}
	if priv&catalog.ColumnPrivileges == 0 {
		return false
	}
	if len(cols) == 0 {
		for _, c := range r.Columns {
			if !c.Hidden && roles.Has(role, catalog.ColumnObject(r.ID, c.Name), priv) {
				return true
			}
		}
		return false
	}
	for _, c := range cols {
		if !roles.Has(role, catalog.ColumnObject(r.ID, c), priv) {
			return false
		}
	}
	return true
}

// authorizeDDL checks the statements that create, drop or change objects.
func (s *session) authorizeDDL(st ir.Statement, role uint32) error {
	switch st := st.(type) {
	case *ir.CreateTable:
		return s.mayCreateIn(st.Schema, role)
	case *ir.CreateMaterializedView:
		return s.mayCreateIn(st.Schema, role)
	case *sql.CreateSource:
		return s.mayCreateIn(st.Schema, role)
	case *sql.CreateView:
		return s.mayCreateIn(s.cat.CreationSchemaOf(st.Name.Schema, s.searchPath()), role)
	case *sql.CreateSink:
		return s.mayCreateIn(st.View.Schema, role)
	case *ir.CreateIndex:
		return s.mustOwn(st.Table, role)
	case *ir.DropIndex:
		for _, n := range st.Names {
			if r, _ := s.cat.LookupIndex(n); r != nil {
				if err := s.mustOwn(r, role); err != nil {
					return err
				}
			}
		}
	case *ir.Drop:
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

// mayUse checks USAGE on the schema of r, without which a role cannot
// name what the schema holds (PostgreSQL skips such a schema in the search
// path; here the statement fails on the relation it resolved). System
// tables and the catalogs are usable by every role.
func (s *session) mayUse(r *catalog.Relation, role uint32) error {
	schema := r.Schema
	if schema == "" {
		schema = catalog.Public
	}
	if r.Kind == catalog.SystemTable || schema == catalog.PgCatalog || schema == catalog.InformationSchema {
		return nil
	}
	if !s.e.roles.Has(role, s.e.schemaObject(s.cat, schema), catalog.PrivUsage) {
		return permissionDenied("schema", schema)
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

// mayGrant checks that role may GRANT on every object: as its owner, by a
// grant option, or at least by holding some privilege on it (it then
// grants what it may, with a warning, as PostgreSQL does; see grant). Any
// role may REVOKE: it takes back its own grants only.
func (s *session) mayGrant(st *sql.Grant, role uint32) error {
	items, err := s.grantItems(st)
	if err != nil || st.Revoke {
		return err
	}
	for _, it := range items {
		if privs, grantable := s.e.roles.Holds(role, it.obj); privs == 0 && grantable == 0 {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", it.noun, it.name)
		}
	}
	return nil
}

// grantItem is one object of a GRANT or REVOKE with the privileges the
// statement changes on it, and how errors and warnings name it.
type grantItem struct {
	obj        catalog.Object
	privs      catalog.Privileges
	noun, name string
	// warnName is the object as the 01007 warnings name it.
	warnName string
}

// grantItems resolves st into the objects it changes: each target object
// with st.Privs, and each column of st.Columns of each target relation. A
// REVOKE of relation privileges revokes them from every column too, as in
// PostgreSQL.
func (s *session) grantItems(st *sql.Grant) ([]grantItem, error) {
	objs, err := s.grantObjects(st)
	if err != nil {
		return nil, err
	}
	var out []grantItem
	for i, o := range objs {
		noun, name := s.objectName(st, o, i)
		if st.Privs != 0 {
			out = append(out, grantItem{obj: o, privs: st.Privs, noun: noun, name: name, warnName: fmt.Sprintf("\"%s\"", name)})
		}
		r := s.e.cat.ByID(o.ID)
		if o.Kind != catalog.ObjRelation || r == nil {
			continue
		}
		for _, c := range st.Columns {
			out = append(out, grantItem{obj: catalog.ColumnObject(o.ID, c.Column), privs: c.Privs,
				noun: "column", name: fmt.Sprintf("\"%s\" of relation \"%s\"", c.Column, name), warnName: fmt.Sprintf("column \"%s\" of relation \"%s\"", c.Column, name)})
		}
		if cp := st.Privs & catalog.ColumnPrivileges; st.Revoke && cp != 0 {
			for _, c := range r.Columns {
				if !c.Hidden {
					out = append(out, grantItem{obj: catalog.ColumnObject(o.ID, c.Name), privs: cp, noun: noun, name: name})
				}
			}
		}
	}
	return out, nil
}

// objectName returns the kind and name of the i-th object of st, o, as
// PostgreSQL's permission errors name them ("table", "t").
func (s *session) objectName(st *sql.Grant, o catalog.Object, i int) (noun, name string) {
	switch {
	case o.Kind == catalog.ObjRelation:
		if r := s.e.cat.ByID(o.ID); r != nil {
			return kindNoun(r.Kind), r.Name
		}
	case i < len(st.Target.Names) && o.Kind == catalog.ObjSchema:
		return "schema", st.Target.Names[i]
	case i < len(st.Target.Names):
		return "database", st.Target.Names[i]
	}
	return "object", fmt.Sprint(o.ID)
}

// grantable returns the privileges of it the session's role may grant:
// all of them for the object's owner or a superuser, else those it holds
// with grant option; it warns as PostgreSQL does (01007) when that is not
// all of them.
func (s *session) grantable(st *sql.Grant, it grantItem, w notifier) (catalog.Privileges, error) {
	if s.isSuperuser() || st.Revoke {
		return it.privs, nil
	}
	_, grantable := s.e.roles.Holds(s.role().ID, it.obj)
	privs := it.privs & grantable
	if privs == it.privs {
		return privs, nil
	}
	msg := fmt.Sprintf("not all privileges were granted for %s", it.warnName)
	if privs == 0 {
		msg = fmt.Sprintf("no privileges were granted for %s", it.warnName)
	}
	return privs, w.Notice("WARNING", sqlerr.PrivilegeNotGranted, msg)
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

// grant runs GRANT or REVOKE. The owner of an object (or a superuser)
// grants as grantor 0; another role grants as itself, with the grant
// options it holds (mayGrant). REVOKE takes back the grants of the
// statement's grantor only, as in PostgreSQL, and what the grantees
// granted with grant options they lose: with CASCADE, else the statement
// fails with 2BP01.
func (e *Engine) grant(s *session, st *sql.Grant, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	items, err := s.grantItems(st)
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
	c := &grantChanges{roles: e.roles, at: map[grantChangeKey]int{}}
	var materialized []catalog.Object
	for _, it := range items {
		o := it.obj
		privs, err := s.grantable(st, it, w)
		if err != nil {
			return err
		}
		if o.Kind != catalog.ObjColumn && !e.roles.Explicit(o) && !slices.Contains(materialized, o) {
			// The first GRANT or REVOKE on an object turns its default
			// privileges into PUBLIC's grant, which it then changes.
			materialized = append(materialized, o)
			c.set(catalog.Grant{Object: o, Grantee: catalog.PublicRole, Privs: catalog.DefaultPrivileges(o)})
		}
		grantor := s.grantorOn(o)
		for _, g := range grantees {
			next := c.get(o, g, grantor)
			switch {
			case !st.Revoke:
				next.Privs |= privs
				if st.GrantOption {
					next.Grantable |= privs
				}
			case st.GrantOption:
				next.Grantable &^= privs
			default:
				next.Privs &^= privs
				next.Grantable &^= privs
			}
			c.set(next)
			if st.Revoke {
				if err := c.cascade(o, g, st.Cascade); err != nil {
					return err
				}
			}
		}
	}
	err = e.commitCatalogChange(func() error {
		for i := range c.list {
			if err := e.catSrc.putGrant(&c.list[i]); err != nil {
				return err
			}
		}
		for _, o := range materialized {
			e.catSrc.putExplicit(o)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, g := range c.list {
		e.roles.PutGrant(g)
	}
	for _, o := range materialized {
		e.roles.SetExplicit(o)
	}
	return nil
}

// grantorOn is the grantor the session's grants on o are recorded under:
// 0 for its owner or a superuser, else the session's role.
func (s *session) grantorOn(o catalog.Object) uint32 {
	if s.isSuperuser() || s.e.roles.IsOwner(s.role().ID, o) {
		return 0
	}
	return s.role().ID
}

// grantChanges are the grants a GRANT or REVOKE changes, over the
// committed ones (roles), in the order they were changed.
type grantChanges struct {
	roles *catalog.Roles
	list  []catalog.Grant
	at    map[grantChangeKey]int
}

type grantChangeKey struct {
	obj              catalog.Object
	grantee, grantor uint32
}

func (c *grantChanges) get(o catalog.Object, grantee, grantor uint32) catalog.Grant {
	if i, ok := c.at[grantChangeKey{o, grantee, grantor}]; ok {
		return c.list[i]
	}
	return c.roles.GrantBy(o, grantee, grantor)
}

func (c *grantChanges) set(g catalog.Grant) {
	g.Grantable &= g.Privs
	k := grantChangeKey{g.Object, g.Grantee, g.Grantor}
	if i, ok := c.at[k]; ok {
		c.list[i] = g
		return
	}
	c.at[k] = len(c.list)
	c.list = append(c.list, g)
}

// grants returns the grants on o with the changes applied.
func (c *grantChanges) grants(o catalog.Object) []catalog.Grant {
	out := c.roles.Grants(o)
	for i, g := range out {
		out[i] = c.get(o, g.Grantee, g.Grantor)
	}
	for _, g := range c.list {
		if g.Object == o && c.roles.GrantBy(o, g.Grantee, g.Grantor).Privs == 0 {
			out = append(out, g)
		}
	}
	return out
}

// cascade takes back what grantee granted on o with the grant options the
// changes made it lose (held through no other grant), and so on from
// those grantees; without ok it fails instead when there is any.
func (c *grantChanges) cascade(o catalog.Object, grantee uint32, ok bool) error {
	var before, after catalog.Privileges
	for _, g := range c.roles.Grants(o) {
		if g.Grantee == grantee {
			before |= g.Grantable
		}
	}
	for _, g := range c.grants(o) {
		if g.Grantee == grantee {
			after |= g.Grantable
		}
	}
	lost := before &^ after
	if lost == 0 {
		return nil
	}
	for _, d := range c.grants(o) {
		if d.Grantor != grantee || d.Privs&lost == 0 {
			continue
		}
		if !ok {
			return sqlerr.New(sqlerr.DependentObjectsStillExist, "dependent privileges exist").
				WithHint("Use CASCADE to revoke them too.")
		}
		d.Privs &^= lost
		d.Grantable &^= lost
		c.set(d)
		if err := c.cascade(o, d.Grantee, ok); err != nil {
			return err
		}
	}
	return nil
}

// createdName returns the schema and name of the relation st creates, when
// the session's role is not a superuser and no relation has that name yet:
// the relation the role will own (a superuser's objects belong to the
// bootstrap superuser, as every object created before roles did). ok is
// false otherwise.
func (s *session) createdName(st ir.Statement) (schema, name string, ok bool) {
	if s.isSuperuser() {
		return "", "", false
	}
	switch st := st.(type) {
	case *ir.CreateTable:
		schema, name = st.Schema, st.Name
	case *ir.CreateMaterializedView:
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
