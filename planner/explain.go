package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/types"
)

// TableNamer names state table slots in EXPLAIN output: the allocated table
// id of a created view, or the slot number of a plan not yet created.
type TableNamer func(slot int) string

// ExplainStream renders a view's dataflow as an indented tree, root first.
// viewTable names the view's own state table.
func ExplainStream(p *StreamPlan, viewTable string, name TableNamer) []string {
	e := &explainer{stream: true, name: name}
	m := p.Root
	e.line(0, "StreamMaterialize", "columns: %s, stream_key: %s, state_table: %s",
		colList(m.Cols), keyList(m.Cols, m.Key), viewTable)
	e.node(1, m.Input)
	return e.lines
}

// ExplainBatch renders a batch plan.
func ExplainBatch(root Node) []string {
	e := &explainer{name: func(slot int) string { return fmt.Sprintf("temp%d", slot) }}
	e.node(0, root)
	return e.lines
}

type explainer struct {
	stream bool
	name   TableNamer
	lines  []string
	// annotate, if set, gives the text appended to the first line of each
	// node (EXPLAIN ANALYZE); cur is the node whose first line is next.
	annotate func(Node) string
	cur      Node
	// items are the lines as parts, for the JSON format.
	items []explainItem
}

func (e *explainer) line(depth int, op, format string, args ...any) {
	prefix := ""
	if depth > 0 {
		prefix = strings.Repeat("  ", depth-1) + "└─"
	}
	kind := "Batch"
	if e.stream {
		kind = "Stream"
	}
	if strings.HasPrefix(op, "Stream") {
		kind = ""
	}
	detail := fmt.Sprintf(format, args...)
	item := explainItem{depth: depth, op: kind + op, detail: detail}
	suffix := ""
	if e.annotate != nil && e.cur != nil {
		item.node = e.cur
		suffix = e.annotate(e.cur)
		e.cur = nil
	}
	e.items = append(e.items, item)
	e.lines = append(e.lines, fmt.Sprintf("%s%s%s { %s }%s", prefix, kind, op, detail, suffix))
}

func (e *explainer) key(n Node) string {
	return keyList(n.Columns(), n.StreamKey())
}

