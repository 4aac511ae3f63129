package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// notifier sends notices to the client.
type notifier interface {
	Notice(severity, code, message string) error
}

// nameTaken reports whether a relation called name exists in schema, and
// what CREATE then returns: with IF NOT EXISTS a notice and no error, else
// 42P07. A schema dropped since the statement was bound is 3F000.
func (e *Engine) nameTaken(cat *catalog.Catalog, schema, name string, ifNotExists bool, w notifier) (bool, error) {
	if err := e.checkSchema(cat, schema); err != nil {
		return true, err
	}
	if rel, _ := cat.LookupIndex(name); cat.LookupIn(schema, name) == nil && rel == nil {
		return false, nil
	}
	if ifNotExists {
		return true, w.Notice("NOTICE", sqlerr.DuplicateTable, fmt.Sprintf("relation \"%s\" already exists, skipping", name))
	}
	return true, sqlerr.New(sqlerr.DuplicateTable, "relation \"%s\" already exists", name)
}

// createTable creates a table; it returns once the catalog entry is
// committed.
func (e *Engine) createTable(ctx context.Context, cat *catalog.Catalog, stmt *ir.CreateTable, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if exists, err := e.nameTaken(cat, stmt.Schema, stmt.Name, stmt.IfNotExists, w); exists {
		return err
	}
	ids := e.catSrc.allocIDs(3)
	rel := &catalog.Relation{
		Database:   cat.DatabaseName(),
		ID:         ids[0],
		Schema:     stmt.Schema,
		Name:       stmt.Name,
		Kind:       catalog.Table,
		Columns:    stmt.Columns,
		StateTable: ids[1],
		Watermark:  stmt.Watermark,
		AppendOnly: stmt.AppendOnly,
		Checks:     stmt.Checks,
	}
	if stmt.Watermark != nil {
		rel.WatermarkTable = ids[2]
	}
	if hasSerial(stmt.Columns) {
		rel.SequenceTable = e.catSrc.allocIDs(1)[0]
	}
	if len(stmt.PrimaryKey) > 0 {
		rel.Key = stmt.PrimaryKey
		rel.PrimaryKey = true
	} else {
		rel.Columns = append(append([]catalog.Column(nil), stmt.Columns...),
			catalog.Column{Name: catalog.RowIDColumn, Type: types.Int64T, Hidden: true, NotNull: true})
		rel.Key = []int{len(rel.Columns) - 1}
	}
	for _, u := range stmt.Unique {
		u.StateTable = e.catSrc.allocIDs(1)[0]
		if u.Name == "" {
			u.Name = e.indexName(cat, rel, u.Columns, "key")
		}
		rel.Indexes = append(rel.Indexes, u)
	}
	if stmt.Connector != nil {
		if err := e.prepareKafkaTable(ctx, stmt, rel); err != nil {
			return err
		}
	}
	var cdcSnap *cdcSnapshot
	if stmt.CDC != nil {
		var err error
		if cdcSnap, err = e.prepareCDCTable(ctx, cat, stmt, rel); err != nil {
			return err
		}
	}
	rel.Options = withRetainHistory(rel.Options, stmt.RetainHistory)
	if e.retainHistoryOf(rel) > 0 {
		rel.HistoryTable = e.catSrc.allocIDs(1)[0]
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
	cat.Add(rel)
	if stmt.CDC != nil {
		return e.startCDCTable(tw, cdcSnap)
	}
	if stmt.Connector != nil {
		e.runKafkaTable(tw)
	}
	return nil
}

// drop drops tables, views or sources, refusing (unless CASCADE) while
// other views depend on them.
func (e *Engine) drop(ctx context.Context, cat *catalog.Catalog, stmt *ir.Drop, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	var rels []*catalog.Relation
	for _, name := range stmt.Names {
		rel, err := e.resolve(cat, stmt.Path, name)
		if err != nil {
			if stmt.IfExists {
				if err := w.Notice("NOTICE", sqlerr.InvalidSchemaName, fmt.Sprintf("schema \"%s\" does not exist, skipping", name.Schema)); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if rel == nil || rel.Kind == catalog.SystemTable {
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
			return sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not a %s", name.Name, stmt.Kind).
				WithHint("Use DROP %s to remove a %s.", dropKeyword(rel.Kind), rel.Kind)
		}
		if !contains(rels, rel) {
			rels = append(rels, rel)
		}
	}
	order, lines := e.dropOrder(cat, rels, rels, stmt.Path)
	if len(lines) > 0 && !stmt.Cascade {
		msg := "cannot drop desired object(s) because other objects depend on them"
		if len(rels) == 1 {
			msg = fmt.Sprintf("cannot drop %s because other objects depend on it", e.describe(cat, stmt.Path, rels[0]))
		}
		return sqlerr.New(sqlerr.DependentObjectsStillExist, "%s", msg).
			WithDetail(strings.Join(lines, "\n")).
			WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
	}
	return e.dropRelations(ctx, cat, order, rels, stmt.Path, w)
}

func dropKeyword(k catalog.Kind) string {
	switch k {
	case catalog.Table:
		return "TABLE"
	case catalog.Source:
		return "SOURCE"
	case catalog.View:
		return "VIEW"
	case catalog.Sink:
		return "SINK"
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
				e.cleanup.add(x.Table)
			}
			if tw.wmTable != nil {
				e.cleanup.add(tw.wmTable)
			}
			if tw.seq != nil {
				e.cleanup.add(tw.seq.table)
			}
			if tw.cdcOffset != nil {
				e.cleanup.add(tw.cdcOffset) // a connector's position
			}
			e.stopHistory(rel.ID, tw.disp)
			e.mu.Lock()
			delete(e.tables, rel.ID)
			e.mu.Unlock()
		},
	})
	return e.awaitCommit(e.ctx, epoch+1)
}
