package planner

import (
	"encoding/json"
	"fmt"
	"time"
)

// NodeCounters are what EXPLAIN ANALYZE reports of one operator.
type NodeCounters struct {
	RowsIn, RowsOut int64
	// Time is the time spent in the operator itself.
	Time time.Duration
}

// Counters returns the counters of a plan node (ok false: none).
type Counters func(n Node) (c NodeCounters, ok bool)

// explainItem is one line of EXPLAIN output as parts: the node it starts
// (nil for a node's further lines), its depth, operator and detail.
type explainItem struct {
	node   Node
	depth  int
	op     string
	detail string
}

// ExplainOptions select what an EXPLAIN renders besides the plan.
type ExplainOptions struct {
	// Counters, if set, add each operator's rows and time (ANALYZE).
	Counters Counters
	// JSON renders the plan as one JSON document instead of a tree of
	// lines.
	JSON bool
}

// ExplainBatchWith renders a batch plan with options.
func ExplainBatchWith(root Node, o ExplainOptions) []string {
	e := &explainer{name: func(slot int) string { return fmt.Sprintf("temp%d", slot) }}
	e.annotate = o.annotation()
	e.node(0, root)
	return e.render(o)
}

// ExplainStreamWith renders a view's dataflow with options.
func ExplainStreamWith(p *StreamPlan, viewTable string, name TableNamer, o ExplainOptions) []string {
	return explainStream(p, viewTable, name, o.annotation()).render(o)
}

// explainStream walks a view's dataflow, root first.
func explainStream(p *StreamPlan, viewTable string, name TableNamer, annotate func(Node) string) *explainer {
	e := &explainer{stream: true, name: name, annotate: annotate}
	m := p.Root
	e.cur = m
	e.line(0, "StreamMaterialize", "columns: %s, stream_key: %s, state_table: %s",
		colList(m.Cols), keyList(m.Cols, m.Key), viewTable)
	e.node(1, m.Input)
	return e
}

func (o ExplainOptions) annotation() func(Node) string {
	if o.Counters == nil {
		return nil
	}
	return func(n Node) string {
		c, ok := o.Counters(n)
		if !ok {
			return ""
		}
		return fmt.Sprintf(" (actual rows=%d, rows in=%d, time=%s ms)", c.RowsOut, c.RowsIn, ms(c.Time))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d.Nanoseconds())/1e6) }

// render returns the lines, or the JSON document as one line.
func (e *explainer) render(o ExplainOptions) []string {
	if !o.JSON {
		return e.lines
	}
	type plan = map[string]any
	var root plan
	var stack []plan // stack[d] is the last node at depth d
	for _, it := range e.items {
		p := plan{"Node Type": it.op, "Details": it.detail}
		if it.node != nil && o.Counters != nil {
			if c, ok := o.Counters(it.node); ok {
				p["Actual Rows"] = c.RowsOut
				p["Rows In"] = c.RowsIn
				p["Actual Time Ms"] = json.Number(ms(c.Time))
			}
		}
		if len(stack) > it.depth {
			stack = stack[:it.depth]
		}
		if it.depth == 0 || len(stack) == 0 {
			if root == nil {
				root = p
			}
		} else {
			parent := stack[len(stack)-1]
			kids, _ := parent["Plans"].([]any)
			parent["Plans"] = append(kids, p)
		}
		stack = append(stack, p)
	}
	doc, err := json.MarshalIndent([]any{plan{"Plan": root}}, "", "  ")
	if err != nil {
		// Plans hold strings and numbers only.
		panic(err)
	}
	return []string{string(doc)}
}

// ExplainLine is one line of a plan's EXPLAIN as parts.
type ExplainLine struct {
	// Node is the plan node the line starts (nil for a node's further
	// lines); Depth its depth in the tree (0: the root).
	Node   Node
	Depth  int
	Op     string
	Detail string
}

// ExplainStreamLines returns a view's dataflow as EXPLAIN lines, root
// first, for renderings other than text (the dashboard's graph).
func ExplainStreamLines(p *StreamPlan, viewTable string, name TableNamer) []ExplainLine {
	e := explainStream(p, viewTable, name, func(Node) string { return "" })
	out := make([]ExplainLine, len(e.items))
	for i, it := range e.items {
		out[i] = ExplainLine{Node: it.node, Depth: it.depth, Op: it.op, Detail: it.detail}
	}
	return out
}
