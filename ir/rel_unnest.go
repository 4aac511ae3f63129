package ir

import "github.com/streamsql/streamsql/types"

// Unnest appends to each row of Input the elements of its Arrays, zipped:
// row k (1-based) of an input row holds element k of each array, NULL for
// an array shorter than k, and k itself; an input row yields as many rows
// as its longest array has elements (none when every array is NULL or
// empty). It is unnest(a, ...) in FROM, with the FROM items before it as
// Input (a function in FROM sees their columns, as LATERAL), and the
// set-returning unnest calls of a select list, which PostgreSQL 10 and
// later zip the same way.
//
// Its columns are Input's, then one per array (the element type), then the
// ordinal, a bigint (hidden unless WITH ORDINALITY asks for it). With
// Outer (LEFT JOIN LATERAL unnest(...) ON true), an input row without
// elements yields one row, its element columns and ordinal NULL.
type Unnest struct {
	Input  Rel
	Arrays []Expr
	Cols   []Column
	Outer  bool
}

func (r *Unnest) Columns() []Column { return r.Cols }

// NewUnnest returns the Unnest of arrays over input, naming the element
// columns names (and the ordinal ordName).
func NewUnnest(input Rel, arrays []Expr, names []string, ordName string, ordinality bool) *Unnest {
	u := &Unnest{Input: input, Arrays: arrays}
	u.Cols = append(u.Cols, input.Columns()...)
	for i, a := range arrays {
		u.Cols = append(u.Cols, Column{Name: names[i], Type: a.Type().ElemT()})
	}
	u.Cols = append(u.Cols, Column{Name: ordName, Type: types.Int64T, Hidden: !ordinality})
	return u
}
