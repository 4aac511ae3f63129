package sql

import (
	"slices"

	"github.com/streamsql/streamsql/catalog"
)

// Access is what a statement touches, on which its privileges are
// checked before it runs.
type Access struct {
	// Relations are the relations the statement names (in FROM, as DML
	// targets, in subqueries, the plain views it expands but not what
	// their queries name), distinct, in order of appearance.
	Relations []uint32
	// Columns are the columns of those relations it reads (SELECT) or
	// writes (INSERT, UPDATE), distinct. A column is read wherever it is
	// named: the select list, WHERE, JOIN ON and USING, GROUP BY, HAVING,
	// ORDER BY, RETURNING, the values an UPDATE assigns; * reads every
	// visible column. A relation named without any of its columns read
	// (SELECT count(*) FROM t) has no entry.
	Columns []ColumnUse
}

// ColumnUse is a use of column Column of relation Rel that needs Priv.
type ColumnUse struct {
	Rel    uint32
	Column string
	Priv   catalog.Privileges
}

// ColumnsOf returns the columns of rel used with priv.
func (a *Access) ColumnsOf(rel uint32, priv catalog.Privileges) []string {
	var out []string
	for _, u := range a.Columns {
		if u.Rel == rel && u.Priv == priv {
			out = append(out, u.Column)
		}
	}
	return out
}

// noteRead records that the statement reads scope column c.
func (b *binder) noteRead(c scopeCol) {
	if c.src.rel != 0 {
		b.noteColumn(c.src.rel, c.src.col, catalog.PrivSelect)
	}
}

// noteColumn records that the statement uses column col of rel with priv.
func (b *binder) noteColumn(rel uint32, col string, priv catalog.Privileges) {
	u := ColumnUse{Rel: rel, Column: col, Priv: priv}
	if !slices.Contains(b.columns, u) {
		b.columns = append(b.columns, u)
	}
}

// access returns what the statement b bound touches.
func (b *binder) access() Access {
	return Access{Relations: refIDs(b.refs), Columns: b.columns}
}
