package engine

import (
	"context"
	"fmt"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// notifier sends notices to the client.
type notifier interface {
	Notice(severity, code, message string) error
}

// nameTaken reports whether a relation called name exists, and what CREATE
// then returns: with IF NOT EXISTS a notice and no error, else 42P07.
func (e *Engine) nameTaken(name string, ifNotExists bool, w notifier) (bool, error) {
	if rel, _ := e.cat.LookupIndex(name); e.cat.Lookup(name) == nil && rel == nil {
		return false, nil
	}
	if ifNotExists {
		return true, w.Notice("NOTICE", sqlerr.DuplicateTable, fmt.Sprintf("relation \"%s\" already exists, skipping", name))
	}
	return true, sqlerr.New(sqlerr.DuplicateTable, "relation \"%s\" already exists", name)
}

// createTable creates a table; it returns once the catalog entry is
// committed.
func (e *Engine) createTable(ctx context.Context, stmt *sql.CreateTable, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if exists, err := e.nameTaken(stmt.Name, stmt.IfNotExists, w); exists {
		return err
	}
	ids := e.catSrc.allocIDs(3)
	rel := &catalog.Relation{
		ID:         ids[0],
		Name:       stmt.Name,
		Kind:       catalog.Table,
		Columns:    stmt.Columns,
		StateTable: ids[1],
		Watermark:  stmt.Watermark,
		AppendOnly: stmt.AppendOnly,
	}
	if stmt.Watermark != nil {
		rel.WatermarkTable = ids[2]
	}
	if len(stmt.PrimaryKey) > 0 {
		rel.Key = stmt.PrimaryKey
		rel.PrimaryKey = true
	} else {
		rel.Columns = append(append([]catalog.Column(nil), stmt.Columns...),
			catalog.Column{Name: catalog.RowIDColumn, Type: types.Int64T, Hidden: true, NotNull: true})
		rel.Key = []int{len(rel.Columns) - 1}
	}
	tw, err := newTableWriter(e, rel)
	if err != nil {
		return err
	}
	var catErr error
	epoch := e.coord.Schedule(barrier.Change{
		AfterInject: func(epoch uint64) {
			// Registered between barriers: the table's first barrier is the
			// next one, and its catalog entry lands in the same epoch.
			tw.sealed = epoch
			e.mu.Lock()
			e.tables[rel.ID] = tw
			e.mu.Unlock()
			e.coord.AddSource(tw)
			catErr = e.catSrc.put(rel)
		},
	})
	if err := e.coord.WaitInjected(e.ctx, epoch); err != nil {
		return err
	}
	if catErr != nil {
		return catErr
	}
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	e.cat.Add(rel)
	return nil
}

// drop drops tables or views, refusing (unless CASCADE) while other views
// depend on them.
func (e *Engine) drop(ctx context.Context, stmt *sql.Drop, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	var rels []*catalog.Relation
	for _, name := range stmt.Names {
		rel := e.cat.Lookup(name)
		if rel == nil {
			kind := stmt.Kind.String()
			if stmt.IfExists {
				if err := w.Notice("NOTICE", sqlerr.UndefinedTable, fmt.Sprintf("%s \"%s\" does not exist, skipping", kind, name)); err != nil {
					return err
				}
				continue
			}
			return sqlerr.New(sqlerr.UndefinedTable, "%s \"%s\" does not exist", kind, name)
		}
		if rel.Kind != stmt.Kind {
			return sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a %s", name, stmt.Kind).
				WithHint("Use DROP %s to remove a %s.", dropKeyword(rel.Kind), rel.Kind)
		}
		rels = append(rels, rel)
	}
	// Collect dependents, deepest first.
	var order []*catalog.Relation
	seen := map[uint32]bool{}
	var visit func(r *catalog.Relation) error
	visit = func(r *catalog.Relation) error {
		if seen[r.ID] {
			return nil
		}
		seen[r.ID] = true
		for _, d := range e.cat.Dependents(r.ID) {
			if !stmt.Cascade && !contains(rels, d) {
				return sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot drop %s %s because other objects depend on it", r.Kind, r.Name).
					WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
			}
			if err := visit(d); err != nil {
				return err
			}
		}
		order = append(order, r)
		return nil
	}
	for _, r := range rels {
		if err := visit(r); err != nil {
			return err
		}
	}
	for _, r := range order {
		if stmt.Cascade && !contains(rels, r) {
			if err := w.Notice("NOTICE", "00000", fmt.Sprintf("drop cascades to %s %s", r.Kind, r.Name)); err != nil {
				return err
			}
		}
		var err error
		switch r.Kind {
		case catalog.Table:
			err = e.dropTable(ctx, r)
		case catalog.Source:
			err = e.dropSource(ctx, r)
		default:
			err = e.dropView(ctx, r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func dropKeyword(k catalog.Kind) string {
	switch k {
	case catalog.Table:
		return "TABLE"
	case catalog.Source:
		return "SOURCE"
	}
	return "MATERIALIZED VIEW"
}

func contains(rs []*catalog.Relation, r *catalog.Relation) bool {
	for _, x := range rs {
		if x.ID == r.ID {
			return true
		}
	}
	return false
}

// dropTable stops the table's change stream at a barrier and removes it.
func (e *Engine) dropTable(ctx context.Context, rel *catalog.Relation) error {
	e.mu.Lock()
	tw := e.tables[rel.ID]
	e.mu.Unlock()
	e.cat.Remove(rel.ID)
	epoch := e.coord.Schedule(barrier.Change{
		AfterInject: func(uint64) {
			e.coord.RemoveSource(tw)
			tw.mu.Lock()
			tw.dropped = true
			tw.mu.Unlock()
			e.catSrc.delete(rel.ID)
			e.cleanup.add(tw.table)
			for _, x := range tw.indexes {
				e.cleanup.add(x.table)
			}
			if tw.wmTable != nil {
				e.cleanup.add(tw.wmTable)
			}
			e.mu.Lock()
			delete(e.tables, rel.ID)
			e.mu.Unlock()
		},
	})
	return e.awaitCommit(e.ctx, epoch+1)
}
