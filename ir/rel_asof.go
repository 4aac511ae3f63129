package ir

// AsofJoin is `Left ASOF [LEFT] JOIN Right ON keys AND LeftTime Op
// RightTime`: each left row joined with the one right row of equal keys
// whose time is the closest satisfying the inequality (for >=, the largest
// right time at or before the left time); with Outer, a left row without
// one is padded with NULLs. Ties in time go to the right row with the
// largest stream key (>=, >) or the smallest (<=, <). Its columns are the
// left columns then the right columns.
type AsofJoin struct {
	Left, Right         Rel
	LeftKeys, RightKeys []Expr // over each input, as in Join
	LeftTime, RightTime Expr   // over each input
	// Op is FnGe, FnGt, FnLe or FnLt: LeftTime Op RightTime.
	Op    string
	Outer bool
}

func (r *AsofJoin) Columns() []Column {
	return append(append([]Column(nil), r.Left.Columns()...), r.Right.Columns()...)
}
