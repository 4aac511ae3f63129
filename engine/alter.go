package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
)

// executeAlter runs the statements of everyday DDL and maintenance (ALTER
// TABLE, RENAME, TRUNCATE, VACUUM, ANALYZE, COMMENT ON); ok is false for
// any other statement.
func (e *Engine) executeAlter(ctx context.Context, cat *catalog.Catalog, st ir.Statement, q batchQuery, w notifier) (ok bool, err error) {
	switch st := st.(type) {
	case *sql.Truncate:
		return true, e.truncate(ctx, st, q)
	case *sql.Vacuum:
		return true, nil
	case *sql.CommentOn:
		return true, e.comment(cat, st)
	case *sql.RenameRelation:
		return true, e.renameRelation(cat, st, w)
	case *sql.RenameColumn:
		return true, e.renameColumn(cat, st)
	case *sql.RewriteTable:
		return true, e.rewriteTable(ctx, cat, st, q)
	case *sql.AlterNoop:
		if st.Notice == "" {
			return true, nil
		}
		return true, w.Notice("NOTICE", st.Code, st.Notice)
	case *sql.AlterColumn:
		return true, e.alterColumn(cat, st)
	case *sql.AlterRetainHistory:
		return true, e.alterRetainHistory(cat, st)
	}
	return false, nil
}

// truncate deletes every row of each table, one table after the other, as
// DELETE without WHERE does: views see the deletes.
func (e *Engine) truncate(ctx context.Context, st *sql.Truncate, q batchQuery) error {
	for _, t := range st.Tables {
		if _, err := e.modify(ctx, &ir.Delete{Table: t, Rows: &ir.Scan{Relation: t}}, q); err != nil {
			return err
		}
	}
	return nil
}

// replaceRelation commits changed as the catalog entry of its relation,
// whose rows and dataflow it does not change (a new name, a comment), and
// gives it to the relation's table writer or running view.
func (e *Engine) replaceRelation(cat *catalog.Catalog, changed *catalog.Relation) error {
	e.mu.Lock()
	tw := e.tables[changed.ID]
	e.mu.Unlock()
	var grants []catalog.Grant
	if old := cat.ByID(changed.ID); old != nil {
		grants = e.columnGrantChanges(old, changed)
	}
	var catErr error
	epoch := e.coord.Schedule(barrier.Change{
		AfterInject: func(uint64) {
			if tw != nil {
				tw.mu.Lock()
				tw.rel = changed
				tw.mu.Unlock()
			}
			if catErr = e.catSrc.put(changed); catErr == nil {
				catErr = e.putGrantChanges(grants)
			}
		},
	})
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	if catErr != nil {
		return catErr
	}
	e.applyGrantChanges(grants)
	cat.Add(changed)
	e.setViewRelation(changed)
	return nil
}

// current returns the catalog entry of rel as it is now (under ddlMu), or
// 42P01 if it was dropped since the statement was bound.
func current(cat *catalog.Catalog, rel *catalog.Relation) (*catalog.Relation, error) {
	r := cat.ByID(rel.ID)
	if r == nil {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", rel.Name)
	}
	return r, nil
}

func (e *Engine) comment(cat *catalog.Catalog, st *sql.CommentOn) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel, err := current(cat, st.Rel)
	if err != nil {
		return err
	}
	changed := *rel
	if st.Column < 0 {
		changed.Comment = st.Comment
	} else {
		if st.Column >= len(rel.Columns) || rel.Columns[st.Column].Name != st.Rel.Columns[st.Column].Name {
			return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", st.Rel.Columns[st.Column].Name, rel.Name)
		}
		changed.Columns = append([]catalog.Column(nil), rel.Columns...)
		changed.Columns[st.Column].Comment = st.Comment
	}
	return e.replaceRelation(cat, &changed)
}

// renameRelation renames a table, view, materialized view or source. The
// views that read it keep working: their stored definitions resolve each
// name they hold by the relation's id (catalog.Relation.Refs), not by its
// name.
func (e *Engine) renameRelation(cat *catalog.Catalog, st *sql.RenameRelation, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel, err := current(cat, st.Rel)
	if err != nil {
		return err
	}
	if exists, err := e.nameTaken(cat, rel.Schema, st.NewName, false, w); exists {
		return err
	}
	for _, d := range cat.Dependents(rel.ID) {
		if len(d.Refs) == 0 && d.SQL != "" {
			// Stored before Refs existed: it finds its inputs by name.
			return sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot rename %s \"%s\" because %s \"%s\" names it", rel.Kind, rel.Name, d.Kind, d.Name).
				WithHint("Recreate the dependent view first.")
		}
	}
	changed := *rel
	changed.Name = st.NewName
	return e.replaceRelation(cat, &changed)
}

