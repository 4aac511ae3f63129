package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// Catalog keys of schemas: schemaPrefix + big-endian schema id -> JSON
// schema. The built-in schemas (public, pg_catalog) are not stored.
var schemaPrefix = []byte("s")

func schemaKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), schemaPrefix...), id)
}

func (c *catalogSource) putSchema(s *catalog.Schema) error {
	v, err := s.Encode()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Put(schemaKey(s.ID), v)
	return nil
}

func (c *catalogSource) deleteSchema(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Delete(schemaKey(id))
}

// loadSchemas reads the committed schemas.
func (e *Engine) loadSchemas(snap *state.Snapshot) error {
	it, err := snap.NewIter(catalogTable, schemaPrefix, state.PrefixEnd(schemaPrefix))
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		s, err := catalog.DecodeSchema(it.Value())
		if err != nil {
			return err
		}
		e.cat.AddSchema(s)
	}
	return it.Error()
}

// searchPath is the session's search path as a list of schemas.
func (s *session) searchPath() []string {
	return sql.ParseSearchPath(s.value("search_path"), s.currentUser())
}

// commitCatalogChange applies change to the catalog state table between two
// barriers and returns once the epoch holding it is committed. Other
// sessions' writes go on meanwhile: nothing waits but this statement.
func (e *Engine) commitCatalogChange(change func() error) error {
	var err error
	epoch := e.coord.Schedule(barrier.Change{
		AfterInject: func(uint64) { err = change() },
	})
	if werr := e.coord.WaitInjected(e.ctx, epoch); werr != nil {
		return werr
	}
	if err != nil {
		return err
	}
	return e.awaitCommit(e.ctx, epoch+1)
}

// createSchema is CREATE SCHEMA.
func (e *Engine) createSchema(cat *catalog.Catalog, st *sql.CreateSchema, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if cat.Schema(st.Name) != nil {
		if st.IfNotExists {
			return w.Notice("NOTICE", sqlerr.DuplicateSchema, fmt.Sprintf("schema \"%s\" already exists, skipping", st.Name))
		}
		return sqlerr.New(sqlerr.DuplicateSchema, "schema \"%s\" already exists", st.Name)
	}
	s := &catalog.Schema{ID: e.catSrc.allocIDs(1)[0], Name: st.Name, Database: cat.DatabaseName()}
	if err := e.commitCatalogChange(func() error { return e.catSrc.putSchema(s) }); err != nil {
		return err
	}
	cat.AddSchema(s)
	return nil
}

