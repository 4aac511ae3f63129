//go:build cgo

package planner

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// TestExplain plans queries and prints their plans. Commands:
//
//	table t (a int, b text)   declare a table (a hidden row id without a primary key)
//	index i ON t (a)          declare a secondary index (CREATE INDEX)
//	rows t=1000 u=10          give batch plans these table sizes (RowCounts; none: no sizes)
//	batch SELECT ...          plan a batch query and print EXPLAIN
//	stream SELECT ...         plan a materialized view and print EXPLAIN
//	stream-keep-order SELECT  the same, with the inner joins in FROM order
//	fragments SELECT ...      plan a materialized view and print its fragments at parallelism 4
//
// Errors print as "error: ...". Files live in testdata/explain; rewrite
// expectations with -rewrite.
func TestExplain(t *testing.T) {
	datadriven.Walk(t, "testdata/explain", func(t *testing.T, path string) {
		cat := catalog.New()
		var nextID uint32
		var sizes map[string]float64
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "table":
				st, err := bindText(cat, "CREATE TABLE "+d.Input)
				if err != nil {
					return "error: " + err.Error()
				}
				ct := st.(*ir.CreateTable)
				nextID++
				rel := &catalog.Relation{ID: nextID, Name: ct.Name, Kind: catalog.Table, Columns: ct.Columns, StateTable: nextID}
				if len(ct.PrimaryKey) > 0 {
					rel.Key, rel.PrimaryKey = ct.PrimaryKey, true
				} else {
					rel.Columns = append(rel.Columns, catalog.Column{Name: catalog.RowIDColumn, Type: types.Int64T, Hidden: true})
					rel.Key = []int{len(rel.Columns) - 1}
				}
				cat.Add(rel)
				return "ok"
			case "index":
				st, err := bindText(cat, "CREATE INDEX "+d.Input)
				if err != nil {
					return "error: " + err.Error()
				}
				ci := st.(*ir.CreateIndex)
				rel := cat.ByID(ci.Table.ID)
				nextID++
				def := catalog.Index{Name: ci.Name, Columns: ci.Columns, Include: ci.Include, StateTable: nextID}
				cat.Add(rel.WithIndexes(append(rel.Indexes[:len(rel.Indexes):len(rel.Indexes)], def)))
				return "ok"
			case "rows":
				// rows without arguments forgets the sizes.
				sizes = nil
				if len(d.CmdArgs) > 0 {
					sizes = map[string]float64{}
				}
				for _, arg := range d.CmdArgs {
					n, err := strconv.ParseFloat(arg.Vals[0], 64)
					if err != nil {
						d.Fatalf(t, "bad size %s", arg)
					}
					sizes[arg.Key] = n
				}
				return "ok"
			case "batch":
				st, err := bindText(cat, d.Input)
				if err != nil {
					return "error: " + err.Error()
				}
				var opts BatchOptions
				if sizes != nil {
					opts.Rows = func(rel *catalog.Relation) (float64, bool) {
						n, ok := sizes[rel.Name]
						return n, ok
					}
				}
				root, _, err := PlanBatchWith(st.(*ir.Select).Query, opts)
				if err != nil {
					return "error: " + err.Error()
				}
				return strings.Join(ExplainBatch(root), "\n")
			case "stream", "stream-keep-order":
				st, err := bindText(cat, "CREATE MATERIALIZED VIEW v AS "+d.Input)
				if err != nil {
					return "error: " + err.Error()
				}
				opts := StreamOptions{KeepJoinOrder: d.Cmd == "stream-keep-order"}
				p, err := PlanStreamWith(st.(*ir.CreateMaterializedView).Query, opts)
				if err != nil {
					return "error: " + err.Error()
				}
				return strings.Join(ExplainStream(p, "view", func(s int) string { return fmt.Sprint(s) }), "\n")
			case "fragments":
				st, err := bindText(cat, "CREATE MATERIALIZED VIEW v AS "+d.Input)
				if err != nil {
					return "error: " + err.Error()
				}
				p, err := PlanStream(st.(*ir.CreateMaterializedView).Query)
				if err != nil {
					return "error: " + err.Error()
				}
				f := CutFragments(p)
				if d.HasArg("readers") {
					// The leaves' splits shared among that many readers.
					var readers int
					d.ScanArgs(t, "readers", &readers)
					f = CutSourceFragments(p, readers)
				}
				if f == nil {
					return "one actor"
				}
				return strings.Join(f.Describe(4), "\n")
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

func bindText(cat *catalog.Catalog, text string) (ir.Statement, error) {
	ps, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	return sql.Bind(cat, ps[0])
}
