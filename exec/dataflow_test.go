//go:build cgo

package exec

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestDataflow drives the operators of a view's dataflow with explicit
// change batches and barriers and prints what they emit. Commands:
//
//	table t (a int, b text)            declare an input table (several may be declared);
//	                                   without a primary key it has a hidden row id
//	view SELECT ...                    plan the view over it and build its operators
//	explain                            print the plan
//	batch [t]                          feed rows of table t: one per line, "<op> v1 v2 ...",
//	                                   op in + - U- U+ (t may be omitted with one table)
//	barrier                            end the epoch: print the emitted changes and commit
//	restart                            rebuild the operators from the committed state
//	view-contents                      print the view's materialized rows
//
// Files live in testdata/dataflow; rewrite expectations with -rewrite.
func TestDataflow(t *testing.T) {
	datadriven.Walk(t, "testdata/dataflow", func(t *testing.T, path string) {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		h := &dataflowHarness{t: t, mem: mem}
		defer func() {
			h.close()
			mem.AssertSize(t, 0)
		}()
		datadriven.RunTest(t, path, h.run)
	})
}

type dataflowHarness struct {
	t     *testing.T
	mem   *memory.CheckedAllocator
	store *state.Store
	cat   *catalog.Catalog
	// inputs are the declared tables, by name.
	inputs map[string]*catalog.Relation
	nextID uint32
	query  string
	plan   *planner.StreamPlan
	df     *Dataflow
	out    []string
	epoch  uint64
	errs   atomic.Int64
	late   atomic.Int64
}

func (h *dataflowHarness) close() {
	if h.df != nil {
		h.df.Close()
		h.df = nil
	}
	if h.store != nil {
		h.store.Close()
	}
}

func (h *dataflowHarness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "table":
		return h.declareTable(t, d.Input)
	case "view":
		h.query = d.Input
		if err := h.build(); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "explain":
		return strings.Join(planner.ExplainStream(h.plan, "view", func(s int) string { return fmt.Sprint(s) }), "\n")
	case "batch":
		name := ""
		if len(d.CmdArgs) > 0 {
			name = d.CmdArgs[0].Key
		} else if len(h.inputs) == 1 {
			for n := range h.inputs {
				name = n
			}
		}
		rel := h.inputs[name]
		if rel == nil {
			d.Fatalf(t, "batch: unknown table %q", name)
		}
		// Every scan of the table gets the batch (a self-join scans it twice).
		for i, up := range h.plan.Upstreams {
			if up != rel {
				continue
			}
			b, err := h.parseBatch(rel, d.Input)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			if err := h.df.Heads[i].Emit(context.Background(), Message{Batch: b}); err != nil {
				return "error: " + err.Error()
			}
		}
		return h.flushOutput()
	case "watermark":
		// watermark <table> <timestamp>: the table's watermark reaches it.
		rel := h.inputs[d.CmdArgs[0].Key]
		if rel == nil || rel.Watermark == nil {
			d.Fatalf(t, "watermark: %s is not a table with a watermark", d.CmdArgs[0].Key)
		}
		ts, err := types.ParseText(types.TimestampT, strings.Join(argWords(d.CmdArgs[1:]), " "))
		if err != nil {
			d.Fatalf(t, "watermark: %v", err)
		}
		for i, up := range h.plan.Upstreams {
			if up == rel {
				w := &barrier.Watermark{Column: rel.Watermark.Column, Value: ts.I}
				if err := h.df.Heads[i].Emit(context.Background(), Message{Watermark: w}); err != nil {
					return "error: " + err.Error()
				}
			}
		}
		return h.flushOutput()
	case "state":
		// The number of keys of every operator state table, and the rows
		// dropped as late so far.
		var lines []string
		for slot := 0; slot < h.plan.Tables; slot++ {
			it, err := h.store.Table(state.TableID(101+slot)).NewIter(nil, nil)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			n := 0
			for ok := it.First(); ok; ok = it.Next() {
				n++
			}
			it.Close()
			lines = append(lines, fmt.Sprintf("table %d: %d keys", slot, n))
		}
		return strings.Join(append(lines, fmt.Sprintf("late rows: %d", h.late.Load())), "\n")
	case "barrier":
		// barrier [time]: the barrier carries the time (a timestamp).
		h.epoch++
		br := &barrier.Barrier{Epoch: h.epoch}
		if len(d.CmdArgs) > 0 {
			ts, err := types.ParseText(types.TimestampT, strings.Join(argWords(d.CmdArgs), " "))
			if err != nil {
				d.Fatalf(t, "barrier: %v", err)
			}
			br.Time = ts.I
		}
		for _, head := range h.df.Heads {
			if err := head.Emit(context.Background(), Message{Barrier: br}); err != nil {
				return "error: " + err.Error()
			}
		}
		if _, err := h.store.Commit(h.epoch); err != nil {
			d.Fatalf(t, "commit: %v", err)
		}
		return h.flushOutput()
	case "restart":
		h.df.Close()
		if err := h.build(); err != nil {
			return "error: " + err.Error()
		}
		return "ok"
	case "view-contents":
		snap := h.store.Snapshot()
		defer snap.Release()
		var rows []string
		err := ScanSnapshot(context.Background(), h.mem, snap, h.viewRelation(), OutputFunc(func(_ context.Context, m Message) error {
			defer m.Release()
			rows = append(rows, formatRows(m.Batch, planner.Types(h.plan.Root.Cols), false)...)
			return nil
		}))
		if err != nil {
			d.Fatalf(t, "%v", err)
		}
		return strings.Join(rows, "\n")
	}
	d.Fatalf(t, "unknown command %s", d.Cmd)
	return ""
}

