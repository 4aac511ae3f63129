package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/streamsql/streamsql/catalog"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// Env is what building operators needs.
type Env struct {
	Mem  memory.Allocator
	Eval *eval.Context
	// Table returns the state table of a plan's table slot.
	Table func(slot int) *state.Table
	// SystemRows returns the current rows of a system table (batch queries).
	SystemRows func(rel *catalog.Relation) ([]arrow.RecordBatch, error)
}

// chainOf returns the nodes from the leaf of a single-input plan up to
// root (leaf first).
func chainOf(root planner.Node) ([]planner.Node, error) {
	var nodes []planner.Node
	for n := root; ; {
		nodes = append(nodes, n)
		in := n.Inputs()
		if len(in) == 0 {
			break
		}
		if len(in) > 1 {
			return nil, fmt.Errorf("exec: %T has %d inputs", n, len(in))
		}
		n = in[0]
	}
	for i, j := 0, len(nodes)-1; i < j; i, j = i+1, j-1 {
		nodes[i], nodes[j] = nodes[j], nodes[i]
	}
	return nodes, nil
}

// operator builds the operator of one non-leaf plan node.
func operator(env Env, n planner.Node) (Operator, error) {
	switch n := n.(type) {
	case *planner.Filter:
		pred, err := eval.Compile(n.Pred)
		if err != nil {
			return nil, err
		}
		return NewFilter(env.Mem, env.Eval, pred), nil
	case *planner.Project:
		exprs := make([]eval.Evaluator, len(n.Exprs))
		for i, e := range n.Exprs {
			var err error
			if exprs[i], err = eval.Compile(e); err != nil {
				return nil, err
			}
		}
		return NewProject(env.Mem, env.Eval, exprs), nil
	case *planner.HashAgg:
		spec := HashAggSpec{
			GroupCols:  n.GroupCols,
			GroupTypes: n.GroupTypes,
			Calls:      n.Calls,
			ArgCols:    n.ArgCols,
			ArgTypes:   n.ArgTypes,
			FilterCols: n.FilterCols,
			Result:     env.Table(n.ResultTable),
		}
		for _, slot := range n.ValueSets {
			var t *state.Table
			if slot >= 0 {
				t = env.Table(slot)
			}
			spec.ValueSets = append(spec.ValueSets, t)
		}
		return NewHashAgg(env.Mem, env.Eval, spec)
	case *planner.Sort:
		return NewSort(env.Mem, n.Keys, planner.Types(n.Columns())), nil
	case *planner.Limit:
		return NewLimit(env.Mem, n.Offset, n.Count), nil
	}
	return nil, fmt.Errorf("exec: no operator for %T", n)
}

func operators(env Env, nodes []planner.Node) ([]Operator, error) {
	var ops []Operator
	for _, n := range nodes {
		op, err := operator(env, n)
		if err != nil {
			for _, o := range ops {
				o.Close()
			}
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// BuildStream builds the operators of a view's dataflow, from the one after
// the scan to the Materialize writing viewTable. The scan itself is the
// actor's input (and its backfill).
func BuildStream(env Env, p *planner.StreamPlan, viewTable *state.Table) ([]Operator, error) {
	nodes, err := chainOf(p.Root.Input)
	if err != nil {
		return nil, err
	}
	if _, ok := nodes[0].(*planner.Scan); !ok {
		return nil, fmt.Errorf("exec: a view's dataflow starts with %T, not a scan", nodes[0])
	}
	ops, err := operators(env, nodes[1:])
	if err != nil {
		return nil, err
	}
	m := p.Root
	return append(ops, NewMaterialize(viewTable, m.Key, planner.Types(m.Cols))), nil
}

// emitSystemRows emits the rows of a system table.
func emitSystemRows(ctx context.Context, env Env, rel *catalog.Relation, out Output) error {
	if env.SystemRows == nil {
		return fmt.Errorf("exec: no rows for system table %s", rel.Name)
	}
	recs, err := env.SystemRows(rel)
	if err != nil {
		return err
	}
	for i, rec := range recs {
		if err := out.Emit(ctx, Message{Batch: NewBatch(rec, nil)}); err != nil {
			for _, r := range recs[i+1:] {
				r.Release()
			}
			return err
		}
	}
	return nil
}

// RunBatch runs a batch plan over a committed snapshot and sends its result
// rows (insert batches) to out.
func RunBatch(ctx context.Context, env Env, snap *state.Snapshot, root planner.Node, out Output) error {
	nodes, err := chainOf(root)
	if err != nil {
		return err
	}
	ops, err := operators(env, nodes[1:])
	if err != nil {
		return err
	}
	defer func() {
		for _, op := range ops {
			op.Close()
		}
	}()
	head := Chain(ops, out)
	switch leaf := nodes[0].(type) {
	case *planner.Scan:
		if leaf.Relation.Kind == catalog.SystemTable {
			err = emitSystemRows(ctx, env, leaf.Relation, head)
		} else {
			err = ScanSnapshot(ctx, env.Mem, snap, leaf.Relation, head)
		}
	case *planner.Values:
		err = emitValues(ctx, env.Mem, env.Eval, leaf, head)
	case *planner.Series:
		err = emitSeries(ctx, env.Mem, env.Eval, leaf, head)
	default:
		err = fmt.Errorf("exec: no source for %T", leaf)
	}
	if err != nil {
		return err
	}
	// The final barrier makes aggregations and sorts emit their results.
	return head.Emit(ctx, Message{Barrier: &barrier.Barrier{Epoch: 1, Kind: barrier.Final}})
}