func (e *explainer) node(depth int, n Node) {
	e.cur = n
	switch n := n.(type) {
	case *Scan:
		if e.stream {
			e.line(depth, "Exchange", "dist: NoShuffle, upstream: %s", n.Relation.Name)
			wm := ""
			for _, c := range relationWatermarks(n.Relation) {
				wm += ", watermark: " + n.Cols[c].Name
			}
			e.line(depth+1, "TableScan", "%s: %s, columns: %s, stream_key: %s%s, backfill: snapshot then changes",
				n.Relation.Kind, n.Relation.Name, colList(n.Cols), e.key(n), wm)
			return
		}
		lookup := ""
		if len(n.Lookup) > 0 {
			var names []string
			for _, k := range n.Relation.Key[:len(n.Lookup)] {
				names = append(names, n.Relation.Columns[k].Name)
			}
			lookup = ", key lookup: [" + strings.Join(names, ", ") + "]"
		}
		if n.Range != nil {
			lookup += keyRangeSuffix(n)
		}
		if l := n.Index; l != nil {
			var names []string
			for _, c := range l.Index.Columns[:len(l.Eq)] {
				names = append(names, n.Relation.Columns[c].Name)
			}
			lookup = ", index lookup: " + l.Index.Name + " [" + strings.Join(names, ", ") + "]"
			if l.Ranged() {
				lookup += ", range: " + n.Relation.Columns[l.Index.Columns[len(l.Eq)]].Name
			}
		}
		e.line(depth, "Scan", "%s: %s, columns: %s%s", n.Relation.Kind, n.Relation.Name, colList(n.Cols), lookup)
	case *Values:
		e.line(depth, "Values", "rows: %d, columns: %s", len(n.Rows), colList(n.Cols))
	case *CopyInput:
		e.line(depth, "CopyInput", "columns: %s", colList(n.Cols))
	case *Series:
		e.line(depth, "GenerateSeries", "start: %s, stop: %s, step: %s", n.Start, n.Stop, n.Step)
	case *Filter:
		e.line(depth, "Filter", "predicate: %s%s", n.Pred, e.keySuffix(n))
		e.node(depth+1, n.Input)
	case *Project:
		parts := make([]string, len(n.Exprs))
		for i, x := range n.Exprs {
			parts[i] = x.String()
			if n.Cols[i].Hidden {
				parts[i] += " (hidden)"
			}
		}
		e.line(depth, "Project", "exprs: [%s]%s", strings.Join(parts, ", "), e.keySuffix(n))
		e.node(depth+1, n.Input)
	case *HashAgg:
		inCols := n.Input.Columns()
		groups := make([]string, len(n.GroupCols))
		for i, g := range n.GroupCols {
			groups[i] = inCols[g].Name
		}
		aggs := make([]string, len(n.Calls))
		tables := []string{"result: " + e.name(n.ResultTable)}
		for i, c := range n.Calls {
			aggs[i] = aggString(c, inCols, n.ArgCols[i], n.FilterCols[i])
			if n.ValueSets[i] >= 0 {
				tables = append(tables, fmt.Sprintf("values of %s: %s", aggs[i], e.name(n.ValueSets[i])))
			}
		}
		detail := fmt.Sprintf("group_key: [%s], aggs: [%s]", strings.Join(groups, ", "), strings.Join(aggs, ", "))
		if n.WatermarkGroup >= 0 {
			tables = append(tables, "watermark: "+e.name(n.WatermarkTable))
			detail += fmt.Sprintf(", watermark: %s (final groups dropped)", groups[n.WatermarkGroup])
			if n.EmitOnWindowClose {
				detail += ", emit: on window close"
			}
		}
		if e.stream {
			detail += fmt.Sprintf(", stream_key: %s, state_tables: [%s]", e.key(n), strings.Join(tables, ", "))
		}
		e.line(depth, "HashAgg", "%s", detail)
		e.node(depth+1, n.Input)
	case *Window:
		e.window(depth, n)
		e.node(depth+1, n.Input)
	case *Write:
		e.write(depth, n)
	case *Sort:
		e.line(depth, "Sort", "keys: %s", sortKeyList(n.Columns(), n.Keys))
		e.node(depth+1, n.Input)
	case *TopN:
		e.line(depth, "TopN", "%s", e.topNDetail(n))
		e.node(depth+1, n.Input)
	case *Limit:
		e.line(depth, "Limit", "offset: %d, count: %s", n.Offset, countString(n.Count))
		e.node(depth+1, n.Input)
	case *Join:
		// Keys name the columns as the condition does: over the left columns
		// followed by the right columns.
		pair := append(append([]ir.Column(nil), n.Left.Columns()...), n.Right.Columns()...)
		nl := len(n.Left.Columns())
		conds := make([]string, len(n.LeftKeys))
		for i := range n.LeftKeys {
			conds[i] = fmt.Sprintf("%s = %s", colName(pair, n.LeftKeys[i]), colName(pair, nl+n.RightKeys[i]))
		}
		detail := fmt.Sprintf("type: %s, keys: [%s]", n.Type, strings.Join(conds, ", "))
		if n.Cond != nil {
			detail += fmt.Sprintf(", condition: %s", n.Cond)
		}
		if n.CleanFirstKey {
			detail += fmt.Sprintf(", watermark: %s (final keys dropped)", colName(pair, n.LeftKeys[0]))
		}
		for _, ib := range n.IntervalBounds {
			side := [2]string{"left", "right"}[ib.Clean]
			detail += fmt.Sprintf(", interval: %s rows dropped when %s < watermark(%s) + %s", side,
				colName(pair, ib.Cols[ib.Clean]+ib.Clean*nl), colName(pair, ib.Cols[1-ib.Clean]+(1-ib.Clean)*nl), micros(ib.Offset))
		}
		if e.stream {
			tables := fmt.Sprintf("left: %s, right: %s", e.name(n.LeftTable), e.name(n.RightTable))
			for s, t := range n.IndexTables {
				if t >= 0 {
					tables += fmt.Sprintf(", %s by time: %s", [2]string{"left", "right"}[s], e.name(t))
				}
			}
			if n.WatermarkTable >= 0 {
				tables += ", watermark: " + e.name(n.WatermarkTable)
			}
			detail += fmt.Sprintf(", stream_key: %s, state_tables: [%s]", e.key(n), tables)
		}
		e.line(depth, "HashJoin", "%s", detail)
		e.node(depth+1, n.Left)
		e.node(depth+1, n.Right)
	case *IndexJoin:
		e.line(depth, "IndexLookupJoin", "%s", indexJoinDetail(n))
		e.node(depth+1, n.Input)
	case *Union:
		e.line(depth, "Union", "inputs: %d%s", len(n.Ins), e.keySuffix(n))
		for _, in := range n.Ins {
			e.node(depth+1, in)
		}
	case *Unnest:
		var arrays []string
		for _, a := range n.Arrays {
			arrays = append(arrays, colName(n.Input.Columns(), a))
		}
		outer := ""
		if n.Outer {
			outer = ", outer"
		}
		e.line(depth, "Unnest", "arrays: %s%s%s", strings.Join(arrays, ", "), outer, e.keySuffix(n))
		e.node(depth+1, n.Input)
	case *Expand:
		e.line(depth, "Expand", "copies: %s%s", colName(n.Input.Columns(), n.Count), e.keySuffix(n))
		e.node(depth+1, n.Input)
	case *Consolidate:
		e.line(depth, "Consolidate", "net inserts and deletes")
		e.node(depth+1, n.Input)
	case *AsofJoin:
		pair := n.Cols
		nl := len(n.Left.Columns())
		conds := make([]string, len(n.LeftKeys))
		for i := range n.LeftKeys {
			conds[i] = fmt.Sprintf("%s = %s", colName(pair, n.LeftKeys[i]), colName(pair, nl+n.RightKeys[i]))
		}
		typ := "inner"
		if n.Outer {
			typ = "left"
		}
		detail := fmt.Sprintf("type: %s, keys: [%s], closest: %s %s %s", typ, strings.Join(conds, ", "),
			colName(pair, n.LeftTime), sqlOp(n.Op), colName(pair, nl+n.RightTime))
		if e.stream {
			detail += fmt.Sprintf(", stream_key: %s, state_tables: [left: %s, right: %s]", e.key(n), e.name(n.LeftTable), e.name(n.RightTable))
		}
		e.line(depth, "AsofJoin", "%s", detail)
		e.node(depth+1, n.Left)
		e.node(depth+1, n.Right)
	case *LateFilter:
		e.line(depth, "LateFilter", "drop rows behind the watermark of %s%s, state_table: %s", colName(n.Input.Columns(), n.TimeCol), e.keySuffix(n), e.name(n.Table))
		e.node(depth+1, n.Input)
	case *EowcGate:
		e.line(depth, "EowcGate", "emit: on window close of %s%s, state_table: %s", colName(n.Input.Columns(), n.TimeCol), e.keySuffix(n), e.name(n.Table))
		e.node(depth+1, n.Input)
	case *HopWindow:
		e.line(depth, "HopWindow", "time: %s, slide: %s, size: %s%s", colName(n.Input.Columns(), n.TimeCol),
			micros(n.Slide), micros(n.Size), e.keySuffix(n))
		e.node(depth+1, n.Input)
	case *SessionWindow:
		e.line(depth, "SessionWindow", "%s", e.sessionDetail(n))
		e.node(depth+1, n.Input)
	case *TemporalFilter:
		cols := n.Input.Columns()
		bounds := make([]string, len(n.Bounds))
		for i, b := range n.Bounds {
			bounds[i] = fmt.Sprintf("%s %s now() + %s", colName(cols, b.Col), b.Op, micros(b.Delta))
		}
		e.line(depth, "TemporalFilter", "bounds: [%s]%s, state_table: %s", strings.Join(bounds, ", "), e.keySuffix(n), e.name(n.Table))
		e.node(depth+1, n.Input)
	default:
		e.line(depth, fmt.Sprintf("%T", n), "")
	}
}