// declareTable parses "t (a int, b text) [key=a]" through the real binder.
func (h *dataflowHarness) declareTable(t *testing.T, input string) string {
	if h.store == nil {
		var err error
		if h.store, err = state.Open(":memory:", state.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if h.cat == nil {
		h.cat = catalog.New()
		h.inputs = map[string]*catalog.Relation{}
	}
	parsed, err := sql.Parse("CREATE TABLE " + input)
	if err != nil {
		return "error: " + err.Error()
	}
	st, err := sql.Bind(h.cat, parsed[0])
	if err != nil {
		return "error: " + err.Error()
	}
	ct := st.(*ir.CreateTable)
	h.nextID++
	rel := &catalog.Relation{ID: h.nextID, Name: ct.Name, Kind: catalog.Table, Columns: ct.Columns, StateTable: h.nextID,
		Watermark: ct.Watermark, AppendOnly: ct.AppendOnly}
	if len(ct.PrimaryKey) > 0 {
		rel.Key, rel.PrimaryKey = ct.PrimaryKey, true
	} else {
		rel.Columns = append(rel.Columns, catalog.Column{Name: catalog.RowIDColumn, Type: types.Int64T, Hidden: true})
		rel.Key = []int{len(rel.Columns) - 1}
	}
	h.cat.Add(rel)
	h.inputs[rel.Name] = rel
	return "ok"
}

func (h *dataflowHarness) viewRelation() *catalog.Relation {
	rel := &catalog.Relation{ID: 99, Name: "v", Kind: catalog.MaterializedView, StateTable: 100, Key: h.plan.Root.Key}
	for _, c := range h.plan.Root.Cols {
		rel.Columns = append(rel.Columns, catalog.Column{Name: c.Name, Type: c.Type, Hidden: c.Hidden})
	}
	return rel
}

// build plans the view and builds its operators over the harness's store;
// operator state tables are 101, 102, ...
func (h *dataflowHarness) build() error {
	parsed, err := sql.Parse("CREATE MATERIALIZED VIEW v AS " + h.query)
	if err != nil {
		return err
	}
	st, err := sql.Bind(h.cat, parsed[0])
	if err != nil {
		return err
	}
	cmv := st.(*ir.CreateMaterializedView)
	if h.plan, err = planner.PlanStreamWith(cmv.Query, planner.StreamOptions{EmitOnWindowClose: cmv.EmitOnWindowClose}); err != nil {
		return err
	}
	env := Env{
		Mem:      h.mem,
		Eval:     &eval.Context{Mem: h.mem, Errors: &h.errs},
		LateRows: &h.late,
		Table: func(slot int) *state.Table {
			return h.store.Table(state.TableID(101 + slot))
		},
	}
	h.df, err = BuildStream(env, h.plan, ViewStorage{Rows: h.store.Table(100)}, OutputFunc(func(_ context.Context, m Message) error {
		switch {
		case m.Batch != nil:
			h.out = append(h.out, formatRows(m.Batch, planner.Types(h.plan.Root.Cols), true)...)
			m.Release()
		case m.Watermark != nil:
			c := h.plan.Root.Cols[m.Watermark.Column]
			h.out = append(h.out, fmt.Sprintf("watermark %s %s", c.Name, types.DInt(m.Watermark.Value).Text(c.Type)))
		}
		return nil
	}))
	return err
}

func (h *dataflowHarness) flushOutput() string {
	out := strings.Join(h.out, "\n")
	h.out = nil
	if out == "" {
		return "(no output)"
	}
	return out
}

// parseBatch reads "<op> v1 v2 ..." lines over the input's visible columns;
// a hidden row id, if any, is the last value of the line.
func (h *dataflowHarness) parseBatch(rel *catalog.Relation, input string) (*Batch, error) {
	ts := rel.Types()
	bs := newBuilders(h.mem, ts)
	defer releaseBuilders(bs)
	var ops []Op
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		if len(f) != len(ts)+1 {
			return nil, fmt.Errorf("line %q: want an op and %d values", line, len(ts))
		}
		switch f[0] {
		case "+":
			ops = append(ops, Insert)
		case "-":
			ops = append(ops, Delete)
		case "U-":
			ops = append(ops, UpdateDelete)
		case "U+":
			ops = append(ops, UpdateInsert)
		default:
			return nil, fmt.Errorf("unknown op %q", f[0])
		}
		for i, v := range f[1:] {
			d := types.Null
			if v != "NULL" {
				var err error
				if d, err = types.ParseText(ts[i], strings.ReplaceAll(v, "_", " ")); err != nil {
					return nil, err
				}
			}
			types.AppendDatum(bs[i], ts[i], d)
		}
	}
	return NewBatch(buildRecord(SchemaOf(ts), bs, len(ops)), ops), nil
}

// formatRows prints the visible columns of each row, with its op if withOps.
func formatRows(b *Batch, ts []types.T, withOps bool) []string {
	var rows []string
	for i := 0; i < b.Len(); i++ {
		var parts []string
		if withOps {
			parts = append(parts, b.Ops[i].String())
		}
		for c := 0; c < int(b.Rec.NumCols()); c++ {
			parts = append(parts, formatValue(ts[c], b.Rec.Column(c), i))
		}
		rows = append(rows, strings.Join(parts, " "))
	}
	return rows
}

func formatValue(t types.T, col arrow.Array, i int) string {
	d := types.DatumAt(t, col, i)
	if d.Null {
		return "NULL"
	}
	return d.Text(t)
}

// argWords returns the words of datadriven arguments, for values with
// spaces written unquoted (barrier 2024-01-01 00:00:10).
func argWords(args []datadriven.CmdArg) []string {
	var ws []string
	for _, a := range args {
		ws = append(ws, a.Key)
		ws = append(ws, a.Vals...)
	}
	return ws
}
