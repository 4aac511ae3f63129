package engine

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/state"
)

// maxIdentifierLength is PostgreSQL's NAMEDATALEN - 1.
const maxIdentifierLength = 63

// createIndex builds a secondary index of a table. The index is built from
// the table's rows between two barriers, under the table's write lock, and
// its entries and catalog entry commit in the same epoch; from then on every
// write of the table writes the index in the write's epoch. It returns once
// that epoch is committed: queries planned afterwards use the index.
func (e *Engine) createIndex(ctx context.Context, cat *catalog.Catalog, st *ir.CreateIndex, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	rel := cat.ByID(st.Table.ID)
	if rel == nil {
		return sqlerr.New(sqlerr.UndefinedTable, "relation \"%s\" does not exist", st.Table.Name)
	}
	switch rel.Kind {
	case catalog.Table, catalog.MaterializedView:
	default:
		return sqlerr.New(sqlerr.WrongObjectType, "cannot create index on %s \"%s\"", rel.Kind, rel.Name)
	}
	if st.Unique && rel.Kind != catalog.Table {
		return sqlerr.Unsupported("unique indexes on a %s", rel.Kind)
	}
	name := st.Name
	if name == "" {
		name = e.indexName(cat, rel, st.Columns, indexSuffix(st.Constraint))
	} else if exists, err := e.nameTaken(cat, rel.Schema, name, st.IfNotExists, w); exists {
		return err
	}
	def := catalog.Index{
		Name:       name,
		Columns:    st.Columns,
		Include:    st.Include,
		StateTable: e.catSrc.allocIDs(1)[0],
		Unique:     st.Unique,
	}
	if slices.Contains(st.Desc, true) {
		def.Desc = st.Desc
	}
	withIndex := rel.WithIndexes(append(slices.Clip(rel.Indexes), def))
	if rel.Kind == catalog.MaterializedView {
		return e.createViewIndex(cat, withIndex, def)
	}
	e.mu.Lock()
	tw := e.tables[rel.ID]
	e.mu.Unlock()
	var buildErr error
	epoch := e.coord.Schedule(barrier.Change{
		AfterInject: func(uint64) {
			tw.mu.Lock()
			defer tw.mu.Unlock()
			if err := tw.checkLive(); err != nil {
				buildErr = err
				return
			}
			if buildErr = tw.checkUniqueRows(def); buildErr != nil {
				return
			}
			if buildErr = tw.addIndex(withIndex, def); buildErr != nil {
				return
			}
			buildErr = e.catSrc.put(withIndex)
		},
	})
	if err := e.coord.WaitInjected(e.ctx, epoch); err != nil {
		return err
	}
	if buildErr != nil {
		return buildErr
	}
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	cat.Add(withIndex)
	return nil
}

// indexName chooses the name PostgreSQL gives an unnamed index: the table
// and column names joined by _, then _kind (idx, or key for a constraint),
// then a number if taken.
func (e *Engine) indexName(cat *catalog.Catalog, rel *catalog.Relation, cols []int, kind string) string {
	parts := []string{rel.Name}
	for _, c := range cols {
		parts = append(parts, rel.Columns[c].Name)
	}
	base := strings.Join(parts, "_")
	for n := 0; ; n++ {
		suffix := "_" + kind
		if n > 0 {
			suffix += strconv.Itoa(n)
		}
		name := base
		if len(name)+len(suffix) > maxIdentifierLength {
			name = name[:maxIdentifierLength-len(suffix)]
		}
		name += suffix
		if other, _ := cat.LookupIndex(name); other == nil && cat.Lookup(name) == nil {
			return name
		}
	}
}

// dropIndex drops indexes: queries stop using each at once, and its table
// stops writing it and its entries are deleted at the next barrier.
func (e *Engine) dropIndex(ctx context.Context, cat *catalog.Catalog, st *ir.DropIndex, w notifier) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	for _, name := range st.Names {
		rel, idx := cat.LookupIndex(name)
		if rel == nil {
			if r := cat.Lookup(name); r != nil {
				return sqlerr.New(sqlerr.WrongObjectType, "\"%s\" is not an index", name).
					WithHint("Use DROP %s to remove a %s.", dropKeyword(r.Kind), r.Kind)
			}
			if st.IfExists {
				if err := w.Notice("NOTICE", "00000", fmt.Sprintf("index \"%s\" does not exist, skipping", name)); err != nil {
					return err
				}
				continue
			}
			return sqlerr.New(sqlerr.UndefinedObject, "index \"%s\" does not exist", name)
		}
		var rest []catalog.Index
		for _, x := range rel.Indexes {
			if x.Name != idx.Name {
				rest = append(rest, x)
			}
		}
		without := rel.WithIndexes(rest)
		cat.Add(without)
		if rel.Kind == catalog.MaterializedView {
			if err := e.dropViewIndex(without, idx); err != nil {
				return err
			}
			continue
		}
		e.mu.Lock()
		tw := e.tables[rel.ID]
		e.mu.Unlock()
		var putErr error
		epoch := e.coord.Schedule(barrier.Change{
			AfterInject: func(uint64) {
				tw.mu.Lock()
				t := tw.dropIndex(without, name)
				tw.mu.Unlock()
				if t != nil {
					e.cleanup.add(t)
				}
				putErr = e.catSrc.put(without)
			},
		})
		if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
			return err
		}
		if putErr != nil {
			return putErr
		}
	}
	return nil
}

// createViewIndex adds index def to materialized view rel (withIndex is its
// catalog entry with the index): the view's dataflow builds the index from
// its rows when a barrier passes and writes it with its rows from then on,
// and the catalog entry commits in the epoch after that barrier, with the
// index's entries. Other writes go on meanwhile; only the view waits for the
// build.
func (e *Engine) createViewIndex(cat *catalog.Catalog, withIndex *catalog.Relation, def catalog.Index) error {
	if err := e.viewError(withIndex); err != nil {
		return err
	}
	var putErr error
	epoch := e.coord.Schedule(barrier.Change{
		Mutations: []barrier.Mutation{&exec.AddViewIndex{
			View: withIndex.ID, Index: def, Table: e.store.Table(state.TableID(def.StateTable)),
		}},
		AfterInject: func(uint64) { putErr = e.catSrc.put(withIndex) },
	})
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	if putErr != nil {
		return putErr
	}
	e.setViewRelation(withIndex)
	cat.Add(withIndex)
	return nil
}

// dropViewIndex drops index idx of a materialized view (without is its
// catalog entry without the index): the view stops writing it at a barrier,
// and once that barrier has passed the index's entries are deleted.
func (e *Engine) dropViewIndex(without *catalog.Relation, idx *catalog.Index) error {
	var putErr error
	epoch := e.coord.Schedule(barrier.Change{
		Mutations:   []barrier.Mutation{&exec.DropViewIndex{View: without.ID, Name: idx.Name}},
		AfterInject: func(uint64) { putErr = e.catSrc.put(without) },
	})
	if err := e.awaitCommit(e.ctx, epoch+1); err != nil {
		return err
	}
	if putErr != nil {
		return putErr
	}
	e.setViewRelation(without)
	e.cleanup.add(e.store.Table(state.TableID(idx.StateTable)))
	return nil
}