// dropSchema is DROP SCHEMA: refused (2BP01) while the schema holds
// relations, unless CASCADE, which drops them and whatever depends on them.
func (e *Engine) dropSchema(ctx context.Context, cat *catalog.Catalog, st *sql.DropSchema, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	var schemas []*catalog.Schema
	for _, name := range st.Names {
		s := cat.Schema(name)
		if s == nil {
			if st.IfExists {
				if err := w.Notice("NOTICE", sqlerr.InvalidSchemaName, fmt.Sprintf("schema \"%s\" does not exist, skipping", name)); err != nil {
					return err
				}
				continue
			}
			return sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", name)
		}
		if name == catalog.PgCatalog || name == catalog.Public || name == catalog.InformationSchema {
			return sqlerr.Unsupported("dropping schema %s", name)
		}
		schemas = append(schemas, s)
	}
	var targets []*catalog.Relation
	var lines []string
	for _, s := range schemas {
		for _, r := range cat.InSchema(s.Name) {
			targets = append(targets, r)
			lines = append(lines, fmt.Sprintf("%s depends on schema %s", e.describe(cat, st.Path, r), s.Name))
		}
	}
	funcs := 0
	for _, s := range schemas {
		for _, fn := range cat.Functions() {
			if fn.Schema == s.Name {
				funcs++
				lines = append(lines, fmt.Sprintf("function %s depends on schema %s", fn.Signature(), s.Name))
				for _, d := range cat.FunctionDependents(fn.ID) {
					if !contains(targets, d) {
						targets = append(targets, d)
						lines = append(lines, fmt.Sprintf("%s depends on function %s", e.describe(cat, st.Path, d), fn.Signature()))
					}
				}
			}
		}
	}
	order, deps := e.dropOrder(cat, targets, nil, st.Path)
	lines = append(lines, deps...)
	if len(targets)+funcs > 0 && !st.Cascade {
		return sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot drop schema %s because other objects depend on it", schemas[0].Name).
			WithDetail(strings.Join(lines, "\n")).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	if err := e.dropRelations(ctx, cat, order, nil, st.Path, w); err != nil {
		return err
	}
	for _, s := range schemas {
		if err := e.dropSchemaFunctions(cat, s.Name, w); err != nil {
			return err
		}
		if err := e.commitCatalogChange(func() error { e.catSrc.deleteSchema(s.ID); return nil }); err != nil {
			return err
		}
		cat.RemoveSchema(s.Name)
	}
	return nil
}

// describe names a relation in a message as PostgreSQL does: its kind and
// its name, qualified unless the search path finds it by its name alone.
func (e *Engine) describe(cat *catalog.Catalog, path []string, r *catalog.Relation) string {
	if cat.Visible(path, r) {
		return fmt.Sprintf("%s %s", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s", r.Kind, r.QualifiedName())
}

// resolve finds the relation a DDL statement names: a qualified name in its
// schema (3F000 if that does not exist), an unqualified one on the search
// path. It returns nil if there is none.
func (e *Engine) resolve(cat *catalog.Catalog, path []string, n ir.ObjectName) (*catalog.Relation, error) {
	if n.Schema == "" {
		return cat.Resolve(path, n.Name), nil
	}
	if cat.Schema(n.Schema) == nil {
		return nil, sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", n.Schema)
	}
	return cat.LookupIn(n.Schema, n.Name), nil
}

// checkSchema fails with 3F000 if schema was dropped since the statement
// was bound.
func (e *Engine) checkSchema(cat *catalog.Catalog, schema string) error {
	if cat.Schema(schema) == nil {
		return sqlerr.New(sqlerr.InvalidSchemaName, "schema \"%s\" does not exist", schema)
	}
	return nil
}

// createPlainView is CREATE [OR REPLACE] VIEW: the view's catalog entry
// (its statement, columns and the relations it names) is all there is.
func (e *Engine) createPlainView(cat *catalog.Catalog, st *sql.CreateView) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if err := e.checkSchema(cat, st.Name.Schema); err != nil {
		return err
	}
	rel := &catalog.Relation{
		Database: cat.DatabaseName(),
		Schema:   st.Name.Schema,
		Name:     st.Name.Name,
		Kind:     catalog.View,
		Columns:  st.Columns,
		SQL:      st.SQL,
		Refs:     st.Refs,
		// The SQL functions the view calls.
		Functions:      st.Functions,
		CallsFunctions: st.CallsFunctions,
		ReadsThrough:   st.ReadsThrough,
	}
	if old := cat.LookupIn(st.Name.Schema, st.Name.Name); old != nil {
		if !st.Replace {
			return sqlerr.New(sqlerr.DuplicateTable, "relation \"%s\" already exists", st.Name.Name)
		}
		if old.Kind != catalog.View {
			return sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a view", st.Name.Name)
		}
		if err := e.checkReplaceView(old, rel); err != nil {
			return err
		}
		rel.ID = old.ID
	} else {
		rel.ID = e.catSrc.allocIDs(1)[0]
	}
	for _, id := range rel.Uses() {
		if r := cat.ByID(id); r == nil {
			return sqlerr.New(sqlerr.UndefinedTable, "relation %d the view reads was dropped", id)
		}
	}
	if err := e.commitCatalogChange(func() error { return e.catSrc.put(rel) }); err != nil {
		return err
	}
	cat.Add(rel)
	return nil
}

// checkReplaceView checks that CREATE OR REPLACE VIEW may replace old by
// rel: as in PostgreSQL the new query keeps every column's name and type
// and may only add columns at the end. streamsql also refuses a new
// definition under a materialized view (whose dataflow was built from the
// old one), new columns under views (which would take them in through *),
// and a view that would read itself.
func (e *Engine) checkReplaceView(old, rel *catalog.Relation) error {
	if len(rel.Columns) < len(old.Columns) {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "cannot drop columns from view")
	}
	for i, oc := range old.Columns {
		nc := rel.Columns[i]
		if oc.Name != nc.Name {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "cannot change name of view column \"%s\" to \"%s\"", oc.Name, nc.Name).
				WithHint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.")
		}
		if oc.Type != nc.Type {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "cannot change data type of view column \"%s\" from %s to %s", oc.Name, oc.Type, nc.Type)
		}
	}
	// Everything that reads old, directly or through views.
	var readers []*catalog.Relation
	seen := map[uint32]bool{}
	var visit func(id uint32)
	visit = func(id uint32) {
		for _, d := range e.cat.Dependents(id) {
			if !seen[d.ID] {
				seen[d.ID] = true
				readers = append(readers, d)
				visit(d.ID)
			}
		}
	}
	visit(old.ID)
	for _, r := range readers {
		if r.Kind == catalog.MaterializedView {
			return sqlerr.Unsupported("replacing view %s, which materialized view %s reads", old.Name, r.Name)
		}
	}
	if len(rel.Columns) > len(old.Columns) && len(readers) > 0 {
		return sqlerr.Unsupported("adding columns to view %s, which view %s reads", old.Name, readers[0].Name)
	}
	// The new definition must not read the view, directly or through views.
	var reads func(ids []uint32, depth int) bool
	reads = func(ids []uint32, depth int) bool {
		for _, id := range ids {
			if id == old.ID {
				return true
			}
			if r := e.cat.ByID(id); r != nil && r.Kind == catalog.View && depth < 64 && reads(r.Uses(), depth+1) {
				return true
			}
		}
		return false
	}
	if reads(rel.Uses(), 0) {
		return sqlerr.New(sqlerr.InvalidObjectDefinition, "infinite recursion detected in rules for relation \"%s\"", old.Name)
	}
	return nil
}