func (e *explainer) keySuffix(n Node) string {
	if !e.stream {
		return ""
	}
	return ", stream_key: " + e.key(n)
}

func countString(c int64) string {
	if c < 0 {
		return "all"
	}
	return fmt.Sprint(c)
}

func aggString(c ir.AggCall, in []ir.Column, arg, filter int) string {
	name := c.Func
	var s string
	if c.Func == ir.AggCountStar {
		s = "count(*)"
	} else if ir.IsOrderedSet(c.Func) {
		s = orderedSetString(c, in[arg].Name)
	} else {
		distinct := ""
		if c.Distinct {
			distinct = "DISTINCT "
		}
		s = fmt.Sprintf("%s(%s%s%s)", name, distinct, in[arg].Name, aggExtraString(c, in))
	}
	if filter >= 0 {
		s += fmt.Sprintf(" FILTER (WHERE %s)", in[filter].Name)
	}
	return s
}

// orderedSetString renders an ordered-set aggregate call over arg.
func orderedSetString(c ir.AggCall, arg string) string {
	fs := make([]string, len(c.Direct))
	for i, f := range c.Direct {
		fs[i] = strconv.FormatFloat(f, 'g', -1, 64)
		if ir.IsNullFraction(f) {
			fs[i] = "NULL"
		}
	}
	direct := strings.Join(fs, ", ")
	if c.T.Kind == types.Array {
		direct = "ARRAY[" + direct + "]"
	}
	desc := ""
	if len(c.OrderBy) > 0 && c.OrderBy[0].Desc {
		desc = " DESC"
	}
	return fmt.Sprintf("%s(%s) WITHIN GROUP (ORDER BY %s%s)", c.Func, direct, arg, desc)
}

func colList(cols []ir.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name
		if c.Hidden {
			parts[i] += " (hidden)"
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func keyList(cols []ir.Column, key []int) string {
	parts := make([]string, len(key))
	for i, k := range key {
		parts[i] = colName(cols, k)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// colName names column i of cols, with its position (name#i, as in
// expressions) when another column has the same name.
func colName(cols []ir.Column, i int) string {
	for j, c := range cols {
		if j != i && c.Name == cols[i].Name {
			return fmt.Sprintf("%s#%d", cols[i].Name, i)
		}
	}
	return cols[i].Name
}

func sqlOp(fn string) string {
	return map[string]string{ir.FnGe: ">=", ir.FnGt: ">", ir.FnLe: "<=", ir.FnLt: "<"}[fn]
}
