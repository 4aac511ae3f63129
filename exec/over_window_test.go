//go:build cgo

package exec

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// The input of the window tests: id (the stream key), p (partition), o
// (order), v (value), d (a date to order by), flag (a filter).
var winTestTypes = []types.T{types.Int64T, types.Int32T, types.Int32T, types.Int64T, types.DateT, types.BoolT}

const (
	colID = iota
	colP
	colO
	colV
	colD
	colFlag
)

type winTestRow struct {
	id     int64
	p, o   types.Datum
	v, d   types.Datum
	flag   types.Datum
	exists bool
}

func bound(kind ir.BoundKind, off ir.Expr) ir.FrameBound {
	return ir.FrameBound{Kind: kind, Offset: off}
}
func intOff(n int64) ir.Expr { return &ir.Const{Value: types.DInt(n), T: types.Int64T} }
func dayOff(n int32) ir.Expr {
	return &ir.Const{Value: types.DInterval(types.IntervalValue{Days: n}), T: types.IntervalT}
}

var (
	unbPrec = bound(ir.BoundUnboundedPreceding, nil)
	unbFoll = bound(ir.BoundUnboundedFollowing, nil)
	curRow  = bound(ir.BoundCurrentRow, nil)
)

func prec(off ir.Expr) ir.FrameBound { return bound(ir.BoundPreceding, off) }
func foll(off ir.Expr) ir.FrameBound { return bound(ir.BoundFollowing, off) }

func frame(mode ir.FrameMode, start, end ir.FrameBound, ex ir.FrameExclude) ir.WindowFrame {
	return ir.WindowFrame{Mode: mode, Start: start, End: end, Exclude: ex}
}

// wcall builds a window call over the test columns.
func wcall(fn string, arg int, f ir.WindowFrame, t types.T) planner.WindowCall {
	c := planner.WindowCall{Func: fn, ArgCol: arg, DefaultCol: -1, FilterCol: -1, Frame: f, T: t}
	if arg >= 0 {
		c.ArgType = winTestTypes[arg]
	}
	return c
}

func withParam(c planner.WindowCall, n int64) planner.WindowCall {
	c.Param = &ir.Const{Value: types.DInt(n), T: types.Int32T}
	return c
}