// dropOrder returns targets and everything that depends on them, dependents
// first (the order to drop them in), and PostgreSQL's DETAIL lines for the
// dependents that are not targets themselves ("view v depends on table t"),
// in the order they are found, as PostgreSQL lists them.
func (e *Engine) dropOrder(cat *catalog.Catalog, targets, named []*catalog.Relation, path []string) ([]*catalog.Relation, []string) {
	var order []*catalog.Relation
	var lines []string
	seen := map[uint32]bool{}
	var visit func(r *catalog.Relation)
	visit = func(r *catalog.Relation) {
		seen[r.ID] = true
		for _, d := range cat.Dependents(r.ID) {
			if seen[d.ID] {
				continue
			}
			if !slices.ContainsFunc(targets, func(t *catalog.Relation) bool { return t.ID == d.ID }) {
				lines = append(lines, fmt.Sprintf("%s depends on %s", e.describe(cat, path, d), e.describe(cat, path, r)))
			}
			visit(d)
		}
		order = append(order, r)
	}
	for _, r := range targets {
		if !seen[r.ID] {
			visit(r)
		}
	}
	return order, lines
}

// dropRelations drops order (dependents first); the relations not in named
// are announced as cascaded.
func (e *Engine) dropRelations(ctx context.Context, cat *catalog.Catalog, order, named []*catalog.Relation, path []string, w notifier) error {
	for _, r := range order {
		if !slices.ContainsFunc(named, func(n *catalog.Relation) bool { return n.ID == r.ID }) {
			if err := w.Notice("NOTICE", "00000", "drop cascades to "+e.describe(cat, path, r)); err != nil {
				return err
			}
		}
		var err error
		switch r.Kind {
		case catalog.Table:
			err = e.dropTable(ctx, r)
		case catalog.Source:
			err = e.dropSource(ctx, r)
		case catalog.View:
			err = e.dropPlainView(r)
		default:
			err = e.dropView(ctx, r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// dropPlainView removes a view's catalog entry.
func (e *Engine) dropPlainView(rel *catalog.Relation) error {
	e.cat.Remove(rel.ID)
	return e.commitCatalogChange(func() error { e.catSrc.delete(rel.ID); return nil })
}
