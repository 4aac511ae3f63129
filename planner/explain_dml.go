package planner

import "fmt"

// ExplainWrite renders the batch plan of an INSERT, UPDATE or DELETE: the
// write (op: "Insert", "Update" or "Delete") into table, over the plan of
// the rows it writes.
func ExplainWrite(op, table string, root Node) []string {
	e := &explainer{name: func(slot int) string { return fmt.Sprintf("temp%d", slot) }}
	e.line(0, op, "table: %s", table)
	e.node(1, root)
	return e.lines
}
