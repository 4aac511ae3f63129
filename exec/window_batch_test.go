//go:build cgo

package exec

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/streamsql/streamsql/exec/eval"
	"github.com/streamsql/streamsql/ir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// TestWindowIgnoreNulls checks lag, lead, first_value, last_value and
// nth_value with IGNORE NULLS (which PostgreSQL's grammar cannot express)
// against values worked out by hand.
func TestWindowIgnoreNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	i64 := types.Int64T
	ignore := func(c planner.WindowCall) planner.WindowCall { c.IgnoreNulls = true; return c }
	w := finishWindow(&planner.Window{
		Order: []planner.WindowOrder{{Col: colID, T: types.Int64T}},
		Calls: []planner.WindowCall{
			ignore(withParam(wcall(ir.WinLag, colV, ir.DefaultFrame, i64), 1)),
			ignore(withParam(wcall(ir.WinLead, colV, ir.DefaultFrame, i64), 1)),
			ignore(withParam(wcall(ir.WinLag, colV, ir.DefaultFrame, i64), 2)),
			ignore(wcall(ir.WinFirstValue, colV, ir.DefaultFrame, i64)),
			ignore(wcall(ir.WinLastValue, colV, frame(ir.FrameRows, prec(intOff(1)), curRow, 0), i64)),
			ignore(withParam(wcall(ir.WinNthValue, colV, frame(ir.FrameRows, unbPrec, unbFoll, 0), i64), 2)),
		},
	})
	var rows []*winTestRow
	for i, v := range []types.Datum{types.Null, types.DInt(10), types.Null, types.Null, types.DInt(20), types.DInt(30), types.Null} {
		rows = append(rows, &winTestRow{id: int64(i + 1), p: types.Null, o: types.Null, v: v, d: types.Null, flag: types.Null, exists: true})
	}
	got := batchWindow(t, mem, &eval.Context{Mem: mem, Strict: true}, w, rows)
	// id, p, o, v, d, flag, then: lag 1, lead 1, lag 2, first_value,
	// last_value over the row and the one before, nth_value 2.
	want := []string{
		"1 NULL NULL NULL NULL NULL NULL 10 NULL NULL NULL 20",
		"2 NULL NULL 10 NULL NULL NULL 20 NULL 10 10 20",
		"3 NULL NULL NULL NULL NULL 10 20 NULL 10 10 20",
		"4 NULL NULL NULL NULL NULL 10 20 NULL 10 NULL 20",
		"5 NULL NULL 20 NULL NULL 10 30 NULL 10 20 20",
		"6 NULL NULL 30 NULL NULL 20 NULL 10 10 30 20",
		"7 NULL NULL NULL NULL NULL 30 NULL 20 10 30 20",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
