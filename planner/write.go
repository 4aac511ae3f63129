package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
)

// WriteOp is what a Write does with its rows.
type WriteOp int

const (
	WriteInsert WriteOp = iota
	WriteUpdate
	WriteDelete
)

func (op WriteOp) String() string {
	switch op {
	case WriteInsert:
		return "Insert"
	case WriteUpdate:
		return "Update"
	}
	return "Delete"
}

// Write is the root of an INSERT's, UPDATE's or DELETE's plan: the write of
// the rows of Input into Table, all of them as one statement (exec hands
// them to the table's writer, exec.TableWrite: constraint checks, the write
// into the table's state and indexes, the change stream). Its output is the
// rows written, every column of the table: the new rows of an INSERT or
// UPDATE, the deleted rows of a DELETE (what RETURNING reads).
//
// Input produces, for WriteInsert, the table's visible columns followed by
// the serial flags (ir.Insert.Source); for WriteUpdate, the stored rows'
// columns then their new values (ir.Update.Rows); for WriteDelete, the
// stored rows (ir.Delete.Rows). UPDATE's and DELETE's Input reads the table
// itself, with key ranges or an index where its filter allows.
type Write struct {
	Op    WriteOp
	Table *catalog.Relation
	Input Node
	// Conflict is INSERT ... ON CONFLICT's action, or nil.
	Conflict *WriteConflict
}

// WriteConflict is what an INSERT does with a proposed row whose primary
// key a stored row holds: nothing (Set nil), or the update Set computes.
// Set is a plan of its own, run over the conflicting rows (per conflict the
// stored row's columns, then the proposed row's; see ir.OnConflict.Set).
type WriteConflict struct {
	Set Node
}

func (n *Write) Columns() []ir.Column {
	cols := make([]ir.Column, len(n.Table.Columns))
	for i, c := range n.Table.Columns {
		cols[i] = ir.Column{Name: c.Name, Type: c.Type, Hidden: c.Hidden}
	}
	return cols
}
func (n *Write) StreamKey() []int { return nil }
func (n *Write) Inputs() []Node   { return []Node{n.Input} }

// PlanWrite plans an INSERT, UPDATE or DELETE as a batch plan rooted at its
// Write. It is the plan the statement runs and EXPLAIN shows.
func PlanWrite(st ir.Statement, opts BatchOptions) (*Write, error) {
	w := &Write{}
	var rows ir.Rel
	switch st := st.(type) {
	case *ir.Insert:
		w.Op, w.Table, rows = WriteInsert, st.Table, st.Source
		if oc := st.OnConflict; oc != nil {
			w.Conflict = &WriteConflict{}
			if oc.Update {
				set, _, err := PlanBatchWith(oc.Set, BatchOptions{})
				if err != nil {
					return nil, err
				}
				w.Conflict.Set = set
			}
		}
	case *ir.Update:
		w.Op, w.Table, rows = WriteUpdate, st.Table, st.Rows
	case *ir.Delete:
		w.Op, w.Table, rows = WriteDelete, st.Table, st.Rows
	default:
		return nil, fmt.Errorf("planner: %s writes no table", st.Tag())
	}
	in, _, err := PlanBatchWith(rows, opts)
	if err != nil {
		return nil, err
	}
	w.Input = in
	return w, nil
}