// renameColumn renames a table's column. Views store their definitions as
// text, which names the column: while any depends on the table the rename
// is refused.
func (e *Engine) renameColumn(cat *catalog.Catalog, st *sql.RenameColumn) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel, err := current(cat, st.Rel)
	if err != nil {
		return err
	}
	if rel.Kind != catalog.Table {
		return sqlerr.Unsupported("renaming a column of a %s", rel.Kind)
	}
	old := st.Rel.Columns[st.Column].Name
	if st.Column >= len(rel.Columns) || rel.Columns[st.Column].Name != old {
		return sqlerr.New(sqlerr.UndefinedColumn, "column \"%s\" does not exist", old)
	}
	if rel.ColumnIndex(st.NewName) >= 0 {
		return sqlerr.New(sqlerr.DuplicateColumn, "column \"%s\" of relation \"%s\" already exists", st.NewName, rel.Name)
	}
	if err := refuseDependents(cat, rel, "rename column \""+old+"\" of"); err != nil {
		return err
	}
	changed := *rel
	changed.Columns = append([]catalog.Column(nil), rel.Columns...)
	changed.Columns[st.Column].Name = st.NewName
	return e.replaceRelation(cat, &changed)
}

// alterColumn commits a column's new default or nullability: the catalog
// entry only (INSERT binds defaults from it, the table writer checks NOT
// NULL from it).
func (e *Engine) alterColumn(cat *catalog.Catalog, st *sql.AlterColumn) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel, err := current(cat, st.Rel)
	if err != nil {
		return err
	}
	if rel != st.Rel {
		return sqlerr.New("40001", "table \"%s\" was changed by another statement; try again", rel.Name)
	}
	changed := *rel
	changed.Columns = append([]catalog.Column(nil), rel.Columns...)
	changed.Columns[st.Index] = st.Column
	return e.replaceRelation(cat, &changed)
}

// refuseDependents fails while views depend on rel: their definitions and
// dataflows are bound to its columns as they are.
func refuseDependents(cat *catalog.Catalog, rel *catalog.Relation, what string) error {
	deps := cat.Dependents(rel.ID)
	if len(deps) == 0 {
		return nil
	}
	var lines []string
	for _, d := range deps {
		lines = append(lines, fmt.Sprintf("%s %s depends on table %s", d.Kind, d.Name, rel.Name))
	}
	return sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot %s table %s because other objects depend on it", what, rel.Name).
		WithDetail(strings.Join(lines, "\n")).
		WithHint("Drop the dependent objects first, and create them again after the change.")
}

// rewriteTable runs an ALTER TABLE that changes the table's row format
// (sql.RewriteTable): between two barriers, under the table's write lock,
// every row is written again into a new state table, the indexes are
// rebuilt, and the new catalog entry is written, all in one epoch; the old
// rows are cleared at the next barrier. Views read a table's change stream
// in its old format, so while any depends on the table the change is
// refused (for DROP COLUMN with PostgreSQL's 2BP01), except ADD PRIMARY
// KEY, which re-plans them (rekeyTable).
func (e *Engine) rewriteTable(ctx context.Context, cat *catalog.Catalog, st *sql.RewriteTable, q batchQuery) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel, err := current(cat, st.Table)
	if err != nil {
		return err
	}
	if rel != st.Table {
		return sqlerr.New("40001", "table \"%s\" was changed by another statement; try again", rel.Name)
	}
	rekey := st.What == "add primary key" && len(cat.Dependents(rel.ID)) > 0
	if err := refuseDependents(cat, rel, st.What+" of"); err != nil && !rekey {
		if st.What == "drop column" {
			se := err.(*sqlerr.Error)
			se.Message = fmt.Sprintf("cannot drop column %s of table %s because other objects depend on it", dropped(rel, st), rel.Name)
		}
		return err
	}
	if rel.Watermark != nil {
		return sqlerr.Unsupported("ALTER TABLE ... %s of a table with a watermark", strings.ToUpper(st.What))
	}
	if rel.CDCOffsetTable != 0 {
		// Its reader decodes into the columns it started with.
		return sqlerr.Unsupported("ALTER TABLE ... %s of a table fed by a connector", strings.ToUpper(st.What))
	}
	rw, err := e.planRewrite(cat, rel, st)
	if err != nil {
		return err
	}
	e.mu.Lock()
	tw := e.tables[rel.ID]
	e.mu.Unlock()
	if tw == nil {
		return sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", rel.Name)
	}
	if rekey {
		return e.rekeyTable(ctx, cat, rel, rw, tw, q)
	}
	var rwErr error
	epoch := e.coord.Schedule(barrier.Change{
		AfterInject: func(uint64) {
			tw.mu.Lock()
			defer tw.mu.Unlock()
			rwErr = e.applyRewrite(ctx, rel, rw, tw, q)
		},
	})
	if err := e.coord.WaitInjected(e.ctx, epoch); err != nil {
		return err
	}
	if rwErr != nil {
		return rwErr
	}
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	e.applyGrantChanges(rw.grants)
	cat.Add(rw.rel)
	return nil
}