// winTestConfigs are windows exercising every function, frame mode, bound
// and exclusion, NULL ordering both ways and IGNORE NULLS.
func winTestConfigs() map[string]*planner.Window {
	i64, f64, num := types.Int64T, types.Float64T, types.NumericT
	dflt := ir.DefaultFrame
	lagDefault := withParam(wcall(ir.WinLag, colV, dflt, i64), 2)
	lagDefault.DefaultCol = colID
	countFiltered := wcall(ir.AggCount, colV, frame(ir.FrameRows, unbPrec, foll(intOff(2)), 0), i64)
	countFiltered.FilterCol = colFlag
	lagIgnore := withParam(wcall(ir.WinLag, colV, dflt, i64), 1)
	lagIgnore.IgnoreNulls = true
	leadIgnore := withParam(wcall(ir.WinLead, colV, dflt, i64), 2)
	leadIgnore.IgnoreNulls = true
	firstIgnore := wcall(ir.WinFirstValue, colV, dflt, i64)
	firstIgnore.IgnoreNulls = true
	lastIgnore := wcall(ir.WinLastValue, colV, frame(ir.FrameRows, prec(intOff(2)), curRow, 0), i64)
	lastIgnore.IgnoreNulls = true
	nthIgnore := withParam(wcall(ir.WinNthValue, colV, frame(ir.FrameRows, prec(intOff(3)), foll(intOff(1)), ir.ExcludeCurrentRow), i64), 2)
	nthIgnore.IgnoreNulls = true
	asc := planner.WindowOrder{Col: colO, T: types.Int32T}
	desc := planner.WindowOrder{Col: colO, T: types.Int32T, Desc: true, NullsFirst: true}
	byDate := planner.WindowOrder{Col: colD, T: types.DateT, NullsFirst: true}
	return map[string]*planner.Window{
		"asc": {
			PartitionCols: []int{colP}, PartitionTypes: []types.T{types.Int32T},
			Order: []planner.WindowOrder{asc},
			Calls: []planner.WindowCall{
				wcall(ir.WinRowNumber, -1, dflt, i64),
				wcall(ir.WinRank, -1, dflt, i64),
				wcall(ir.WinDenseRank, -1, dflt, i64),
				wcall(ir.AggSum, colV, dflt, num),
				wcall(ir.AggCountStar, -1, frame(ir.FrameRows, prec(intOff(1)), foll(intOff(1)), 0), i64),
				wcall(ir.AggAvg, colV, frame(ir.FrameRows, unbPrec, curRow, 0), num),
				wcall(ir.AggMin, colV, frame(ir.FrameRange, prec(intOff(2)), foll(intOff(1)), 0), i64),
				wcall(ir.AggMax, colV, frame(ir.FrameGroups, prec(intOff(1)), curRow, ir.ExcludeCurrentRow), i64),
				lagDefault,
				withParam(wcall(ir.WinLead, colV, dflt, i64), 1),
				wcall(ir.WinFirstValue, colV, frame(ir.FrameRows, prec(intOff(2)), curRow, 0), i64),
				wcall(ir.WinLastValue, colV, frame(ir.FrameRange, curRow, unbFoll, 0), i64),
				withParam(wcall(ir.WinNthValue, colV, dflt, i64), 2),
				countFiltered,
				wcall(ir.AggSum, colV, frame(ir.FrameGroups, foll(intOff(1)), foll(intOff(2)), ir.ExcludeTies), num),
				wcall(ir.AggBoolOr, colFlag, frame(ir.FrameRows, prec(intOff(1)), foll(intOff(1)), 0), types.BoolT),
				wcall(ir.AggStddevSamp, colV, frame(ir.FrameRows, prec(intOff(2)), curRow, 0), num),
				wcall(ir.AggArrayAgg, colV, frame(ir.FrameRange, prec(intOff(1)), curRow, 0), types.ArrayOf(i64)),
			},
		},
		"desc": {
			PartitionCols: []int{colP}, PartitionTypes: []types.T{types.Int32T},
			Order: []planner.WindowOrder{desc},
			Calls: []planner.WindowCall{
				wcall(ir.WinPercentRank, -1, dflt, f64),
				wcall(ir.WinCumeDist, -1, dflt, f64),
				withParam(wcall(ir.WinNtile, -1, dflt, types.Int32T), 3),
				wcall(ir.AggSum, colV, frame(ir.FrameRange, prec(intOff(1)), foll(intOff(2)), ir.ExcludeGroup), num),
				wcall(ir.AggMin, colV, frame(ir.FrameRange, unbPrec, prec(intOff(1)), 0), i64),
				wcall(ir.AggMax, colV, frame(ir.FrameRange, foll(intOff(1)), foll(intOff(3)), 0), i64),
				wcall(ir.WinRowNumber, -1, dflt, i64),
			},
		},
		"running": {
			PartitionCols: []int{colP}, PartitionTypes: []types.T{types.Int32T},
			Order: []planner.WindowOrder{asc},
			Calls: []planner.WindowCall{
				wcall(ir.AggSum, colV, dflt, num),
				wcall(ir.AggBoolAnd, colFlag, dflt, types.BoolT),
				wcall(ir.AggApproxCountDistinct, colV, frame(ir.FrameRows, prec(intOff(2)), curRow, 0), i64),
				wcall(ir.AggVarPop, colV, dflt, num),
				wcall(ir.AggArrayAgg, colV, frame(ir.FrameRows, unbPrec, curRow, 0), types.ArrayOf(i64)),
				wcall(ir.AggCount, colV, frame(ir.FrameRows, unbPrec, curRow, 0), i64),
				wcall(ir.AggMax, colV, frame(ir.FrameGroups, unbPrec, foll(intOff(1)), 0), i64),
				wcall(ir.AggAvg, colV, frame(ir.FrameRange, unbPrec, foll(intOff(1)), 0), num),
				wcall(ir.WinLastValue, colV, frame(ir.FrameRows, unbPrec, prec(intOff(1)), 0), i64),
				withParam(wcall(ir.WinNthValue, colV, dflt, i64), 3),
				withParam(wcall(ir.WinLag, colV, dflt, i64), 3),
			},
		},
		"preceding": {
			PartitionCols: []int{colP}, PartitionTypes: []types.T{types.Int32T},
			Order: []planner.WindowOrder{asc},
			Calls: []planner.WindowCall{
				wcall(ir.AggCountStar, -1, frame(ir.FrameRows, unbPrec, prec(intOff(3)), 0), i64),
				wcall(ir.AggSum, colV, frame(ir.FrameGroups, unbPrec, prec(intOff(2)), 0), num),
				wcall(ir.AggMax, colV, frame(ir.FrameRange, unbPrec, prec(intOff(2)), 0), i64),
				withParam(wcall(ir.WinLag, colV, dflt, i64), 3),
				wcall(ir.AggCountStar, -1, frame(ir.FrameRows, prec(intOff(4)), prec(intOff(2)), 0), i64),
			},
		},
		"dates": {
			Order: []planner.WindowOrder{byDate},
			Calls: []planner.WindowCall{
				wcall(ir.AggCountStar, -1, frame(ir.FrameRange, prec(dayOff(1)), foll(dayOff(2)), 0), i64),
				wcall(ir.AggSum, colV, frame(ir.FrameRange, unbPrec, prec(dayOff(1)), 0), num),
				wcall(ir.WinRowNumber, -1, dflt, i64),
				lagIgnore, leadIgnore, firstIgnore, lastIgnore, nthIgnore,
			},
		},
		"unordered": {
			PartitionCols: []int{colP}, PartitionTypes: []types.T{types.Int32T},
			Calls: []planner.WindowCall{
				wcall(ir.WinRowNumber, -1, dflt, i64),
				wcall(ir.AggSum, colV, dflt, num),
				withParam(wcall(ir.WinLag, colV, dflt, i64), 1),
				wcall(ir.WinRank, -1, dflt, i64),
			},
		},
	}
}

