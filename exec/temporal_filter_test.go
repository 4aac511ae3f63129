package exec

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/barrier"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestTemporalFilterRestartKeepsTime: a temporal filter started at time T
// that saw no later barrier comes back after a restart at T, not at its new
// start time (0: the coordinator's time before its first barrier). At time
// 0 it took a row it had dropped as expired for a visible one, and an
// update of that row retracted a row the view never had. (Found by
// internal/difftest's TestEventTime.)
func TestTemporalFilterRestartKeepsTime(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	h := &dataflowHarness{t: t, mem: mem}
	defer h.close()
	if out := h.declareTable(t, "t (id int PRIMARY KEY, v int, ts timestamp)"); out != "ok" {
		t.Fatal(out)
	}
	parsed, err := sql.Parse("CREATE MATERIALIZED VIEW v AS SELECT id, v FROM t WHERE ts + INTERVAL '5 seconds' > now()")
	if err != nil {
		t.Fatal(err)
	}
	st, err := sql.Bind(h.cat, parsed[0])
	if err != nil {
		t.Fatal(err)
	}
	if h.plan, err = planner.PlanStream(st.(*sql.CreateMaterializedView).Query); err != nil {
		t.Fatal(err)
	}
	now, err := types.ParseText(types.TimestampT, "2024-01-01 00:00:05")
	if err != nil {
		t.Fatal(err)
	}
	build := func(start int64) {
		env := Env{
			Mem:       mem,
			Eval:      &eval.Context{Mem: mem, Errors: &h.errs},
			Table:     func(slot int) *state.Table { return h.store.Table(state.TableID(101 + slot)) },
			StartTime: start,
		}
		h.df, err = BuildStream(env, h.plan, h.store.Table(100), OutputFunc(func(_ context.Context, m Message) error {
			if m.Batch != nil {
				h.out = append(h.out, formatRows(m.Batch, planner.Types(h.plan.Root.Cols), true)...)
				m.Release()
			}
			return nil
		}))
		if err != nil {
			t.Fatal(err)
		}
	}
	step := func(rows string, want string) {
		t.Helper()
		if rows != "" {
			b, err := h.parseBatch(h.inputs["t"], rows)
			if err != nil {
				t.Fatal(err)
			}
			if err := h.df.Heads[0].Emit(context.Background(), Message{Batch: b}); err != nil {
				t.Fatal(err)
			}
		} else {
			h.epoch++
			if err := h.df.Heads[0].Emit(context.Background(), Message{Barrier: &barrier.Barrier{Epoch: h.epoch, Time: now.I}}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.store.Commit(h.epoch); err != nil {
				t.Fatal(err)
			}
		}
		if got := h.flushOutput(); got != want {
			t.Fatalf("got\n%s\nwant\n%s", got, want)
		}
	}

	// Created at 00:00:05, which every barrier carries: row 2 has expired.
	build(now.I)
	step("+ 1 10 2024-01-01_00:00:03.5\n+ 2 20 2023-12-31_23:59:45.25", "+ 1 10")
	step("", "(no output)")
	h.df.Close()
	build(0)
	// Both rows updated before the first barrier after the restart: only
	// row 1 is in the view.
	step("U- 1 10 2024-01-01_00:00:03.5\nU+ 1 11 2024-01-01_00:00:03.5\nU- 2 20 2023-12-31_23:59:45.25\nU+ 2 21 2023-12-31_23:59:45.25",
		"- 1 10\n+ 1 11")
	step("", "(no output)")
}
