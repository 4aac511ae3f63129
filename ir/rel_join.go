package ir

// JoinType is the kind of a Join.
type JoinType uint8

const (
	InnerJoin JoinType = iota
	LeftJoin
	RightJoin
	FullJoin
	// SemiJoin keeps the left rows with a match (IN, EXISTS); its columns are
	// the left input's.
	SemiJoin
	// AntiJoin keeps the left rows without a match (NOT EXISTS).
	AntiJoin
	// NullAwareAntiJoin is NOT IN with SQL's NULL rules: a left row is kept if
	// the right side is empty, or if its key is not NULL, no right key is NULL
	// and it has no match.
	NullAwareAntiJoin
)

func (t JoinType) String() string {
	return [...]string{"inner", "left", "right", "full", "semi", "anti", "null-aware anti"}[t]
}

// KeepsRight reports whether the join's output includes the right columns.
func (t JoinType) KeepsRight() bool { return t <= FullJoin }

// Join combines two inputs. Its output is the left columns followed by the
// right columns (semi and anti joins: the left columns only). LeftKeys[i] =
// RightKeys[i] are the equality conditions (NULL never equals NULL); Cond, if
// set, is the rest of the join condition, over the left columns followed by
// the right columns.
type Join struct {
	Type        JoinType
	Left, Right Rel
	LeftKeys    []Expr // over the left input
	RightKeys   []Expr // over the right input, same types as LeftKeys
	Cond        Expr
}

// Columns of a Join: left then right; outer joins make the padded side's
// columns nullable (all columns are nullable anyway).
func (r *Join) Columns() []Column {
	cols := append([]Column(nil), r.Left.Columns()...)
	if r.Type.KeepsRight() {
		cols = append(cols, r.Right.Columns()...)
	}
	return cols
}

// UnionAll concatenates inputs with the same column types (UNION ALL).
type UnionAll struct {
	Inputs []Rel
	Cols   []Column
}

func (r *UnionAll) Columns() []Column { return r.Cols }

// Expand repeats each input row as many times as its column Count says (no
// copy when NULL or not positive). Its columns are the input's followed by
// the copy's ordinal, 1..n, a bigint (INTERSECT ALL and EXCEPT ALL).
type Expand struct {
	Input Rel
	Count int
	Cols  []Column
}

func (r *Expand) Columns() []Column { return r.Cols }

// Inputs returns the inputs of rel.
func Inputs(rel Rel) []Rel {
	switch r := rel.(type) {
	case *Filter:
		return []Rel{r.Input}
	case *Project:
		return []Rel{r.Input}
	case *Aggregate:
		return []Rel{r.Input}
	case *Sort:
		return []Rel{r.Input}
	case *Limit:
		return []Rel{r.Input}
	case *TopN:
		return []Rel{r.Input}
	case *Join:
		return []Rel{r.Left, r.Right}
	case *UnionAll:
		return r.Inputs
	case *Expand:
		return []Rel{r.Input}
	case *Unnest:
		return []Rel{r.Input}
	case *HopWindow:
		return []Rel{r.Input}
	case *AsofJoin:
		return []Rel{r.Left, r.Right}
	case *SessionWindow:
		return []Rel{r.Input}
	case *Window:
		return []Rel{r.Input}
	}
	return nil
}

// WithInputs returns a shallow copy of rel with its inputs, in the order
// Inputs returns them, replaced by in. rel without inputs is returned as is.
func WithInputs(rel Rel, in []Rel) Rel {
	switch r := rel.(type) {
	case *Filter:
		c := *r
		c.Input = in[0]
		return &c
	case *Project:
		c := *r
		c.Input = in[0]
		return &c
	case *Aggregate:
		c := *r
		c.Input = in[0]
		return &c
	case *Sort:
		c := *r
		c.Input = in[0]
		return &c
	case *Limit:
		c := *r
		c.Input = in[0]
		return &c
	case *TopN:
		c := *r
		c.Input = in[0]
		return &c
	case *Join:
		c := *r
		c.Left, c.Right = in[0], in[1]
		return &c
	case *UnionAll:
		c := *r
		c.Inputs = in
		return &c
	case *Expand:
		c := *r
		c.Input = in[0]
		return &c
	case *Unnest:
		c := *r
		c.Input = in[0]
		return &c
	case *HopWindow:
		c := *r
		c.Input = in[0]
		return &c
	case *AsofJoin:
		c := *r
		c.Left, c.Right = in[0], in[1]
		return &c
	case *SessionWindow:
		c := *r
		c.Input = in[0]
		return &c
	case *Window:
		c := *r
		c.Input = in[0]
		return &c
	}
	return rel
}