// finishWindow fills in the columns and keys of a test window.
func finishWindow(w *planner.Window) *planner.Window {
	var cols []ir.Column
	for i, t := range winTestTypes {
		cols = append(cols, ir.Column{Name: fmt.Sprintf("c%d", i), Type: t})
	}
	w.Input = &planner.Values{Cols: cols}
	w.Cols = append([]ir.Column(nil), cols...)
	for _, c := range w.Calls {
		w.Cols = append(w.Cols, ir.Column{Name: c.Func, Type: c.T})
	}
	w.InputKey, w.InputKeyTypes = []int{colID}, []types.T{types.Int64T}
	return w
}

var winSeeds = flag.Int64("window.seeds", 6, "TestOverWindowRandom: seeds per window")

// TestOverWindowRandom runs random inserts, updates and deletes through the
// streaming operator of each test window, with commits and restarts at
// random barriers, and checks after every barrier that the rows it has
// emitted so far equal the batch operator's result over the current rows.
func TestOverWindowRandom(t *testing.T) {
	for name, w := range winTestConfigs() {
		w := finishWindow(w)
		for seed := int64(1); seed <= *winSeeds; seed++ {
			t.Run(fmt.Sprintf("%s/%d", name, seed), func(t *testing.T) { runOverWindowRandom(t, w, seed, 250) })
		}
	}
}

func runOverWindowRandom(t *testing.T, w *planner.Window, seed int64, steps int) {
	rng := rand.New(rand.NewSource(seed))
	run := newWinRun(t, w)
	var rows []*winTestRow
	randDatum := func(nullPct int, f func() types.Datum) types.Datum {
		if rng.Intn(100) < nullPct {
			return types.Null
		}
		return f()
	}
	newValues := func(r *winTestRow) {
		r.p = randDatum(5, func() types.Datum { return types.DInt(rng.Int63n(3)) })
		r.o = randDatum(10, func() types.Datum { return types.DInt(rng.Int63n(8)) })
		r.v = randDatum(20, func() types.Datum { return types.DInt(rng.Int63n(20) - 5) })
		r.d = randDatum(10, func() types.Datum { return types.DInt(19000 + rng.Int63n(10)) })
		r.flag = randDatum(10, func() types.Datum { return types.DBool(rng.Intn(2) == 0) })
	}
	for step := 0; step < steps; step++ {
		var batch []*winTestRow
		var ops []Op
		for n := 1 + rng.Intn(5); n > 0; n-- {
			var live []*winTestRow
			for _, r := range rows {
				if r.exists {
					live = append(live, r)
				}
			}
			switch k := rng.Intn(10); {
			case k < 5 || len(live) == 0:
				r := &winTestRow{id: int64(len(rows)), exists: true}
				newValues(r)
				rows = append(rows, r)
				batch, ops = append(batch, r), append(ops, Insert)
			case k < 7:
				r := live[rng.Intn(len(live))]
				r.exists = false
				c := *r
				batch, ops = append(batch, &c), append(ops, Delete)
			default:
				r := live[rng.Intn(len(live))]
				old := *r
				switch rng.Intn(3) {
				case 0:
					r.v = randDatum(20, func() types.Datum { return types.DInt(rng.Int63n(20) - 5) })
				case 1:
					r.o = randDatum(10, func() types.Datum { return types.DInt(rng.Int63n(8)) })
					r.d = randDatum(10, func() types.Datum { return types.DInt(19000 + rng.Int63n(10)) })
				default:
					newValues(r)
				}
				c := *r
				batch, ops = append(batch, &old, &c), append(ops, UpdateDelete, UpdateInsert)
			}
		}
		run.batch(batch, ops)
		if rng.Intn(3) > 0 && step != steps-1 {
			continue
		}
		run.barrier(rng, rows)
	}
}

