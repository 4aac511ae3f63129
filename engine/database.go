package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// Databases.
//
// A database is a namespace in the catalog (catalog.Database): every
// database shares the one state store, checkpoint coordinator and epoch, so
// CREATE DATABASE and DROP DATABASE are catalog changes like any DDL and
// cost no more than a schema. Sessions work in the database they connect
// to; names never reach across databases.

// Catalog keys of databases: databasePrefix + big-endian id -> JSON
// database. The default database is not stored.
var databasePrefix = []byte("d")

func databaseKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), databasePrefix...), id)
}

func (c *catalogSource) putDatabase(d *catalog.Database) error {
	v, err := d.Encode()
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Put(databaseKey(d.ID), v)
	return nil
}

func (c *catalogSource) deleteDatabase(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table.Delete(databaseKey(id))
}

// loadDatabases reads the committed databases.
func (e *Engine) loadDatabases(snap *state.Snapshot) error {
	it, err := snap.NewIter(catalogTable, databasePrefix, state.PrefixEnd(databasePrefix))
	if err != nil {
		return err
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		d, err := catalog.DecodeDatabase(it.Value())
		if err != nil {
			return err
		}
		e.cat.AddDatabase(d)
	}
	return it.Error()
}

// sessionOpened and sessionClosed count the sessions connected to each
// database, which DROP DATABASE refuses to pull out from under them.
func (e *Engine) sessionOpened(db string) {
	e.dbSessionsMu.Lock()
	defer e.dbSessionsMu.Unlock()
	e.dbSessions[db]++
}

func (e *Engine) sessionClosed(db string) {
	e.dbSessionsMu.Lock()
	defer e.dbSessionsMu.Unlock()
	if e.dbSessions[db]--; e.dbSessions[db] <= 0 {
		delete(e.dbSessions, db)
	}
}

// awaitSessionsGone waits up to 5 seconds, as PostgreSQL does, for the
// sessions of db to end (a client that just disconnected may not have been
// noticed yet) and returns how many are left.
func (e *Engine) awaitSessionsGone(ctx context.Context, db string) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := e.sessionsIn(db)
		if n == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *Engine) sessionsIn(db string) int {
	e.dbSessionsMu.Lock()
	defer e.dbSessionsMu.Unlock()
	return e.dbSessions[db]
}

// createDatabase is CREATE DATABASE.
func (e *Engine) createDatabase(st *sql.CreateDatabase) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if e.cat.Database(st.Name) != nil {
		return sqlerr.New(sqlerr.DuplicateDatabase, "database \"%s\" already exists", st.Name)
	}
	d := &catalog.Database{ID: e.catSrc.allocIDs(1)[0], Name: st.Name}
	if err := e.commitCatalogChange(func() error { return e.catSrc.putDatabase(d) }); err != nil {
		return err
	}
	e.cat.AddDatabase(d)
	return nil
}

// dropDatabase is DROP DATABASE: it drops every relation, function and
// schema in the database, then the database. As in PostgreSQL it is refused for the
// session's own database and, without FORCE, while other sessions use it.
// With FORCE their next statements fail with 3D000.
func (e *Engine) dropDatabase(ctx context.Context, s *session, st *sql.DropDatabase, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	d := e.cat.Database(st.Name)
	switch {
	case d == nil && st.IfExists:
		return w.Notice("NOTICE", sqlerr.InvalidCatalogName, fmt.Sprintf("database \"%s\" does not exist, skipping", st.Name))
	case d == nil:
		return sqlerr.New(sqlerr.InvalidCatalogName, "database \"%s\" does not exist", st.Name)
	case st.Name == s.cat.DatabaseName():
		return sqlerr.New(sqlerr.ObjectInUse, "cannot drop the currently open database")
	case st.Name == catalog.DefaultDatabase:
		return sqlerr.Unsupported("dropping the default database %s", st.Name)
	}
	if n := e.awaitSessionsGone(ctx, st.Name); n > 0 && !st.Force {
		detail := "There is 1 other session using the database."
		if n > 1 {
			detail = fmt.Sprintf("There are %d other sessions using the database.", n)
		}
		return sqlerr.New(sqlerr.ObjectInUse, "database \"%s\" is being accessed by other users", st.Name).WithDetail(detail)
	}
	cat := e.cat.In(st.Name)
	var rels []*catalog.Relation
	for _, r := range cat.InDatabase() {
		if r.Kind != catalog.SystemTable {
			rels = append(rels, r)
		}
	}
	order, _ := e.dropOrder(cat, rels, rels, nil)
	if err := e.dropRelations(ctx, cat, order, order, nil, w); err != nil {
		return err
	}
	for _, fn := range cat.Functions() {
		if err := e.commitCatalogChange(func() error { e.catSrc.deleteFunction(fn.ID); return nil }); err != nil {
			return err
		}
		cat.RemoveFunction(fn.ID)
	}
	for _, sc := range cat.Schemas() {
		if sc.ID != 0 {
			if err := e.commitCatalogChange(func() error { e.catSrc.deleteSchema(sc.ID); return nil }); err != nil {
				return err
			}
		}
	}
	if err := e.commitCatalogChange(func() error { e.catSrc.deleteDatabase(d.ID); return nil }); err != nil {
		return err
	}
	cat.RemoveDatabase(st.Name)
	return nil
}

// checkDatabase fails a statement of a session whose database was dropped
// (DROP DATABASE ... WITH (FORCE)).
func (s *session) checkDatabase() error {
	if s.e.cat.Database(s.cat.DatabaseName()) == nil {
		return sqlerr.New(sqlerr.InvalidCatalogName, "database \"%s\" does not exist", s.cat.DatabaseName())
	}
	return nil
}
