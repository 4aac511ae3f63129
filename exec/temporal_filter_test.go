//go:build cgo

package exec

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// tfHarness runs a view with a temporal filter over table t, built with a
// chosen start time (the dataflow harness always starts at 0).
type tfHarness struct {
	*dataflowHarness
}

func newTFHarness(t *testing.T, mem *memory.CheckedAllocator, table, view string) *tfHarness {
	h := &tfHarness{&dataflowHarness{t: t, mem: mem}}
	if out := h.declareTable(t, table); out != "ok" {
		t.Fatal(out)
	}
	parsed, err := sql.Parse("CREATE MATERIALIZED VIEW v AS " + view)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sql.Bind(h.cat, parsed[0])
	if err != nil {
		t.Fatal(err)
	}
	if h.plan, err = planner.PlanStream(st.(*ir.CreateMaterializedView).Query); err != nil {
		t.Fatal(err)
	}
	return h
}

// build (re)builds the operators from the committed state, with now() at
// start until the first barrier.
func (h *tfHarness) build(start string) {
	if h.df != nil {
		h.df.Close()
	}
	env := Env{
		Mem:       h.mem,
		Eval:      &eval.Context{Mem: h.mem, Errors: &h.errs},
		Table:     func(slot int) *state.Table { return h.store.Table(state.TableID(101 + slot)) },
		StartTime: h.time(start),
	}
	var err error
	h.df, err = BuildStream(env, h.plan, ViewStorage{Rows: h.store.Table(100)}, OutputFunc(func(_ context.Context, m Message) error {
		switch {
		case m.Batch != nil:
			h.out = append(h.out, formatRows(m.Batch, planner.Types(h.plan.Root.Cols), true)...)
			m.Release()
		case m.Watermark != nil:
			c := h.plan.Root.Cols[m.Watermark.Column]
			h.out = append(h.out, "watermark "+c.Name+" "+types.DInt(m.Watermark.Value).Text(c.Type))
		}
		return nil
	}))
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *tfHarness) time(s string) int64 {
	if s == "" {
		return 0
	}
	d, err := types.ParseText(types.TimestampT, s)
	if err != nil {
		h.t.Fatal(err)
	}
	return d.I
}

// send feeds m and checks what the view emits.
func (h *tfHarness) send(m Message, want string) {
	h.t.Helper()
	if err := h.df.Heads[0].Emit(context.Background(), m); err != nil {
		h.t.Fatal(err)
	}
	if m.Barrier != nil {
		if _, err := h.store.Commit(m.Barrier.Epoch); err != nil {
			h.t.Fatal(err)
		}
	}
	if got := h.flushOutput(); got != want {
		h.t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func (h *tfHarness) batch(rows, want string) {
	h.t.Helper()
	b, err := h.parseBatch(h.inputs["t"], rows)
	if err != nil {
		h.t.Fatal(err)
	}
	h.send(Message{Batch: b}, want)
}

func (h *tfHarness) barrier(at, want string) {
	h.t.Helper()
	h.epoch++
	h.send(Message{Barrier: &barrier.Barrier{Epoch: h.epoch, Time: h.time(at)}}, want)
}

// TestTemporalFilterRestartKeepsTime: a temporal filter started at time T
// that saw no later barrier comes back after a restart at T, not at its new
// start time (0: the coordinator's time before its first barrier). At time
// 0 it took a row it had dropped as expired for a visible one, and an
// update of that row retracted a row the view never had. (Found by
// internal/difftest's TestEventTime.)
func TestTemporalFilterRestartKeepsTime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	h := newTFHarness(t, mem, "t (id int PRIMARY KEY, v int, ts timestamp)",
		"SELECT id, v FROM t WHERE ts + INTERVAL '5 seconds' > now()")
	defer h.close()
	const now = "2024-01-01 00:00:05"
	// Created at 00:00:05, which every barrier carries: row 2 has expired.
	h.build(now)
	h.batch("+ 1 10 2024-01-01_00:00:03.5\n+ 2 20 2023-12-31_23:59:45.25", "+ 1 10")
	h.barrier(now, "(no output)")
	h.build("")
	// Both rows updated before the first barrier after the restart: only
	// row 1 is in the view.
	h.batch("U- 1 10 2024-01-01_00:00:03.5\nU+ 1 11 2024-01-01_00:00:03.5\nU- 2 20 2023-12-31_23:59:45.25\nU+ 2 21 2023-12-31_23:59:45.25",
		"- 1 10\n+ 1 11")
	h.barrier(now, "(no output)")
}

// TestTemporalFilterWatermarkAfterTime: the filter forwards the epoch's
// watermark after the rows time moves at the barrier, which belong to the
// epoch: ahead of them, it made them late for a windowed aggregation
// downstream, and a window closing in that epoch kept a row the filter had
// retracted. (Found by internal/difftest's TestEventTime.)
func TestTemporalFilterWatermarkAfterTime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	h := newTFHarness(t, mem, "t (id int, ts timestamp, WATERMARK FOR ts AS ts)",
		"SELECT id, ts FROM t WHERE ts > now() - INTERVAL '3 seconds'")
	defer h.close()
	h.build("2024-01-01 00:00:10")
	h.batch("+ 1 2024-01-01_00:00:08.5 1", "+ 1 2024-01-01 00:00:08.5 1")
	h.send(Message{Watermark: &barrier.Watermark{Column: 1, Value: h.time("2024-01-01 00:00:08.5")}}, "(no output)")
	h.barrier("2024-01-01 00:00:10", "watermark ts 2024-01-01 00:00:08.5")
	h.batch("+ 2 2024-01-01_00:00:10 2", "+ 2 2024-01-01 00:00:10 2")
	h.send(Message{Watermark: &barrier.Watermark{Column: 1, Value: h.time("2024-01-01 00:00:10")}}, "(no output)")
	h.barrier("2024-01-01 00:00:11.6", "- 1 2024-01-01 00:00:08.5 1\nwatermark ts 2024-01-01 00:00:10")
}