// winRun drives a streaming OverWindow over an in-memory store for the
// random tests: it keeps the multiset of rows emitted so far, commits and
// restarts from committed state at random barriers, and checks after each
// barrier that the emitted rows equal the batch operator's result.
type winRun struct {
	t       *testing.T
	mem     *memory.CheckedAllocator
	ectx    *eval.Context
	store   *state.Store
	w       *planner.Window
	op      *OverWindow
	got     map[string]int
	collect Output
	epoch   uint64
}

func newWinRun(t *testing.T, w *planner.Window) *winRun {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Table = 1
	r := &winRun{t: t, mem: mem, ectx: &eval.Context{Mem: mem, Strict: true}, store: store, w: w, got: map[string]int{}}
	outTypes := planner.Types(w.Cols)
	r.collect = OutputFunc(func(_ context.Context, m Message) error {
		if m.Batch == nil {
			return nil
		}
		defer m.Release()
		for i, row := range formatRows(m.Batch, outTypes, false) {
			if m.Batch.Ops[i].IsInsert() {
				r.got[row]++
				continue
			}
			if r.got[row] == 0 {
				return fmt.Errorf("retraction of a row not emitted: %s", row)
			}
			if r.got[row]--; r.got[row] == 0 {
				delete(r.got, row)
			}
		}
		return nil
	})
	r.start()
	t.Cleanup(func() {
		r.op.Close()
		store.Close()
		mem.AssertSize(t, 0)
	})
	return r
}

// start (re)creates the operator over the store's committed state.
func (r *winRun) start() {
	if r.op != nil {
		r.op.Close()
	}
	var err error
	if r.op, err = NewOverWindow(r.mem, r.ectx, r.w, r.store.Table(1), state.VNodes{}); err != nil {
		r.t.Fatal(err)
	}
}

func (r *winRun) batch(rows []*winTestRow, ops []Op) {
	if err := r.op.OnBatch(context.Background(), winTestBatch(r.mem, rows, ops), r.collect); err != nil {
		r.t.Fatal(err)
	}
}

func (r *winRun) watermark(col int, v int64) {
	if err := r.op.OnWatermark(context.Background(), &barrier.Watermark{Column: col, Value: v}, r.collect); err != nil {
		r.t.Fatal(err)
	}
}

// barrier ends an epoch, maybe commits and restarts, and compares the
// emitted rows with the batch result over rows.
func (r *winRun) barrier(rng *rand.Rand, rows []*winTestRow) {
	r.epoch++
	if err := r.op.OnBarrier(context.Background(), &barrier.Barrier{Epoch: r.epoch}, r.collect); err != nil {
		r.t.Fatalf("epoch %d: %v", r.epoch, err)
	}
	if rng.Intn(2) == 0 {
		if _, err := r.store.Commit(r.epoch); err != nil {
			r.t.Fatal(err)
		}
		if rng.Intn(3) == 0 {
			r.start()
		}
	}
	want := batchWindow(r.t, r.mem, r.ectx, r.w, rows)
	if g, wnt := multiset(r.got), strings.Join(want, "\n"); g != wnt {
		r.t.Fatalf("epoch %d: streaming and batch differ:\n%s", r.epoch, rowDiff(strings.Split(g, "\n"), want))
	}
}

// winTestBatch builds a batch of the test rows.
func winTestBatch(mem memory.Allocator, rows []*winTestRow, ops []Op) *Batch {
	bs := newBuilders(mem, winTestTypes)
	defer releaseBuilders(bs)
	for _, r := range rows {
		for c, d := range []types.Datum{types.DInt(r.id), r.p, r.o, r.v, r.d, r.flag} {
			types.AppendDatum(bs[c], winTestTypes[c], d)
		}
	}
	return NewBatch(buildRecord(SchemaOf(winTestTypes), bs, len(rows)), slices.Clone(ops))
}

