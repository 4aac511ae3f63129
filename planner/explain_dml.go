package planner

// write renders a Write: the write into its table, what ON CONFLICT does,
// then the plan of the rows written.
func (e *explainer) write(depth int, n *Write) {
	e.line(depth, n.Op.String(), "table: %s", n.Table.Name)
	if c := n.Conflict; c != nil {
		if c.Set == nil {
			e.line(depth+1, "OnConflict", "action: do nothing")
		} else {
			e.line(depth+1, "OnConflict", "action: do update")
			e.node(depth+2, c.Set)
		}
	}
	e.node(depth+1, n.Input)
}
