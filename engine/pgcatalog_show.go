package engine

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/pgwire"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/sqlerr"
	"github.com/streamsql/streamsql/types"
)

// showCatalog runs SHOW CREATE ... and SHOW COLUMNS FROM ..., with
// RisingWave's columns.
func (s *session) showCatalog(st ir.Statement, w pgwire.ResultWriter) error {
	var name ir.ObjectName
	kind := catalog.Kind(0)
	switch st := st.(type) {
	case *sql.ShowCreate:
		name, kind = st.Name, st.Kind
	case *sql.ShowColumns:
		name = st.Name
	}
	var r *catalog.Relation
	if name.Schema != "" {
		r = s.cat.LookupIn(name.Schema, name.Name)
	} else {
		r = s.cat.Resolve(s.searchPath(), name.Name)
	}
	if r == nil || kind != 0 && r.Kind != kind {
		what := "relation"
		if kind != 0 {
			what = kind.String()
		}
		return sqlerr.New(sqlerr.UndefinedTable, "%s \"%s\" does not exist", what, name)
	}
	var rows [][]string
	var cols []string
	if _, ok := st.(*sql.ShowCreate); ok {
		cols = []string{"Name", "Create Sql"}
		rows = [][]string{{r.QualifiedName(), sql.CreateStatement(r)}}
	} else {
		cols = []string{"Name", "Type", "Is Hidden", "Description"}
		for _, c := range r.Columns {
			if c.Hidden {
				continue
			}
			rows = append(rows, []string{c.Name, types.WithoutTypmod(c.Type).String(), "false", ""})
			if c.Type.Typmod() >= 0 {
				rows[len(rows)-1][1] = sql.FormatType(sql.ColumnTypeOID(c.Type), int64(c.Type.Typmod()), true)
			}
		}
	}
	return writeTextRows(w, s.e, cols, rows, fmt.Sprintf("SHOW %d", len(rows)))
}

// writeTextRows writes rows of text columns as one result.
func writeTextRows(w pgwire.ResultWriter, e *Engine, names []string, rows [][]string, tag string) error {
	pc := make([]pgwire.Column, len(names))
	ts := make([]types.T, len(names))
	for i, n := range names {
		pc[i], ts[i] = pgwire.Column{Name: n, Type: types.TextT}, types.TextT
	}
	if err := w.BeginRows(pc); err != nil {
		return err
	}
	arrs := make([]arrow.Array, len(names))
	for i := range names {
		b := array.NewStringBuilder(e.mem)
		for _, r := range rows {
			b.Append(r[i])
		}
		arrs[i] = b.NewArray()
		b.Release()
		defer arrs[i].Release()
	}
	rec := array.NewRecordBatch(exec.SchemaOf(ts), arrs, int64(len(rows)))
	defer rec.Release()
	if len(rows) > 0 {
		if err := w.WriteRows(rec); err != nil {
			return err
		}
	}
	return w.Complete(tag)
}