// batchWindow computes the window over the existing rows (in id order, so
// that peers tie as in the streaming operator) with WindowBatch and returns
// the result rows, sorted.
func batchWindow(t *testing.T, mem memory.Allocator, ectx *eval.Context, w *planner.Window, rows []*winTestRow) []string {
	bw := *w
	bw.Table, bw.InputKey, bw.InputKeyTypes = -1, nil, nil
	op, err := NewWindowBatch(mem, ectx, &bw)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	var live []*winTestRow
	for _, r := range rows {
		if r.exists {
			live = append(live, r)
		}
	}
	var out []string
	collect := OutputFunc(func(_ context.Context, m Message) error {
		defer m.Release()
		out = append(out, formatRows(m.Batch, planner.Types(w.Cols), false)...)
		return nil
	})
	if len(live) > 0 {
		if err := op.OnBatch(context.Background(), winTestBatch(mem, live, make([]Op, len(live))), collect); err != nil {
			t.Fatal(err)
		}
	}
	if err := op.OnBarrier(context.Background(), finalBarrier, collect); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func multiset(m map[string]int) string {
	var rows []string
	for r, n := range m {
		for ; n > 0; n-- {
			rows = append(rows, r)
		}
	}
	slices.Sort(rows)
	return strings.Join(rows, "\n")
}

// TestOverWindowBoundedReads checks that a change reads only the rows its
// frames reach, not the partition: over one partition of 5000 rows ordered
// by id, appending a row or changing one in the middle reads a handful of
// rows for running sums, sliding frames and lag, while row_number after a
// change in the middle reads (and changes) the rest of the partition.
func TestOverWindowBoundedReads(t *testing.T) {
	i64, num := types.Int64T, types.NumericT
	order := []planner.WindowOrder{{Col: colO, T: types.Int32T}}
	bounded := finishWindow(&planner.Window{Order: order, Calls: []planner.WindowCall{
		wcall(ir.AggSum, colV, ir.DefaultFrame, num),
		wcall(ir.AggCountStar, -1, frame(ir.FrameRows, prec(intOff(2)), foll(intOff(1)), 0), i64),
		withParam(wcall(ir.WinLag, colV, ir.DefaultFrame, i64), 1),
		wcall(ir.AggMax, colV, frame(ir.FrameRange, prec(intOff(3)), curRow, 0), i64),
	}})
	ranked := finishWindow(&planner.Window{Order: order, Calls: []planner.WindowCall{
		wcall(ir.WinRowNumber, -1, ir.DefaultFrame, i64),
	}})
	for _, tc := range []struct {
		name     string
		w        *planner.Window
		change   func(rows []*winTestRow) ([]*winTestRow, []Op)
		maxReads int
	}{
		{"append", bounded, func(rows []*winTestRow) ([]*winTestRow, []Op) {
			r := &winTestRow{id: 5000, o: types.DInt(5000), v: types.DInt(1), exists: true}
			return []*winTestRow{r}, []Op{Insert}
		}, 6},
		{"update value in the middle, sum unchanged", bounded, func(rows []*winTestRow) ([]*winTestRow, []Op) {
			a, b := *rows[2500], *rows[2501]
			a2, b2 := a, b
			a2.v, b2.v = types.DInt(a.v.I+1), types.DInt(b.v.I-1)
			return []*winTestRow{&a, &a2, &b, &b2}, []Op{UpdateDelete, UpdateInsert, UpdateDelete, UpdateInsert}
		}, 14},
		{"row_number after an insert in the middle", ranked, func(rows []*winTestRow) ([]*winTestRow, []Op) {
			r := &winTestRow{id: 5001, o: types.DInt(2500), v: types.DInt(1), exists: true}
			return []*winTestRow{r}, []Op{Insert}
		}, 2600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			ectx := &eval.Context{Mem: mem, Strict: true}
			store, err := state.Open(":memory:", state.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			w := *tc.w
			w.Table = 1
			op, err := NewOverWindow(mem, ectx, &w, store.Table(1), state.VNodes{})
			if err != nil {
				t.Fatal(err)
			}
			defer op.Close()
			discard := OutputFunc(func(_ context.Context, m Message) error { m.Release(); return nil })
			var rows []*winTestRow
			for i := int64(0); i < 5000; i++ {
				rows = append(rows, &winTestRow{id: i, o: types.DInt(i), v: types.DInt(i % 7), exists: true})
			}
			if err := op.OnBatch(context.Background(), winTestBatch(mem, rows, make([]Op, len(rows))), discard); err != nil {
				t.Fatal(err)
			}
			if err := op.OnBarrier(context.Background(), &barrier.Barrier{Epoch: 1}, discard); err != nil {
				t.Fatal(err)
			}
			batch, ops := tc.change(rows)
			if err := op.OnBatch(context.Background(), winTestBatch(mem, batch, ops), discard); err != nil {
				t.Fatal(err)
			}
			if err := op.OnBarrier(context.Background(), &barrier.Barrier{Epoch: 2}, discard); err != nil {
				t.Fatal(err)
			}
			if n := len(op.src.rows); n > tc.maxReads {
				t.Fatalf("read %d rows, want at most %d", n, tc.maxReads)
			}
		})
	}
}

// TestDatumStateRoundTrip checks the carried encoding of min, max and the
// value functions for short and long values.
func TestDatumStateRoundTrip(t *testing.T) {
	codec := state.NewRowCodec([]types.T{types.TextT})
	for _, d := range []types.Datum{types.Null, types.DText(""), types.DText("abc"), types.DText(strings.Repeat("x", 127)), types.DText(strings.Repeat("y", 300))} {
		buf := appendDatumState([]byte("prefix"), codec, d)
		buf = append(buf, "rest"...)
		got, rest, err := loadDatumState(buf[len("prefix"):], codec)
		if err != nil || got.Null != d.Null || got.S != d.S || string(rest) != "rest" {
			t.Fatalf("%+v: decoded %+v, rest %q, %v", d, got, rest, err)
		}
	}
}

// BenchmarkOverWindowAppend appends rows at the end of 100 partitions, 1000
// rows per barrier, under a running sum, row_number and a sliding count.
func BenchmarkOverWindowAppend(b *testing.B) {
	mem := memory.NewGoAllocator()
	ectx := &eval.Context{Mem: mem, Strict: true}
	store, err := state.Open(":memory:", state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	w := finishWindow(&planner.Window{
		PartitionCols: []int{colP}, PartitionTypes: []types.T{types.Int32T},
		Order: []planner.WindowOrder{{Col: colO, T: types.Int32T}},
		Calls: []planner.WindowCall{
			wcall(ir.AggSum, colV, ir.DefaultFrame, types.NumericT),
			wcall(ir.WinRowNumber, -1, ir.DefaultFrame, types.Int64T),
			wcall(ir.AggCountStar, -1, frame(ir.FrameRows, prec(intOff(5)), curRow, 0), types.Int64T),
		},
	})
	w.Table = 1
	op, err := NewOverWindow(mem, ectx, w, store.Table(1), state.VNodes{})
	if err != nil {
		b.Fatal(err)
	}
	discard := OutputFunc(func(_ context.Context, m Message) error { m.Release(); return nil })
	id := int64(0)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		rows := make([]*winTestRow, 1000)
		for i := range rows {
			rows[i] = &winTestRow{id: id, p: types.DInt(id % 100), o: types.DInt(id / 100), v: types.DInt(id % 7), d: types.Null, flag: types.Null}
			id++
		}
		if err := op.OnBatch(context.Background(), winTestBatch(mem, rows, make([]Op, len(rows))), discard); err != nil {
			b.Fatal(err)
		}
		if err := op.OnBarrier(context.Background(), &barrier.Barrier{Epoch: uint64(n + 1)}, discard); err != nil {
			b.Fatal(err)
		}
		if _, err := store.Commit(uint64(n + 1)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "rows/s")
}

// rowDiff renders the rows only one of two sorted lists has.
func rowDiff(got, want []string) string {
	var b strings.Builder
	for len(got) > 0 || len(want) > 0 {
		switch {
		case len(want) == 0 || len(got) > 0 && got[0] < want[0]:
			fmt.Fprintf(&b, "streaming only: %s\n", got[0])
			got = got[1:]
		case len(got) == 0 || want[0] < got[0]:
			fmt.Fprintf(&b, "batch only:     %s\n", want[0])
			want = want[1:]
		default:
			got, want = got[1:], want[1:]
		}
	}
	return b.String()
}