// plannedRewrite is a table rewrite ready to run: the table's new catalog
// entry, the batch plan computing its rows, and the map of its columns to
// the old ones.
type plannedRewrite struct {
	rel    *catalog.Relation
	root   planner.Node
	colMap []int
	// grants are the changes to column grants the rewrite commits
	// (columnGrantChanges), set by applyRewrite.
	grants []catalog.Grant
}

// planRewrite makes rel's new catalog entry for st, with new state tables,
// and plans the computation of its rows.
func (e *Engine) planRewrite(cat *catalog.Catalog, rel *catalog.Relation, st *sql.RewriteTable) (*plannedRewrite, error) {
	changed := *rel
	changed.Columns, changed.Key, changed.PrimaryKey = st.Columns, st.Key, st.PrimaryKey
	changed.StateTable = e.catSrc.allocIDs(1)[0]
	if st.KeyName != "" {
		changed.PrimaryKeyName = st.KeyName
	}
	// CHECK constraints on a dropped column go with it, as in PostgreSQL.
	changed.Checks = nil
	for _, c := range rel.Checks {
		one := &catalog.Relation{Name: rel.Name, Columns: changed.Columns, Checks: []catalog.Check{c}}
		if _, err := sql.BindChecks(cat, one); err == nil {
			changed.Checks = append(changed.Checks, c)
		}
	}
	colMap := newColumnMap(rel, &changed)
	var err error
	if changed.Indexes, err = remapIndexes(rel, colMap); err != nil {
		return nil, err
	}
	for i := range changed.Indexes {
		changed.Indexes[i].StateTable = e.catSrc.allocIDs(1)[0]
	}
	// The history's rows have the old columns: a new one starts, in a new
	// state table.
	if changed.HistoryTable != 0 {
		changed.HistoryTable = e.catSrc.allocIDs(1)[0]
	}
	snap := e.store.Snapshot()
	root, _, err := planner.PlanBatchWith(st.Rows, planner.BatchOptions{Rows: rowCounts(snap)})
	snap.Release()
	if err != nil {
		return nil, err
	}
	return &plannedRewrite{rel: &changed, root: root, colMap: colMap}, nil
}

// applyRewrite rewrites the table's rows as rw describes and writes its new
// catalog entry. The caller holds tw.mu, between two barriers; on error
// nothing changed.
func (e *Engine) applyRewrite(ctx context.Context, rel *catalog.Relation, rw *plannedRewrite, tw *tableWriter, q batchQuery) error {
	if err := tw.checkLive(); err != nil {
		return err
	}
	if err := tw.rewrite(ctx, rw.rel, rw.root, q, rw.colMap); err != nil {
		return err
	}
	e.stopHistory(rel.ID, tw.disp)
	e.startHistory(rw.rel, tw.disp)
	if err := e.catSrc.put(rw.rel); err != nil {
		return err
	}
	rw.grants = e.columnGrantChanges(rel, rw.rel)
	return e.putGrantChanges(rw.grants)
}

// dropped names the column a DROP COLUMN rewrite leaves out.
func dropped(rel *catalog.Relation, st *sql.RewriteTable) string {
	for _, c := range rel.Columns {
		if (&catalog.Relation{Columns: st.Columns}).ColumnIndex(c.Name) < 0 {
			return c.Name
		}
	}
	return ""
}

// newColumnMap maps each column of to (by index) to the column of from with
// its name, or -1 for a new column.
func newColumnMap(from, to *catalog.Relation) []int {
	m := make([]int, len(to.Columns))
	for i, c := range to.Columns {
		m[i] = from.ColumnIndex(c.Name)
	}
	return m
}

// remapIndexes renumbers from's indexes for the columns of a rewrite
// (colMap: new column to old), refusing to drop a column an index uses.
func remapIndexes(from *catalog.Relation, colMap []int) ([]catalog.Index, error) {
	toNew := map[int]int{}
	for n, o := range colMap {
		if o >= 0 {
			toNew[o] = n
		}
	}
	var out []catalog.Index
	for _, x := range from.Indexes {
		y := x
		y.Columns, y.Include = nil, nil
		for _, lists := range [][2]*[]int{{&x.Columns, &y.Columns}, {&x.Include, &y.Include}} {
			for _, c := range *lists[0] {
				n, ok := toNew[c]
				if !ok {
					return nil, sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot drop column %s of table %s because other objects depend on it", from.Columns[c].Name, from.Name).
						WithDetail(fmt.Sprintf("index %s depends on column %s of table %s", x.Name, from.Columns[c].Name, from.Name)).
						WithHint("Drop the index first.")
				}
				*lists[1] = append(*lists[1], n)
			}
		}
		out = append(out, y)
	}
	return out, nil
}
